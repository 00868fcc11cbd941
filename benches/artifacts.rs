//! Criterion benchmarks of artifact sets: a set of 1,000 artifacts carrying
//! 256 MiB of constants (`TVM_FFI_BENCH_CONSTANTS_MIB` changes the size)
//! written as the record embedded in exported libraries and as a Model
//! Library Format tarball, and read back (copied and verified) or viewed in
//! place (as when an exported library is loaded). The peak memory of
//! loading such a library is measured by `c-tests/bench/artifact_memory.c`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tvm_ffi::module::artifact::set::{Artifact, ArtifactSet};
use tvm_ffi::module::{artifact::mlf, artifact::set_record};

/// 999 small artifacts (1 KiB each) and one constants artifact of `mib` MiB.
fn sample_set(mib: usize) -> ArtifactSet {
    let mut artifacts = Vec::with_capacity(1000);
    let part = vec![b'x'; 1024];
    for i in 0..999 {
        artifacts.push(
            Artifact::builder("parts", "bench", &format!("part{i:04}.bin"))
                .content(&part)
                .build()
                .expect("an artifact"),
        );
    }
    let constants = vec![0u8; mib << 20];
    artifacts.push(
        Artifact::builder("kern", "constants", "weights.params")
            .content(&constants)
            .format("params")
            .build()
            .expect("the constants"),
    );
    ArtifactSet::new(artifacts, None).expect("a set")
}

fn sets(c: &mut Criterion) {
    let mib = std::env::var("TVM_FFI_BENCH_CONSTANTS_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let set = sample_set(mib);
    let record = set_record::encode(&set).expect("a record");
    // Viewing in place needs bytes that live for good, as a loaded image does.
    let image: &'static [u8] = Box::leak(record.clone().into_boxed_slice());
    let tar = mlf::export(&set).expect("a tarball");
    let mut g = c.benchmark_group(format!("artifact_set_1000_{mib}MiB"));
    g.sample_size(10);
    g.bench_function("record/write", |b| {
        b.iter(|| black_box(set_record::encode(&set).unwrap()))
    });
    g.bench_function("record/read_copied_verified", |b| {
        b.iter(|| black_box(set_record::decode(&record).unwrap()))
    });
    g.bench_function("record/view_in_image", |b| {
        b.iter(|| black_box(set_record::decode_in_image(image).unwrap()))
    });
    g.bench_function("mlf/write", |b| {
        b.iter(|| black_box(mlf::export(&set).unwrap()))
    });
    g.bench_function("mlf/read", |b| {
        b.iter(|| black_box(mlf::import(&tar).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, sets);
criterion_main!(benches);
