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
use tvm_ffi::module::triton_cache;

fuzz_target!(|data: &[u8]| {
    let repeated;
    let data = match data.strip_prefix(b"REPEAT") {
        Some(rest) if rest.len() >= 4 && rest.len() <= 68 => {
            let n = u32::from_le_bytes(rest[..4].try_into().unwrap()).min(200_000);
            repeated = [&b"tt.func @k("[..], &rest[4..].repeat(n as usize)].concat();
            &repeated[..]
        }
        _ => data,
    };
    if let Ok(meta) = triton_cache::parse_metadata(data) {
        let _ = meta.check_release();
        assert!(meta.num_warps >= 1 && meta.num_warps <= 32);
    }
    if let Ok(sig) = triton_cache::parse_signature(data) {
        assert!(!sig.name.is_empty());
    }
});
