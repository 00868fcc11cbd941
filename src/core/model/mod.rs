//! The object model: reference-counted objects, `Any`, strings and bytes,
//! errors and the boundary that raises them, the type table, stack depth and
//! backtraces. It uses only `abi`.

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
pub mod stack;
pub mod string;
pub mod type_table;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod unwind;
