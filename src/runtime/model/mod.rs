//! The object model, the lowest layer of the core: reference-counted
//! objects and their allocation, `Any` values, strings and bytes, errors and
//! the boundary that raises them, the type table and type ancestry, and
//! how deep the recursive walks may go. It uses `abi` and `platform`.
// Layers, lowest first: bytes lineage object std_hash, error, allocator any stack, boundary init_once string type_table.

pub mod allocator;
pub mod any;
pub mod boundary;
pub mod bytes;
pub mod depth;
pub mod error;
pub mod init_once;
pub mod lineage;
pub mod object;
pub mod std_hash;
pub mod string;
pub mod type_table;
