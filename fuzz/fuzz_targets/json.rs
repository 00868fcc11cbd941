//! Any bytes as JSON: a value or an error, never a panic or a stack
//! overflow; a parsed value stringifies to text that parses again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tvm_ffi::runtime::json::{parse, stringify};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = parse(data) {
        let text = stringify(value.view(), 0).expect("a parsed value stringifies");
        parse(text.as_bytes()).expect("stringified JSON parses");
    }
});
