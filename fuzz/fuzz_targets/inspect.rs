//! Any bytes as a shared library or object file: `inspect` (the ELF/object
//! reader behind `ffi.InspectFile`) returns a summary or an error, never a
//! panic, and never reads outside the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tvm_ffi::module::inspect::inspect;

fuzz_target!(|data: &[u8]| {
    let _ = inspect(data);
});
