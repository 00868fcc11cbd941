//! Any bytes as the files of a Triton cache entry: the metadata reader
//! (`triton_cache::parse_metadata`, through the JSON parser, with every
//! field bounded) and the signature reader (`parse_signature`, the
//! `tt.func` line split at top-level commas) return an answer or an error,
//! never a panic. Input starting `REPEAT` + a little-endian u32 `n` is its
//! rest (at most 64 bytes) repeated `n` times (at most 200,000): a
//! parameter list of 200,000 entries or brackets nested as deep, read in
//! linear time.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod repeat;
use tvm_ffi::module::triton_cache;

fuzz_target!(|data: &[u8]| {
    let data = &*repeat::expand(data, b"tt.func @k(");
    if let Ok(meta) = triton_cache::parse_metadata(data) {
        assert!(!meta.release().is_empty());
        assert!(meta.num_warps >= 1 && meta.num_warps <= 32);
        if let Some(dims) = meta.cluster_dims {
            assert!(dims.iter().all(|&d| d >= 1) && dims.iter().product::<u32>() <= 16);
        }
    }
    if let Ok(sig) = triton_cache::parse_signature(data) {
        assert!(!sig.name.is_empty());
    }
});
