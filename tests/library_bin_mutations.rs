//! A bounded, deterministic mutation run over the library_bin parser (the
//! coverage-guided target is `fuzz/fuzz_targets/library_bin.rs`): no input
//! may panic, hang or allocate beyond what the blob justifies, and every
//! successful parse must re-encode to a blob that parses the same.

use tvm_ffi::module::library_bin::{LIB_KIND, LibraryBin, ModuleEntry, parse, write};

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mk = |modules: Vec<ModuleEntry<'static>>, imports| {
        write(&LibraryBin { modules, imports }).unwrap()
    };
    vec![
        mk(
            vec![ModuleEntry {
                kind: LIB_KIND,
                payload: None,
            }],
            vec![vec![]],
        ),
        mk(
            vec![
                ModuleEntry {
                    kind: LIB_KIND,
                    payload: None,
                },
                ModuleEntry {
                    kind: b"cuda",
                    payload: Some(b"cubin"),
                },
                ModuleEntry {
                    kind: b"graph",
                    payload: Some(b"{\"nodes\": []}"),
                },
            ],
            vec![vec![1, 2], vec![2], vec![]],
        ),
    ]
}

#[test]
fn mutated_blobs_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let seeds = seeds();
    for round in 0..200_000u32 {
        let mut blob = seeds[round as usize % seeds.len()].clone();
        for _ in 0..1 + rng.next() % 4 {
            let pos = (rng.next() as usize) % blob.len();
            match rng.next() % 5 {
                0 => blob[pos] ^= 1 << (rng.next() % 8),
                1 => blob[pos] = rng.next() as u8,
                2 => blob.truncate(pos),
                3 => {
                    // Overwrite an aligned word with an extreme value.
                    let at = pos & !7;
                    if at + 8 <= blob.len() {
                        let v = [u64::MAX, u64::MAX / 2, 1 << 40, 0, rng.next()]
                            [(rng.next() % 5) as usize];
                        blob[at..at + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
                _ => blob.insert(pos, rng.next() as u8),
            }
            if blob.is_empty() {
                break;
            }
        }
        if let Ok(tree) = parse(&blob) {
            let again = write(&tree).expect("a parsed tree re-encodes");
            assert_eq!(parse(&again).unwrap(), tree, "round {round}");
        }
    }
}
