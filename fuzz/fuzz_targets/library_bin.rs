//! Any bytes: the parser returns a tree or an error, never panics; a tree
//! re-encodes to a blob that parses back to the same tree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tvm_ffi::module::library_bin::{parse, write};

fuzz_target!(|data: &[u8]| {
    if let Ok(tree) = parse(data) {
        let again = write(&tree).expect("a parsed tree re-encodes");
        assert_eq!(parse(&again).expect("re-encoded blob parses"), tree);
    }
});
