//! Device code with our library alone, on the libraries apache-tvm 0.27
//! exported (`tests/data/tvm`, made by `tests/tools/export-tvm-libraries.sh`):
//! CUDA modules in every format load, inspect and write back byte for byte
//! without a driver; kernels launch through a fake driver
//! (`tests/data/fake_cuda.c`: host memory, the test kernels emulated)
//! with TVM's calling convention, from the kernels themselves and from
//! TVM's host code; the CPU libraries (a parallel loop, a workspace, a
//! packed call) give NumPy's answers; hostile blobs get errors; CUDA
//! artifacts load, export as a library and as Model Library Format, and
//! read back. The official library loads none of these (see
//! docs/device.md).
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod common;

use std::path::{Path, PathBuf};
use tvm_ffi::abi::*;
use tvm_ffi::module::{inspect, library_bin};
use tvm_ffi::runtime::registry::{Registration, get_global, set_global};
use tvm_ffi::runtime::{Any, Function, TextKind, make_text};

const CUDA_LIBRARIES: [&str; 6] = [
    "cuda_cubin",
    "cuda_fatbin",
    "cuda_ptx",
    "cuda_nvptx",
    "cuda_source",
    "cuda_dyn_shared",
];

/// The TVM releases whose exported libraries are fixtures, by the folder
/// under tests/data/tvm holding them ("" is 0.27's, the folder itself).
const RELEASES: [&str; 2] = ["", "0.25"];

/// Fixture `name` of `release` (one of [`RELEASES`]).
fn data_of(release: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tvm")
        .join(release)
        .join(format!("{name}.so"))
}

/// Fixture `name` of the release `TVM_RELEASE` names (in a child), else 0.27's.
fn data(name: &str) -> PathBuf {
    data_of(&std::env::var("TVM_RELEASE").unwrap_or_default(), name)
}

fn text(s: &str) -> Any {
    make_text(s.as_bytes(), TextKind::Str)
}

fn call(name: &str, args: &[&Any]) -> tvm_ffi::runtime::Result<Any> {
    let f = get_global(name.as_bytes()).unwrap_or_else(|| panic!("{name} is registered"));
    let views: Vec<_> = args.iter().map(|a| a.view()).collect();
    f.call(&views)
}

fn load(path: &Path) -> tvm_ffi::module::Module {
    tvm_ffi::module::load_from_file(path.to_str().unwrap().as_bytes()).unwrap()
}

/// The `cuda` payload embedded in a library file.
fn cuda_payload(path: &Path) -> Vec<u8> {
    let file = std::fs::read(path).unwrap();
    let blob = inspect::embedded_library_bin(&file).unwrap().unwrap();
    let tree = library_bin::parse(blob).unwrap();
    let entry = tree.modules.iter().find(|m| m.kind == b"cuda").unwrap();
    entry.payload.unwrap().to_vec()
}

/// The function `name` of `module` (imports included).
fn function(module: &tvm_ffi::module::Module, name: &str) -> Function {
    module
        .get_function_named(&text(name), true)
        .unwrap()
        .unwrap_or_else(|| panic!("{name}"))
}

/// A float32 tensor over `data` on `device_type` (never freed).
fn tensor(data: &mut [f32], device_type: i32) -> Any {
    common::tensor_at(
        data.as_mut_ptr().cast(),
        data.len() as i64,
        (kDLFloat as u8, 32),
        device_type,
    )
}

#[test]
fn every_cuda_library_loads_inspects_and_writes_back_byte_for_byte() {
    let dir = common::workdir("device_code", "write_back");
    for (release, name) in RELEASES
        .iter()
        .flat_map(|r| CUDA_LIBRARIES.map(|n| (*r, n)))
    {
        let path = data_of(release, name);
        let m = load(&path);
        let imports = m.imports();
        assert_eq!(imports.len(), 1, "{release} {name}");
        assert_eq!(imports[0].kind_name().unwrap(), "cuda", "{release} {name}");
        // The whole tree written back: the cuda entry is TVM's bytes.
        let out = dir.join(format!("{release}{name}.library_bin"));
        call(
            "ffi.ModuleWriteToFile",
            &[
                &Any::from(m.into_object()),
                &text(out.to_str().unwrap()),
                &text("library_bin"),
            ],
        )
        .unwrap();
        let written = std::fs::read(&out).unwrap();
        let tree = library_bin::parse(&written).unwrap();
        let entry = tree.modules.iter().find(|e| e.kind == b"cuda").unwrap();
        assert_eq!(
            entry.payload.unwrap(),
            cuda_payload(&path),
            "{release} {name} round trip"
        );
    }
}

#[test]
fn the_inspector_lists_kernels_and_reports_mismatches() {
    let lines = |name: &str| -> Vec<String> {
        let file = std::fs::read(data(name)).unwrap();
        let found = inspect::inspect(&file).unwrap();
        found
            .library_bin
            .unwrap()
            .into_iter()
            .flat_map(|m| m.detail)
            .collect()
    };
    assert_eq!(
        lines("cuda_fatbin"),
        [
            "code: fatbin (recorded as \"cubin\"), 5424 bytes, 2 kernel(s)",
            "kernel add_one_kernel(void*, void*; grid.x, block.x)",
            "kernel scale_n_kernel(void*, void*, int32_t; grid.x, block.x)",
        ]
    );
    assert_eq!(
        lines("cuda_dyn_shared")[1],
        "kernel shared_reverse_kernel(void*, void*, int32_t; grid.x, block.x, dyn_shared_memory_bytes)"
    );
    let nvptx = lines("cuda_nvptx");
    assert!(
        nvptx[1].ends_with(
            "MISMATCH: kernel add_one_kernel: the ptx code declares it a device function (.func), \
             not a kernel entry (.entry): no runtime can launch it"
        ),
        "{nvptx:?}"
    );
    assert_eq!(
        lines("cuda_source")[0],
        "code: CUDA source (compiled with NVRTC at first use), 2326 bytes, 2 kernel(s)"
    );
    // The same through ffi.InspectFile: the cuda row's fourth element.
    let found = call(
        "ffi.InspectFile",
        &[&text(data("cuda_ptx").to_str().unwrap())],
    )
    .unwrap();
    let repr = tvm_ffi::runtime::json::stringify(found.view(), 0).unwrap();
    assert!(
        repr.contains("kernel scale_n_kernel(void*, void*, int32_t; grid.x, block.x)"),
        "{repr}"
    );
}

#[test]
fn hostile_cuda_blobs_are_errors() {
    let payload = cuda_payload(&data("cuda_ptx"));
    let load_bytes = |b: &[u8]| {
        call(
            "ffi.Module.load_from_bytes.cuda",
            &[&make_text(b, TextKind::Bytes)],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    assert_eq!(load_bytes(&payload), Ok(()));
    // Cut anywhere (every 97th byte, and every byte of the header).
    for n in (0..payload.len()).step_by(97).chain(0..200) {
        assert!(load_bytes(&payload[..n]).is_err(), "cut at {n}");
    }
    // The code's length one byte past the end.
    let code_len_at = payload.len() - 28398 - 8;
    let mut long = payload.clone();
    long[code_len_at..code_len_at + 8].copy_from_slice(&28399u64.to_le_bytes());
    assert_eq!(
        load_bytes(&long).unwrap_err(),
        format!(
            "ValueError: CUDA module blob cut short: the code needs 28399 bytes at offset {}, 28398 left",
            code_len_at + 8
        )
    );
    // Lengths and counts of 2^40 and more allocate nothing.
    for at in [0, 11, 19] {
        for huge in [1u64 << 40, u64::MAX] {
            let mut b = payload.clone();
            b[at..at + 8].copy_from_slice(&huge.to_le_bytes());
            assert!(load_bytes(&b).is_err(), "{at} {huge}");
        }
    }
    // Both spellings of the flag tags load; an unknown tag is named.
    let mut blob = tvm_ffi::module::cuda_blob::decode(&payload).unwrap();
    blob.functions[0]
        .1
        .launch_param_tags
        .push("tir.use_dyn_shared_memory".into());
    assert_eq!(
        load_bytes(&tvm_ffi::module::cuda_blob::encode(&blob)),
        Ok(())
    );
    // A kernel no launch can take (an unknown tag, a float16 scalar) is
    // refused when it is looked up, as TVM does, not at load: the module
    // and its other kernels stay usable.
    blob.functions[0].1.launch_param_tags.pop();
    let mut second = blob.functions[0].clone();
    second.0 = "second".into();
    blob.functions.push(second);
    let lookup = |blob: &tvm_ffi::module::cuda_blob::CudaBlob, name: &str| {
        let bytes = tvm_ffi::module::cuda_blob::encode(blob);
        let m = call(
            "ffi.Module.load_from_bytes.cuda",
            &[&make_text(&bytes, TextKind::Bytes)],
        )
        .expect("the module loads");
        call(
            "ffi.ModuleGetFunction",
            &[&m, &text(name), &Any::from(false)],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let mut tagged = blob.clone();
    tagged.functions[0]
        .1
        .launch_param_tags
        .push("warpIdx.x".into());
    let e = lookup(&tagged, &tagged.functions[0].0.clone()).unwrap_err();
    assert!(e.contains("unknown launch tag \"warpIdx.x\""), "{e}");
    assert_eq!(lookup(&tagged, "second"), Ok(()));
    let mut half = blob.clone();
    half.functions[0].1.arg_types[0] = DLDataType {
        code: 2,
        bits: 16,
        lanes: 1,
    };
    let e = lookup(&half, &half.functions[0].0.clone()).unwrap_err();
    assert!(e.contains("argument 0 has type float16"), "{e}");
    assert_eq!(lookup(&half, "second"), Ok(()));
}

fn fake_driver() -> PathBuf {
    common::fake_cuda_driver("device_code")
}

/// Runs `case` of the probe below with the fake driver; its log lines
/// follow the answer.
fn with_fake_driver(case: &str, extra: &[(&str, &Path)]) -> (String, Vec<String>) {
    let dir = fake_driver();
    let log = dir.join(format!("{case}.log"));
    let _ = std::fs::remove_file(&log);
    let mut env = vec![
        ("LD_LIBRARY_PATH", dir.as_path()),
        ("FAKE_CUDA_LOG", log.as_path()),
    ];
    env.extend_from_slice(extra);
    let out = common::in_child("device_probe", case, b"", &env);
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    (out, lines.lines().map(str::to_owned).collect())
}

/// Launches `add_one_kernel` of `m` on `a` into `b` (8 blocks of 128
/// threads): whether `b` is `a + 1`, or the error.
fn add_one_kernel(m: &tvm_ffi::module::Module, a: &[f32], b: &mut [f32]) -> Result<bool, String> {
    b.fill(0.0);
    let k = function(m, "add_one_kernel");
    let args = [
        Any::from(a.as_ptr() as i64),
        Any::from(b.as_ptr() as i64),
        Any::from(8i64),
        Any::from(128i64),
    ];
    let views: Vec<_> = args.iter().map(|a| a.view()).collect();
    k.call(&views).map_err(|e| e.to_string())?;
    Ok(b.iter().zip(a).all(|(y, x)| *y == x + 1.0))
}

/// What one case does in the child (see the tests that start it).
fn probe_case(case: &str) -> String {
    let n = 1024usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut b = vec![0f32; n];
    let addr = |v: &[f32]| Any::from(v.as_ptr() as i64);
    let run = |f: &Function, args: &[Any]| -> Result<(), String> {
        let views: Vec<_> = args.iter().map(|a| a.view()).collect();
        f.call(&views).map(|_| ()).map_err(|e| e.to_string())
    };
    match case {
        "kernels" => {
            let mut out = Vec::new();
            for lib in ["cuda_cubin", "cuda_fatbin", "cuda_ptx"] {
                let m = load(&data(lib));
                let add_ok = add_one_kernel(&m, &a, &mut b).unwrap();
                let k = function(&m, "scale_n_kernel");
                run(
                    &k,
                    &[
                        addr(&a),
                        addr(&b),
                        Any::from(100i64),
                        Any::from(2i64),
                        Any::from(64i64),
                    ],
                )
                .unwrap();
                let scale_ok = (0..100).all(|i| b[i] == a[i] * 3.0) && b[100] == a[100] + 1.0;
                // TVM's host code: CUDA tensors in, __tvm_set_device, the
                // kernel through __TVMFFIEnvModLookupFromImports.
                b.fill(0.0);
                let host = function(&m, "add_one");
                let mut a2 = a.clone();
                run(&host, &[tensor(&mut a2, kDLCUDA), tensor(&mut b, kDLCUDA)]).unwrap();
                let host_ok = b.iter().zip(&a).all(|(y, x)| *y == x + 1.0);
                out.push(format!("{lib} {add_ok} {scale_ok} {host_ok}"));
            }
            out.join(", ")
        }
        "missing_global" => {
            let m = load(&data("packed_call_cpu"));
            let mut a2 = a.clone();
            function(&m, "call_global")
                .call(&[
                    tensor(&mut a2, kDLCPU).view(),
                    tensor(&mut b, kDLCPU).view(),
                ])
                .unwrap_err()
                .to_string()
        }
        "reload" => {
            // The library caches the kernel's handle in its own variables:
            // a second load of the same file, after the first module went,
            // still finds a live function.
            let mut ok = Vec::new();
            for _ in 0..3 {
                let m = load(&data("cuda_cubin"));
                let host = function(&m, "add_one");
                b.fill(0.0);
                let mut a2 = a.clone();
                run(&host, &[tensor(&mut a2, kDLCUDA), tensor(&mut b, kDLCUDA)]).unwrap();
                ok.push(b.iter().zip(&a).all(|(y, x)| *y == x + 1.0).to_string());
            }
            ok.join(" ")
        }
        "dyn_shared" => {
            let m = load(&data("cuda_dyn_shared"));
            let k = function(&m, "shared_reverse_kernel");
            let args = |shared: i64| {
                vec![
                    addr(&a),
                    addr(&b),
                    Any::from(n as i64),
                    Any::from(1i64),
                    Any::from(256i64),
                    Any::from(shared),
                ]
            };
            run(&k, &args(1000)).unwrap();
            run(&k, &args(60000)).unwrap();
            run(&k, &args(50000)).unwrap();
            let reversed = (0..n).all(|i| b[i] == a[n - 1 - i]);
            let few = run(&k, &args(1)[..5]).unwrap_err();
            let float = run(
                &k,
                &[
                    addr(&a),
                    addr(&b),
                    Any::from(1.5f64),
                    Any::from(1i64),
                    Any::from(256i64),
                    Any::from(0i64),
                ],
            )
            .unwrap_err();
            let negative = run(&k, &args(-1)).unwrap_err();
            format!("{reversed} | {few} | {float} | {negative}")
        }
        "nvptx" => add_one_kernel(&load(&data("cuda_nvptx")), &a, &mut b).unwrap_err(),
        "source" => match add_one_kernel(&load(&data("cuda_source")), &a, &mut b) {
            Ok(ok) => format!("compiled {ok}"),
            Err(e) => e,
        },
        "no_driver" => add_one_kernel(&load(&data("cuda_ptx")), &a, &mut b).unwrap_err(),
        "workspace_cuda" => {
            let ws = get_global(b"__tvm_set_device").unwrap();
            ws.call(&[Any::from(2i64).view(), Any::from(1i64).view()])
                .unwrap();
            let bad = ws
                .call(&[Any::from(2i64).view(), Any::from(9i64).view()])
                .unwrap_err()
                .to_string();
            let other = ws
                .call(&[Any::from(4i64).view(), Any::from(0i64).view()])
                .unwrap_err()
                .to_string();
            format!("{bad} | {other}")
        }
        "artifacts" => {
            let payload = cuda_payload(&data("cuda_cubin"));
            let parts = call(
                "ffi.CUDAModuleToArtifacts",
                &[&text("tvm_cuda"), &make_text(&payload, TextKind::Bytes)],
            )
            .unwrap();
            let set = call("ffi.ArtifactSet", &[&parts, &Any::NONE]).unwrap();
            let m = call("ffi.ArtifactSetLoad", &[&set]).unwrap();
            let m = tvm_ffi::module::Module::from_object(m.view().to_object().unwrap()).unwrap();
            add_one_kernel(&m, &a, &mut b).unwrap().to_string()
        }
        "yielding" => {
            // A runtime registering the names as TVM does (no override).
            let f = Function::from_closure(|_| Ok(Any::from(7i64)));
            let mut out = Vec::new();
            for name in ["__tvm_set_device", "ffi.Module.load_from_bytes.cuda"] {
                let r = set_global(
                    name.as_bytes(),
                    f.clone(),
                    b"",
                    false,
                    Registration::MethodInfo,
                );
                let now = get_global(name.as_bytes()).unwrap().call(&[]).unwrap();
                out.push(format!(
                    "{name} {} {}",
                    r.is_ok(),
                    now.view().as_i64().unwrap()
                ));
            }
            let again = set_global(b"__tvm_set_device", f, b"", false, Registration::Function);
            out.push(format!("again {}", again.unwrap_err()));
            out.join(", ")
        }
        "large_shapes" => large_shapes(),
        "pool_threads" => {
            let ok = parallel_add_one(&load(&data("parallel_cpu")));
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let threads: usize = status
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            format!("{ok} {}", threads <= tvm_ffi_pool_max() + 2)
        }
        "fork_while_starting" => {
            // Another thread's first launch starts the workers while this
            // one forks after `HOSTILE_ARG` microseconds; the child's first
            // launch must finish (SIGALRM kills a hung one).
            let m = load(&data("parallel_cpu"));
            let delay: u64 = std::env::var("HOSTILE_ARG").unwrap().parse().unwrap();
            std::thread::scope(|s| {
                let starter = s.spawn(|| parallel_add_one(&m));
                let until = std::time::Instant::now() + std::time::Duration::from_micros(delay);
                while std::time::Instant::now() < until {
                    std::hint::spin_loop();
                }
                // SAFETY: the child only launches, then leaves with _exit.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    // SAFETY: arms a timer, then leaves without unwinding.
                    unsafe {
                        libc::alarm(20);
                        libc::_exit(if parallel_add_one(&m) { 0 } else { 1 });
                    }
                }
                let mut status = 0;
                // SAFETY: waits for the child forked above.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                let parent = starter.join().unwrap();
                format!("parent {parent}, child status {status}")
            })
        }
        "workspaces" => {
            // The library of `workspaces_are_stream_ordered_and_checked`.
            let m = load(Path::new(&std::env::var("WORKSPACE_LIB").unwrap()));
            let f = function(&m, "workspace");
            let mut out = Vec::new();
            for (device, case) in [
                (2i64, 0i64),
                (3, 0),
                (13, 0),
                (1, 1),
                (1, 2),
                (1, 3),
                (2, 4),
            ] {
                let args = [Any::from(device), Any::from(case)];
                let views: Vec<_> = args.iter().map(|a| a.view()).collect();
                out.push(match f.call(&views) {
                    Ok(_) => format!("{device}/{case}: ok"),
                    Err(e) => format!("{device}/{case}: {e}"),
                });
            }
            out.join("; ")
        }
        other => panic!("unknown case {other}"),
    }
}

/// A CUDA blob of `n` kernels over `code`, as TVM writes it (every kernel
/// takes one pointer, launched on `blockIdx.x`).
fn blob_of(n: usize, code: &[u8], name: impl Fn(usize) -> String) -> Vec<u8> {
    let mut out = Vec::new();
    let put = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    };
    put(&mut out, b"ptx");
    out.extend_from_slice(&(n as u64).to_le_bytes());
    for i in 0..n {
        let k = name(i);
        put(&mut out, k.as_bytes());
        put(&mut out, k.as_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&[3, 64, 1, 0]); // handle
        out.extend_from_slice(&1u64.to_le_bytes());
        put(&mut out, b"blockIdx.x");
        out.extend_from_slice(&0u64.to_le_bytes());
    }
    put(&mut out, code);
    out
}

/// A cubin (an ELF file) defining `n` kernel entries `k<i>`.
fn cubin_of(n: usize) -> Vec<u8> {
    use object::write::{Object, Symbol, SymbolSection};
    use object::{Architecture, BinaryFormat, Endianness, SectionKind, SymbolFlags, SymbolKind};
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let text = obj.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
    obj.append_section_data(text, &vec![0u8; n], 1);
    for i in 0..n {
        obj.add_symbol(Symbol {
            name: format!("k{i}").into_bytes(),
            value: i as u64,
            size: 1,
            kind: SymbolKind::Text,
            scope: object::SymbolScope::Dynamic,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::Elf {
                st_info: object::elf::SymbolInfo::new(
                    object::elf::STB_GLOBAL,
                    object::elf::STT_FUNC,
                ),
                st_other: object::elf::SymbolOther(0x10), // STO_CUDA_ENTRY
            },
        });
    }
    obj.write().unwrap()
}

/// 200,000 kernels in each shape a parser once took quadratic time over
/// (a blob's table, PTX `.entry` declarations, `__global__` functions) and
/// a cubin of 100,000 entries, loaded as modules and described: each
/// listing must be whole. Run in a child: one that runs past 60 s is a
/// hang.
fn large_shapes() -> String {
    let n = 200_000;
    let mut ptx = String::from(".version 8.0\n.target sm_90\n.address_size 64\n");
    let mut source = String::new();
    for i in 0..n {
        ptx += &format!(".visible .entry k{i}(\n\t.param .u64 k{i}_param_0\n)\n{{\n\tret;\n}}\n");
        source += &format!("extern \"C\" __global__ void k{i}(float* a) {{}}\n");
    }
    let mut out = Vec::new();
    for (what, code, kernels) in [
        ("ptx", ptx.into_bytes(), n),
        ("source", source.into_bytes(), n),
        ("cubin", cubin_of(100_000), 100_000),
    ] {
        let listing = tvm_ffi::module::device_code::list(&code).unwrap();
        let blob = blob_of(kernels, &code, |i| format!("k{i}"));
        let module = call(
            "ffi.Module.load_from_bytes.cuda",
            &[&make_text(&blob, TextKind::Bytes)],
        );
        let described = tvm_ffi::module::device_code::describe_cuda_blob(&blob);
        let mismatches = described.iter().filter(|l| l.contains("MISMATCH")).count();
        out.push(format!(
            "{what}: {} listed, module {}, {} described, {mismatches} mismatches",
            listing.kernels.len(),
            module.is_ok(),
            described.len() - 1
        ));
    }
    // A table listing the same name twice, at its end.
    let dup = blob_of(n, b".version 8.0\n.target sm_90\n", |i| {
        format!("k{}", i.min(n - 2))
    });
    out.push(
        tvm_ffi::module::cuda_blob::decode(&dup)
            .unwrap_err()
            .to_string(),
    );
    out.join("; ")
}

#[test]
fn two_hundred_thousand_kernels_load_and_inspect() {
    let out = common::in_child("device_probe", "large_shapes", b"", &[]);
    assert_eq!(
        out,
        "ptx: 200000 listed, module true, 200000 described, 0 mismatches; \
         source: 200000 listed, module true, 200000 described, 0 mismatches; \
         cubin: 100000 listed, module true, 100000 described, 0 mismatches; \
         ValueError: CUDA module blob: kernel \"k199998\" is listed twice"
    );
}

/// Runs `add_one_parallel` of the parallel CPU library: whether it answered
/// right.
fn parallel_add_one(m: &tvm_ffi::module::Module) -> bool {
    let mut a: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let mut b = vec![0f32; a.len()];
    let expected: Vec<f32> = a.iter().map(|x| x + 1.0).collect();
    let f = function(m, "add_one_parallel");
    let ok = f
        .call(&[tensor(&mut a, kDLCPU).view(), tensor(&mut b, kDLCPU).view()])
        .is_ok();
    ok && b == expected
}

/// The pool's documented maximum (docs/device.md).
fn tvm_ffi_pool_max() -> usize {
    1024
}

#[test]
fn any_thread_count_gives_a_bounded_pool() {
    for (var, value) in [
        ("TVM_NUM_THREADS", "4294967297"),
        ("TVM_NUM_THREADS", "18446744073709551615"),
        ("TVM_NUM_THREADS", "99999999999999999999999999"),
        ("OMP_NUM_THREADS", "1000000000"),
        ("TVM_NUM_THREADS", "-3"),
    ] {
        let out = common::in_child(
            "device_probe",
            "pool_threads",
            b"",
            &[(var, Path::new(value))],
        );
        assert_eq!(out, "true true", "{var}={value}");
    }
}

#[test]
fn a_child_forked_while_the_pool_starts_gets_a_pool() {
    if std::env::var_os("TVM_FFI_TEST_RUNNER").is_some() {
        // qemu-user aborts a child that starts threads after a fork from a
        // threaded parent (its own assertion, qemu_plugin_vcpu_init_hook).
        eprintln!("skipped under an emulator");
        return;
    }
    for delay in [0, 5, 20, 50, 100, 200, 400, 800] {
        let out = common::in_child(
            "device_probe",
            "fork_while_starting",
            delay.to_string().as_bytes(),
            &[("TVM_NUM_THREADS", Path::new("64"))],
        );
        assert_eq!(
            out, "parent true, child status 0",
            "forked after {delay} µs"
        );
    }
}

/// A TVM-style library reaching the workspaces through its context slots:
/// `workspace(device_type, case)` allocates 1000 bytes and frees them
/// (case 0), or frees what is no live workspace of the device: a stack
/// buffer (1), a function's address (2), the same workspace twice (3), a
/// CUDA workspace as the CPU's (4). Its pointer values are printed as
/// `0x...`, replaced by the caller.
const WORKSPACE_LIB: &str = r#"#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT void* __TVMBackendAllocWorkspace = 0;
TVM_FFI_DLL_EXPORT void* __TVMBackendFreeWorkspace = 0;
typedef void* (*Alloc)(int, int, uint64_t, int, int);
typedef int (*Free)(int, int, void*);
TVM_FFI_DLL_EXPORT int __tvm_ffi_workspace(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s; (void)n;
  int device = (int)a[0].v_int64, c = (int)a[1].v_int64;
  Alloc alloc = (Alloc)__TVMBackendAllocWorkspace;
  Free free_ = (Free)__TVMBackendFreeWorkspace;
  r->type_index = kTVMFFINone;
  char local[16];
  void* p = c == 1 ? (void*)local : c == 2 ? (void*)&__tvm_ffi_workspace : alloc(device, 0, 1000, 2, 32);
  if (!p) return -1;
  if (c == 4) { int rc = free_(1, 0, p); free_(device, 0, p); return rc; }
  if (free_(device, 0, p) != 0) return -1;
  return c == 3 ? free_(device, 0, p) : 0;
}
"#;

#[test]
fn workspaces_are_stream_ordered_and_checked() {
    let dir = common::workdir("device_code", "workspaces");
    let src = dir.join("workspace.c");
    std::fs::write(&src, WORKSPACE_LIB).unwrap();
    let lib = dir.join("libworkspace.so");
    common::build_c_library(&src, &lib);
    let hex = |s: &str| -> String {
        s.split(' ')
            .map(|w| if w.starts_with("0x") { "0x.." } else { w })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let refused = |d: i32| {
        format!(
            "ValueError: TVMBackendFreeWorkspace: 0x.. is no live workspace of device ({d}, 0): \
             trying to free things that has not been allocated"
        )
    };
    let expected = [
        "2/0: ok".to_owned(),
        "3/0: ok".to_owned(),
        "13/0: ValueError: __TVMBackendAllocWorkspace: device type 13 (CUDA managed memory, for \
         which TVM's runtime has no device API) is not supported by this runtime without TVM's \
         (CPU, CUDA and CUDA host are; `import tvm` provides the others)"
            .to_owned(),
        format!("1/1: {}", refused(1)),
        format!("1/2: {}", refused(1)),
        format!("1/3: {}", refused(1)),
        format!("2/4: {}", refused(1)),
    ];
    let (out, log) = with_fake_driver("workspaces", &[("WORKSPACE_LIB", &lib)]);
    assert_eq!(hex(&out), expected.join("; "));
    let memory: Vec<&str> = log
        .iter()
        .filter(|l| l.starts_with("cuMem"))
        .map(|l| l.split(" stream").next().unwrap())
        .collect();
    assert_eq!(
        memory,
        [
            "cuMemAllocAsync device 0 1000",
            "cuMemFreeAsync",
            "cuMemAllocHost 1000",
            "cuMemFreeHost",
            "cuMemAllocAsync device 0 1000",
            "cuMemFreeAsync",
        ],
        "no call synchronises the device"
    );
    // A device without memory pools: cuMemAlloc and cuMemFree.
    let (out, log) = with_fake_driver(
        "workspaces",
        &[
            ("WORKSPACE_LIB", &lib),
            ("FAKE_CUDA_NO_POOLS", Path::new("1")),
        ],
    );
    assert_eq!(hex(&out), expected.join("; "));
    assert!(
        log.iter().any(|l| l == "cuMemAlloc device 0 1000"),
        "{log:?}"
    );
}

#[test]
fn device_probe() {
    if let Ok(case) = std::env::var("HOSTILE_CASE") {
        common::print_result(&probe_case(&case));
    }
}

#[test]
fn kernels_launch_with_tvms_calling_convention() {
    for release in RELEASES {
        kernels_of_release_launch(release);
    }
}

/// The libraries of one TVM release (TVM 0.25's host code finds its kernels
/// through `__TVMBackendGetFuncFromEnv`, 0.27's through
/// `__TVMFFIEnvModLookupFromImports`).
fn kernels_of_release_launch(release: &str) {
    let (out, log) = with_fake_driver("kernels", &[("TVM_RELEASE", Path::new(release))]);
    assert_eq!(
        out,
        "cuda_cubin true true true, cuda_fatbin true true true, cuda_ptx true true true"
    );
    let loads: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("cuModuleLoadData"))
        .collect();
    assert_eq!(
        loads,
        [
            "cuModuleLoadData device 0 cubin",
            "cuModuleLoadData device 0 fatbin",
            "cuModuleLoadData device 0 ptx"
        ]
    );
    assert!(
        log.contains(&"cuCtxSetCurrent device 0".to_string()),
        "__tvm_set_device: {log:?}"
    );
    assert!(
        log.contains(&"cuLaunchKernelEx scale_n_kernel device 0 grid 2,1,1 block 64,1,1 shared 0 stream (nil)".to_string()),
        "{log:?}"
    );
}

#[test]
fn a_library_loaded_again_keeps_the_kernels_it_looked_up() {
    let (out, _) = with_fake_driver("reload", &[]);
    assert_eq!(out, "true true true");
}

/// The directory of the cdylib (target/<profile>, next to deps/).
fn cdylib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

#[test]
fn the_gpu_check_passes_on_the_fake_driver() {
    let dir = common::workdir("device_code", "gpu_check");
    let exe = dir.join("gpu_check");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = common::c_compiler()
        .arg("-o")
        .arg(&exe)
        .arg(root.join("tests/gpu/gpu_check.c"))
        .arg(format!("-I{}", root.join("include").display()))
        .arg(format!("-L{}", cdylib_dir().display()))
        .arg(format!("-Wl,-rpath,{}", cdylib_dir().display()))
        .args(["-ltvm_ffi", "-ldl", "-lpthread"])
        .status()
        .unwrap();
    assert!(status.success());
    let fake = fake_driver();
    let empty = common::workdir("device_code", "gpu_check_no_cuda");
    let out = common::target_command(&exe)
        .arg(root.join("tests/data/tvm"))
        .env("LD_LIBRARY_PATH", &fake)
        .env("CUDA_PATH", &empty)
        .env("CUDA_HOME", &empty)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Without NVRTC the source library's call fails (and says why); every
    // other check passes.
    let wrong: Vec<&str> = text.lines().filter(|l| l.starts_with("WRONG")).collect();
    if Path::new("/usr/local/cuda").exists() {
        assert!(wrong.is_empty(), "{text}");
    } else {
        assert_eq!(
            wrong,
            ["WRONG: cuda_source add_one on the default stream"],
            "{text}"
        );
        assert!(text.contains("compiling CUDA source needs NVRTC"), "{text}");
    }
    assert!(
        text.contains("ok: cuda_cubin add_one captured in a CUDA graph, replayed 3 times"),
        "{text}"
    );
    assert!(
        text.contains("ok: 8 threads, each its own stream, 50 host calls each"),
        "{text}"
    );
}

#[test]
fn dynamic_shared_memory_raises_the_kernels_limit_once() {
    let (out, log) = with_fake_driver("dyn_shared", &[]);
    assert_eq!(
        out,
        "true | TypeError: kernel shared_reverse_kernel takes 6 arguments (3 for the kernel, then \
         grid.x, block.x, dyn_shared_memory_bytes), got 5 | TypeError: kernel shared_reverse_kernel: \
         argument 2 must be an int, got float | ValueError: kernel shared_reverse_kernel: launch \
         argument dyn_shared_memory_bytes = -1 is outside 0..2^32"
    );
    let attrs: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("cuFuncSetAttribute"))
        .collect();
    assert_eq!(attrs, ["cuFuncSetAttribute shared_reverse_kernel 8 60000"]);
}

#[test]
fn a_func_is_never_launched() {
    let (out, log) = with_fake_driver("nvptx", &[]);
    assert_eq!(
        out,
        "ValueError: kernel add_one_kernel: the ptx code declares it a device function (.func), \
         not a kernel entry (.entry): no runtime can launch it"
    );
    assert!(
        !log.iter().any(|l| l.starts_with("cuModuleLoadData")),
        "{log:?}"
    );
}

#[test]
fn cuda_source_needs_nvrtc() {
    // Without NVRTC anywhere: the error says what to install.
    let empty = common::workdir("device_code", "no_cuda_root");
    let (out, _) = with_fake_driver("source", &[("CUDA_PATH", &empty), ("CUDA_HOME", &empty)]);
    if !Path::new("/usr/local/cuda").exists() {
        assert!(
            out.starts_with("CUDAError: compiling CUDA source needs NVRTC"),
            "{out}"
        );
        assert!(out.contains("pip install nvidia-cuda-nvrtc"), "{out}");
    }
    // With NVRTC (TVM_FFI_TEST_CUDA_PATH names a CUDA root holding it).
    if let Ok(root) = std::env::var("TVM_FFI_TEST_CUDA_PATH") {
        let (out, log) = with_fake_driver("source", &[("CUDA_PATH", Path::new(&root))]);
        assert_eq!(out, "compiled true");
        assert!(
            log.contains(&"cuModuleLoadData device 0 cubin".to_string()),
            "{log:?}"
        );
    }
}

#[test]
fn without_a_driver_a_launch_names_what_is_missing() {
    // SAFETY: probing for a system driver, whose initialisers are safe.
    if unsafe { libloading::Library::new("libcuda.so.1") }.is_ok() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let out = common::in_child("device_probe", "no_driver", b"", &[]);
    assert!(
        out.starts_with("CUDAError: the CUDA driver could not be loaded (libcuda.so.1: "),
        "{out}"
    );
    assert!(
        out.ends_with("running device code needs the NVIDIA driver and a GPU"),
        "{out}"
    );
}

#[test]
fn set_device_checks_the_device() {
    let (out, log) = with_fake_driver("workspace_cuda", &[]);
    assert_eq!(
        out,
        "CUDAError: cuDevicePrimaryCtxRetain(device 9) failed with error: CUDA_ERROR_INVALID_DEVICE \
         (CUDA driver libcuda.so.1) | ValueError: __tvm_set_device: device type 4 is not supported \
         by this runtime without TVM's (CPU and CUDA are; `import tvm` provides the others)"
    );
    assert!(
        log.contains(&"cuCtxSetCurrent device 1".to_string()),
        "{log:?}"
    );
}

#[test]
fn tvms_registrations_replace_the_defaults() {
    let out = common::in_child("device_probe", "yielding", b"", &[]);
    assert_eq!(
        out,
        "__tvm_set_device true 7, ffi.Module.load_from_bytes.cuda true 7, again RuntimeError: \
         Global Function `__tvm_set_device` is already registered"
    );
}

#[test]
fn cuda_artifacts_load_export_and_read_back() {
    let (out, _) = with_fake_driver("artifacts", &[]);
    assert_eq!(out, "true");
    let payload = cuda_payload(&data("cuda_cubin"));
    let parts = call(
        "ffi.CUDAModuleToArtifacts",
        &[&text("tvm_cuda"), &make_text(&payload, TextKind::Bytes)],
    )
    .unwrap();
    let set = call("ffi.ArtifactSet", &[&parts, &Any::NONE]).unwrap();
    let dir = common::workdir("device_code", "artifacts");
    // As a library: TVM's cuda entry imported by the library, and the set.
    let lib = dir.join("cuda_set.so");
    call(
        "ffi.ArtifactSetExportLibrary",
        &[&set, &text(lib.to_str().unwrap())],
    )
    .unwrap();
    assert_eq!(
        cuda_payload(&lib),
        payload,
        "the exported entry is TVM's bytes"
    );
    let m = load(&lib);
    let kinds: Vec<String> = m.imports().iter().map(|i| i.kind_name().unwrap()).collect();
    assert_eq!(kinds, ["cuda"], "imported once");
    let contents = |s: &tvm_ffi::module::artifact::ArtifactSet| -> Vec<(String, Vec<u8>)> {
        s.artifacts()
            .iter()
            .map(|a| (a.file_name().to_owned(), a.content().to_vec()))
            .collect()
    };
    let made = tvm_ffi::module::artifact::ArtifactSet::from_object(set.view().to_object().unwrap())
        .unwrap();
    let back = tvm_ffi::module::artifact::export::read_set(&lib)
        .unwrap()
        .unwrap();
    assert_eq!(contents(&back), contents(&made));
    assert_eq!(
        contents(&made)
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["kernels.cubin", "format.txt", "function_table.json"]
    );
    // As Model Library Format.
    let tar = dir.join("cuda_set.tar");
    let m = common::mlf_round_trip(&set, &tar);
    assert!(m.imports().iter().any(|i| i.kind_name().unwrap() == "cuda"));
    // The function table artifact is readable JSON with TVM's keys.
    let table = call("ffi.ArrayGetItem", &[&parts, &Any::from(2i64)]).unwrap();
    let inspected = call("ffi.ArtifactInspect", &[&table]).unwrap();
    let inspected = tvm_ffi::runtime::json::stringify(inspected.view(), 0).unwrap();
    assert!(
        inspected.contains("kernel add_one_kernel(void*, void*; grid.x, block.x)"),
        "{inspected}"
    );
}

#[test]
fn a_slot_nobody_provides_raises_instead_of_jumping_to_null() {
    let dir = common::workdir("device_code", "missing_slot");
    let src = dir.join("future.c");
    // Slots as TVM's generated code declares them: one we fill, twelve a
    // newer TVM might add (more than the eight standard ones, each named in
    // its own error), TVM 0.25's lookup, and variables of slot-like names
    // that are no slots (4 bytes, 16 bytes): never written, nor what lies
    // after them.
    let mut c = String::from(
        "#include <tvm/ffi/c_api.h>\n\
         TVM_FFI_DLL_EXPORT void* __TVMBackendAllocWorkspace = 0;\n\
         TVM_FFI_DLL_EXPORT void* __TVMBackendGetFuncFromEnv = 0;\n\
         struct pair { int flag; int next; };\n\
         TVM_FFI_DLL_EXPORT struct pair __TVMUserPair = {0, 0};\n\
         TVM_FFI_DLL_EXPORT int __TVMUserFlag = 0;\n\
         TVM_FFI_DLL_EXPORT int __TVMUserNext = 0;\n\
         TVM_FFI_DLL_EXPORT void* __TVMUserTable[2] = {0, 0};\n\
         TVM_FFI_DLL_EXPORT int __tvm_ffi_flags(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {\n\
           (void)s; (void)a; (void)n; r->type_index = kTVMFFIInt;\n\
           r->v_int64 = __TVMUserFlag + __TVMUserNext + __TVMUserPair.flag + __TVMUserPair.next\n\
             + (__TVMUserTable[0] != 0) + (__TVMUserTable[1] != 0) + 100 * (__TVMBackendGetFuncFromEnv != 0);\n\
           return 0;\n\
         }\n",
    );
    for i in 0..12 {
        c += &format!(
            "TVM_FFI_DLL_EXPORT void* __TVMBackendFuture{i} = 0;\n\
             TVM_FFI_DLL_EXPORT int __tvm_ffi_future{i}(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {{\n\
               (void)s; (void)a; (void)n; r->type_index = kTVMFFINone;\n\
               return ((int (*)(void))__TVMBackendFuture{i})();\n\
             }}\n"
        );
    }
    std::fs::write(&src, c).unwrap();
    let lib = dir.join("libfuture.so");
    common::build_c_library(&src, &lib);
    let m = load(&lib);
    for i in [0, 7, 8, 11] {
        let err = function(&m, &format!("future{i}"))
            .call(&[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "RuntimeError: the library called __TVMBackendFuture{i}, a context symbol no \
                 runtime in this process provides (TVM's runtime registers its own: `import tvm`)"
            )
        );
    }
    let flags = function(&m, "flags").call(&[]).unwrap();
    assert_eq!(
        flags.view().as_i64(),
        Some(100),
        "only the pointer-sized slots were written"
    );
    // A global the packed call names that nobody registered: the lookup's
    // error (in a child: another test registers it).
    let out = common::in_child("device_probe", "missing_global", b"", &[]);
    assert!(out.contains("testing.tvm_fixture_copy"), "{out}");
}

/// The global the packed-call library calls: copies `n` floats.
fn register_copy() {
    let copy = Function::from_closure(|args| {
        let src = args.get(0).as_opaque_ptr().unwrap() as *const f32;
        let dst = args.get(1).as_opaque_ptr().unwrap() as *mut f32;
        let n = args.get(2).as_i64().unwrap() as usize;
        // SAFETY: the library passes the data of two tensors of `n` floats.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, n) };
        Ok(Any::NONE)
    });
    set_global(
        b"testing.tvm_fixture_copy",
        copy,
        b"",
        true,
        Registration::Function,
    )
    .unwrap();
}

#[test]
fn tvm_cpu_libraries_give_numpys_answers() {
    let n = 1024usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    for release in RELEASES {
        cpu_libraries_of_release_give_numpys_answers(release, &a);
    }
    // Many threads launching at once: each launch is whole.
    let parallel = load(&data("parallel_cpu"));
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..20 {
                    let mut a2 = a.clone();
                    let mut b = vec![0f32; n];
                    function(&parallel, "add_one_parallel")
                        .call(&[
                            tensor(&mut a2, kDLCPU).view(),
                            tensor(&mut b, kDLCPU).view(),
                        ])
                        .unwrap();
                    assert!(b.iter().zip(&a).all(|(y, x)| *y == x + 1.0));
                }
            });
        }
    });
}

/// The three CPU libraries of one TVM release (see [`RELEASES`]).
fn cpu_libraries_of_release_give_numpys_answers(release: &str, a: &[f32]) {
    let n = a.len();
    let run = |lib: &str, f: &str| -> Vec<f32> {
        let m = load(&data_of(release, lib));
        let mut a2 = a.to_vec();
        let mut b = vec![0f32; n];
        let f = function(&m, f);
        f.call(&[
            tensor(&mut a2, kDLCPU).view(),
            tensor(&mut b, kDLCPU).view(),
        ])
        .unwrap();
        b
    };
    // A parallel loop: __TVMBackendParallelLaunch.
    assert!(
        run("parallel_cpu", "add_one_parallel")
            .iter()
            .zip(a)
            .all(|(y, x)| *y == x + 1.0),
        "{release}"
    );
    // A workspace: __TVMBackendAllocWorkspace / FreeWorkspace.
    let b = run("workspace_cpu", "reverse_cumsum_workspace");
    assert!(
        (0..n).all(|i| b[i] == a[n - 1 - i] * 2.0 + a[i]),
        "{release}"
    );
    // A global called through the packed call.
    register_copy();
    assert_eq!(run("packed_call_cpu", "call_global"), a, "{release}");
}
