//! The ground floor: what differs between operating systems. One folder
//! per concern with one file per system in it (the choice of file is made
//! in the folder's `mod.rs`): the OS calls (`os`), the thread's stack
//! (`stack`), who else can change a path and private directories
//! (`trust`), mapping and reading a shared-object image (`image`), the
//! soname stub's writer (`soname_stub`), how a library file reaches the
//! system loader (`loader`), and backtraces: walking, unwinding and
//! symbolizing (`backtrace`). With them the small tools they share: maps
//! keyed by address, a once that holds no lock while it runs, panic
//! containment for C callbacks, static initialisers (`at_load`).
//!
//! It names no layer above it: a failure leaves it as a
//! [`Failure`](failure::Failure), which the runtime's `Error` takes, and
//! what it needs from above (the ABI's exports) the crate root composes.
// Layers, lowest first: address_map at_load failure os panic unlocked_once, stack trust, image soname_stub, backtrace loader.

pub(crate) mod address_map;
pub(crate) mod at_load;
pub mod backtrace;
pub mod failure;
pub(crate) mod image;
pub(crate) mod loader;
pub mod os;
pub mod panic;
#[cfg(target_os = "linux")]
pub(crate) mod soname_stub;
pub mod stack;
pub(crate) mod trust;
pub mod unlocked_once;
