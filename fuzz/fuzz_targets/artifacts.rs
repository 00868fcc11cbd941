//! Any bytes as each artifact container: the constants (params) format, the
//! artifact set record and a Model Library Format tarball. Each gives a
//! value or an error, never a panic, a hang or a read out of bounds; what
//! decodes re-encodes to bytes that decode the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tvm_ffi::module::{artifact::mlf, artifact::params, artifact::set_record};

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = params::decode(data) {
        for e in &entries {
            assert!(e.offset + e.size <= data.len() as u64);
        }
    }
    if let Ok(set) = set_record::decode(data) {
        let again = set_record::encode(&set).expect("a decoded set encodes");
        let back = set_record::decode(&again).expect("and decodes again");
        assert_eq!(back.artifacts().len(), set.artifacts().len());
    }
    if let Ok(set) = mlf::import(data) {
        let again = mlf::export(&set).expect("an imported set exports");
        assert_eq!(
            mlf::import(&again)
                .expect("and imports again")
                .artifacts()
                .len(),
            set.artifacts().len()
        );
    }
});
