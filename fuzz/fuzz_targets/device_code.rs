//! Any bytes as device code and as TVM's serialized CUDA module: the blob
//! reader (`cuda_blob::decode`), the format sniffer and kernel lister
//! (`device_code::list`: ELF cubins, fatbins, PTX, CUDA source) and the
//! inspector's description return an answer or an error, never a panic,
//! never reading outside the bytes or allocating what a header claims; a
//! blob that decodes writes back to the same bytes. Input starting
//! `REPEAT` + a little-endian u32 `n` is its rest (at most 64 bytes)
//! repeated `n` times (at most 200,000): the shapes of 200,000 kernels
//! (declarations, table entries, symbols), which the parsers read in
//! linear time.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod repeat;
use tvm_ffi::module::{cuda_blob, device_code};

fuzz_target!(|data: &[u8]| {
    let data = &*repeat::expand(data, b"");
    if let Ok(blob) = cuda_blob::decode(data) {
        assert_eq!(cuda_blob::encode(&blob), data);
    }
    let _ = device_code::list(data);
    let _ = device_code::describe_cuda_blob(data);
});
