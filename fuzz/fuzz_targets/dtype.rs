//! Any bytes as a dtype string: a dtype or an error, never a panic. A parsed
//! dtype prints; when the printed string parses again, it prints the same.
//! (It need not parse again, as in the reference: `handle` prints without
//! its bits and lanes, and lanes above 32767 print as a scalable vector,
//! which a float type does not accept.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use tvm_ffi::runtime::dtype::{from_string, to_string};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = from_string(data).and_then(to_string) {
        if let Ok(again) = from_string(text.as_bytes()) {
            assert_eq!(to_string(again).expect("prints again"), text);
        }
    }
});
