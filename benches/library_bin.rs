//! Parsing `__tvm_ffi__library_bin` against copying the same bytes: the
//! parser borrows payloads, so it should beat a memcpy of the blob.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tvm_ffi::module::library_bin::{LIB_KIND, LibraryBin, ModuleEntry, parse, write};

fn bench(c: &mut Criterion) {
    let big = vec![0xabu8; 64 << 20];
    let small = vec![1u8; 256];
    let mut modules = vec![ModuleEntry {
        kind: LIB_KIND,
        payload: None,
    }];
    let mut imports = vec![(1..1000).collect::<Vec<usize>>()];
    for i in 1..1000 {
        let payload: &[u8] = if i == 1 { &big } else { &small };
        modules.push(ModuleEntry {
            kind: b"kernel",
            payload: Some(payload),
        });
        imports.push(Vec::new());
    }
    let blob = write(&LibraryBin { modules, imports }).unwrap();
    let mut group = c.benchmark_group("library_bin_64MiB_1000_modules");
    group.throughput(Throughput::Bytes(blob.len() as u64));
    group.sample_size(20);
    group.bench_function("parse", |b| {
        b.iter(|| black_box(parse(black_box(&blob)).unwrap().modules.len()))
    });
    group.bench_function("memcpy", |b| {
        b.iter(|| black_box(black_box(&blob).to_vec()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
