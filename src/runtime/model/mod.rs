//! The object model, the lowest layer of the core: reference-counted
//! objects and their allocation, `Any` values, strings and bytes, errors and
//! the boundary that raises them, the type table and type ancestry, stack
//! depth limits, backtraces. It uses only `abi`.
// Layers, lowest first: address_map bytes lineage object os std_hash symbolize unlocked_once, error unwind, allocator any backtrace stack, boundary init_once string type_table.

pub(crate) mod address_map;
pub mod allocator;
pub mod any;
pub mod backtrace;
pub mod boundary;
pub mod bytes;
pub mod error;
pub mod init_once;
pub mod lineage;
pub mod object;
pub mod os;
pub mod stack;
pub mod std_hash;
pub mod string;
mod symbolize;
pub mod type_table;
pub mod unlocked_once;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod unwind;
