//! Any bytes as a dtype string: a dtype or an error, never a panic. A parsed
//! dtype prints to a string that parses and prints back to the same string
//! (not always the same dtype: like the reference, `handle` prints without
//! its bits and lanes, and one scalable lane without its `xvscalex1`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tvm_ffi::core::dtype::{from_string, to_string};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = from_string(data).and_then(to_string) {
        let again = from_string(text.as_bytes()).expect("a printed dtype parses");
        assert_eq!(to_string(again).expect("prints again"), text);
    }
});
