//! The calling thread's own stack, as the system reports it: where it
//! lies, and whether it is the process's initial (main) stack.

#[cfg(not(any(target_os = "linux", windows)))]
mod elsewhere;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(windows)]
mod windows;

#[cfg(not(any(target_os = "linux", windows)))]
use elsewhere as system;
#[cfg(target_os = "linux")]
use linux as system;
#[cfg(windows)]
use windows as system;

/// The lowest address and the size of the calling thread's own stack (not
/// a segment a walk moved to), where the system tells.
pub fn own_stack() -> Option<(usize, usize)> {
    system::own_stack()
}

/// Whether the calling thread runs on the process's initial stack (see
/// `linux.rs`).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub fn on_initial_stack() -> bool {
    system::on_initial_stack()
}
