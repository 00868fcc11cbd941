//! Triton kernels with our library alone, on the cache entries each Triton
//! release from 3.0 to 3.9 wrote (`tests/data/triton/<release>`, made by
//! `tests/tools/export-triton-kernels.sh`): every kernel of every release
//! becomes artifacts, loads through `ffi.Artifact.loader.triton`, describes
//! itself and exports as a library and as Model Library Format, read back;
//! launches (of Triton 3.9's kernels) on the fake driver
//! (`tests/data/fake_cuda.c`) carry the metadata's grid, block, shared
//! memory, attributes and parameters, scratch included; bad arguments and
//! hostile files are errors naming what is wrong. The same launches are
//! held against Triton's own launcher by `tests/python/triton_launch_diff.py`.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod common;

use std::path::{Path, PathBuf};
use tvm_ffi::abi::*;
use tvm_ffi::runtime::registry::get_global;
use tvm_ffi::runtime::{Any, Function, TextKind, make_text};

/// The fixtures of every release: `tests/data/triton/<release>/<kernel>`.
fn fixtures() -> Vec<PathBuf> {
    let sorted = |dir: &Path| {
        let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        all.sort();
        all
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/triton");
    sorted(&root).iter().flat_map(|r| sorted(r)).collect()
}

/// A kernel of Triton 3.9, which the launches below use.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/triton/3.9")
        .join(name)
}

fn text(s: &str) -> Any {
    make_text(s.as_bytes(), TextKind::Str)
}

fn call(name: &str, args: &[&Any]) -> tvm_ffi::runtime::Result<Any> {
    let f = get_global(name.as_bytes()).unwrap_or_else(|| panic!("{name} is registered"));
    let views: Vec<_> = args.iter().map(|a| a.view()).collect();
    f.call(&views)
}

fn artifacts(name: &str) -> tvm_ffi::runtime::Result<Any> {
    artifacts_of(&fixture(name))
}

fn module_of(dir: &Path) -> tvm_ffi::module::Module {
    let m = call("ffi.Artifact.loader.triton", &[&artifacts_of(dir).unwrap()]).unwrap();
    tvm_ffi::module::Module::from_object(m.view().to_object().unwrap()).unwrap()
}

fn module(name: &str) -> tvm_ffi::module::Module {
    module_of(&fixture(name))
}

fn function(m: &tvm_ffi::module::Module, name: &str) -> Function {
    m.get_function_named(&text(name), true)
        .unwrap()
        .unwrap_or_else(|| panic!("{name}"))
}

/// The symbol of each fixture's kernel.
fn symbol(name: &str) -> &str {
    match name {
        "ctas2" | "ctas16" | "attrs" => "add",
        "warps8" => "add_i64",
        "big_shared" => "matmul",
        "scratch" => "descriptor",
        n => n,
    }
}

fn set_of_dir(dir: &Path) -> tvm_ffi::module::artifact::ArtifactSet {
    let set = call(
        "ffi.ArtifactSet",
        &[&artifacts_of(dir).unwrap(), &Any::NONE],
    )
    .unwrap();
    tvm_ffi::module::artifact::ArtifactSet::from_object(set.view().to_object().unwrap()).unwrap()
}

fn set_of(name: &str) -> tvm_ffi::module::artifact::ArtifactSet {
    set_of_dir(&fixture(name))
}

#[test]
fn every_kernel_of_every_release_loads_describes_and_exports() {
    let dir = common::workdir("triton", "every");
    let all = fixtures();
    assert!(all.len() >= 100, "{} fixtures", all.len());
    for path in all {
        let name = path.file_name().unwrap().to_str().unwrap();
        let release = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let who = format!("{release}/{name}");
        let m = module_of(&path);
        assert_eq!(m.kind_name().unwrap(), "triton", "{who}");
        assert!(m.implements_function(symbol(name), true).unwrap(), "{who}");
        let set = set_of_dir(&path);
        let lines = tvm_ffi::module::artifact::triton::describe_kernels(&set.artifacts());
        let all = lines
            .iter()
            .flat_map(|(_, l)| l.clone())
            .collect::<Vec<_>>()
            .join("\n");
        // Releases before 3.3 do not record theirs.
        let named = if release < "3.3" {
            "Triton 3.0-3.2, sm_90".to_owned()
        } else {
            format!("Triton {release}.")
        };
        assert!(all.contains(&named), "{who}: {all}");
        assert!(all.contains("as the signature says"), "{who}: {all}");
        // As a library and as Model Library Format, read back and loaded.
        let set = call(
            "ffi.ArtifactSet",
            &[&artifacts_of(&path).unwrap(), &Any::NONE],
        )
        .unwrap();
        let stem = who.replace('/', "_");
        let lib = dir.join(format!("{stem}.so"));
        call(
            "ffi.ArtifactSetExportLibrary",
            &[&set, &text(lib.to_str().unwrap())],
        )
        .unwrap();
        // ffi.InspectFile: the set's row of the tree gains the kernels'
        // lines as tvm-ffi-inspect prints them; a tarball is that row.
        let first = lines[0].1[0].replace('"', "\\\"");
        let tar = dir.join(format!("{stem}.tar"));
        call(
            "ffi.ArtifactSetExportModelLibraryFormat",
            &[&set, &text(tar.to_str().unwrap())],
        )
        .unwrap();
        for file in [&lib, &tar] {
            let found = call("ffi.InspectFile", &[&text(file.to_str().unwrap())]).unwrap();
            let found = tvm_ffi::runtime::json::stringify(found.view(), 0).unwrap();
            assert!(
                found.contains(&format!(
                    "\"Triton kernels of triton_kernel:\",\"  {first}\""
                )),
                "{who}: {found}"
            );
        }
        let back = tvm_ffi::module::load_from_file(lib.to_str().unwrap().as_bytes()).unwrap();
        let mlf = common::mlf_round_trip(&set, &dir.join(format!("{stem}.mlf.tar")));
        for m in [back, mlf] {
            let kernels = m
                .imports()
                .into_iter()
                .find(|i| i.kind_name().unwrap() == "triton");
            assert!(
                kernels
                    .unwrap()
                    .implements_function(symbol(name), true)
                    .unwrap(),
                "{who}"
            );
        }
    }
    // The described kernel of the fp16/bf16/i64 fixture, as Triton spells it.
    let set = set_of("scalars");
    let lines = tvm_ffi::module::artifact::triton::describe_kernels(&set.artifacts());
    assert_eq!(
        lines[0].1[0],
        "kernel scalars(out_ptr: *fp32, a_i64: i64, b_fp16: fp16, c_bf16: bf16, d_fp64: fp64, \
         e_i8: i8, f_u32: i32)"
    );
}

/// A tensor of `n` elements of `dtype` at `data` on `device_type`.
fn tensor(data: *mut u8, n: i64, dtype: (u8, u8), device_type: i32) -> Any {
    common::tensor_at(data, n, dtype, device_type)
}

/// `n` device buffers of 1 MiB from the fake driver (so that its log names
/// them `A0`, `A1`, ... in this order).
fn device_buffers(n: usize) -> Vec<usize> {
    // SAFETY: the fake driver (LD_LIBRARY_PATH), whose cuMemAlloc_v2 has
    // the driver API's signature.
    unsafe {
        let lib = libloading::Library::new("libcuda.so.1").unwrap();
        let alloc: libloading::Symbol<'_, unsafe extern "C" fn(*mut u64, usize) -> i32> =
            lib.get(b"cuMemAlloc_v2\0").unwrap();
        let out = (0..n)
            .map(|_| {
                let mut p = 0u64;
                assert_eq!(alloc(&mut p, 1 << 20), 0);
                p as usize
            })
            .collect();
        std::mem::forget(lib);
        out
    }
}

/// What one case does in the child, with the fake driver.
fn probe_case(case: &str) -> String {
    let buf = device_buffers(3);
    let at = |i: usize, off: usize| Any::from((buf[i] + off) as i64);
    let tensor_of =
        |i: usize, dtype: (u8, u8), device: i32| tensor(buf[i] as *mut u8, 1024, dtype, device);
    let f32s = |i: usize| tensor_of(i, (kDLFloat as u8, 32), kDLCUDA);
    let run = |name: &str, args: &[Any]| -> String {
        let m = module(name);
        let f = function(&m, symbol(name));
        let views: Vec<_> = args.iter().map(|a| a.view()).collect();
        match f.call(&views) {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    };
    let with = |grid: [i64; 3], params: Vec<Any>| -> Vec<Any> {
        let mut args: Vec<Any> = grid.iter().map(|&g| Any::from(g)).collect();
        args.extend(params);
        args
    };
    let scalars = |half: f64| {
        vec![
            at(0, 0),
            Any::from(-2i64),
            Any::from(half),
            Any::from(1.5f64),
            Any::from(2.25f64),
            Any::from(-7i64),
            Any::from(4294967295i64),
        ]
    };
    match case {
        "launches" => [
            run(
                "add",
                &with(
                    [4, 1, 1],
                    vec![f32s(0), f32s(1), at(2, 0), Any::from(1024i64)],
                ),
            ),
            run(
                "ctas2",
                &with(
                    [3, 1, 1],
                    vec![f32s(0), f32s(1), at(2, 0), Any::from(1024i64)],
                ),
            ),
            run(
                "warps8",
                &with(
                    [2, 1, 1],
                    vec![
                        tensor_of(0, (kDLFloat as u8, 16), kDLCUDA),
                        tensor_of(1, (kDLFloat as u8, 16), kDLCUDA),
                        at(2, 0),
                        Any::from(1i64 << 40),
                    ],
                ),
            ),
            run(
                "big_shared",
                &with([1, 1, 1], vec![at(0, 0), at(0, 65536), at(0, 131072)]),
            ),
            run(
                "scratch",
                &with([16, 1, 1], vec![at(0, 0), at(1, 0), Any::from(1024i64)]),
            ),
            run("scalars", &with([1, 1, 1], scalars(0.1))),
        ]
        .join(" | "),
        "bad_arguments" => {
            let add = |grid: [i64; 3], a: Any, n: Any| {
                run("add", &with(grid, vec![a, f32s(1), at(2, 0), n]))
            };
            [
                run("add", &with([1, 1, 1], vec![])),
                add([1, 1, 1], f32s(0), Any::from(1.5f64)),
                add([0, 1, 1], f32s(0), Any::from(1i64)),
                add([1, 70000, 1], f32s(0), Any::from(1i64)),
                add([1, 1, 1], f32s(0), Any::from(1i64 << 33)),
                add(
                    [1, 1, 1],
                    tensor_of(0, (kDLFloat as u8, 16), kDLCUDA),
                    Any::from(1i64),
                ),
                add(
                    [1, 1, 1],
                    tensor_of(0, (kDLFloat as u8, 32), kDLCPU),
                    Any::from(1i64),
                ),
                add([1, 1, 1], Any::from(1.5f64), Any::from(1i64)),
                run("scalars", &with([1, 1, 1], scalars(1e6))),
            ]
            .join(" | ")
        }
        "exported" => {
            // A Rust host: the set exported as a library, loaded and launched.
            let dir = common::workdir("triton", "exported_child");
            let lib = dir.join("add.so");
            let set = call("ffi.ArtifactSet", &[&artifacts("add").unwrap(), &Any::NONE]).unwrap();
            call(
                "ffi.ArtifactSetExportLibrary",
                &[&set, &text(lib.to_str().unwrap())],
            )
            .unwrap();
            let m = tvm_ffi::module::load_from_file(lib.to_str().unwrap().as_bytes()).unwrap();
            let f = m.get_function_named(&text("add"), true).unwrap().unwrap();
            let args = with(
                [4, 1, 1],
                vec![at(0, 0), at(1, 0), at(2, 0), Any::from(1024i64)],
            );
            let views: Vec<_> = args.iter().map(|a| a.view()).collect();
            f.call(&views)
                .map(|_| "ok".to_owned())
                .unwrap_or_else(|e| e.to_string())
        }
        other => panic!("unknown case {other}"),
    }
}

#[test]
fn triton_probe() {
    if let Ok(case) = std::env::var("HOSTILE_CASE") {
        common::print_result(&probe_case(&case));
    }
}

/// Runs `case` in a child on the fake driver; its log lines follow.
fn with_fake_driver(case: &str) -> (String, Vec<String>) {
    let dir = common::fake_cuda_driver("triton");
    let log = dir.join(format!("{case}.log"));
    let _ = std::fs::remove_file(&log);
    let params = "add:8,8,8,4,8,8;add_i64:8,8,8,8,8,8;matmul:8,8,8,8,8;descriptor:8,8,4,8,8;scalars:8,8,2,2,8,1,4,8,8";
    let out = common::in_child(
        "triton_probe",
        case,
        b"",
        &[
            ("LD_LIBRARY_PATH", dir.as_path()),
            ("FAKE_CUDA_LOG", log.as_path()),
            ("FAKE_CUDA_DIFF", Path::new("1")),
            ("FAKE_CUDA_PARAMS", Path::new(params)),
        ],
    );
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    (out, lines.lines().map(str::to_owned).collect())
}

#[test]
fn launches_follow_the_metadata() {
    let (out, log) = with_fake_driver("launches");
    assert_eq!(out, "ok | ok | ok | ok | ok | ok");
    let launches: Vec<&str> = log
        .iter()
        .filter(|l| {
            l.starts_with("cuLaunchKernelEx")
                || l.starts_with("  params")
                || l.starts_with("cuFuncSetAttribute")
                || l.starts_with("cuMemAllocAsync")
                || l.starts_with("cuMemFree")
        })
        .map(|l| l.as_str())
        .collect();
    assert_eq!(
        launches,
        [
            "cuLaunchKernelEx add device 0 grid 4,1,1 block 128,1,1 shared 0 stream (nil)",
            // Two tensors, an address, n, then the NULL global and profile scratch.
            "  params A0+0 A1+0 A2+0 00040000 0000000000000000 0000000000000000",
            // num_ctas 2: grid x doubled, a cluster of 2, spread scheduling.
            "cuLaunchKernelEx add device 0 grid 6,1,1 block 128,1,1 shared 0 stream (nil) attr4=2,1,1 attr5=1",
            "  params A0+0 A1+0 A2+0 00040000 0000000000000000 0000000000000000",
            // num_warps 8; n an i64 of 2^40.
            "cuLaunchKernelEx add_i64 device 0 grid 2,1,1 block 256,1,1 shared 0 stream (nil)",
            "  params A0+0 A1+0 A2+0 0000000000010000 0000000000000000 0000000000000000",
            // 128 KiB of shared memory: the kernel's mode raised at its load.
            "cuFuncSetAttribute matmul 17 3",
            "cuLaunchKernelEx matmul device 0 grid 1,1,1 block 256,1,1 shared 131072 stream (nil)",
            "  params A0+0 A0+65536 A0+131072 0000000000000000 0000000000000000",
            // 128 bytes of global scratch per program, stream-ordered.
            "cuMemAllocAsync device 0 2048 stream (nil)",
            "cuLaunchKernelEx descriptor device 0 grid 16,1,1 block 128,1,1 shared 264 stream (nil)",
            "  params A0+0 A1+0 00040000 A3+0 0000000000000000",
            "cuMemFreeAsync stream (nil)",
            // -2 as i64, 0.1 as fp16 (0x2e66), 1.5 as bf16 (0x3fc0), 2.25 as
            // fp64, -7 as i8, 2^32-1 as i32.
            "cuLaunchKernelEx scalars device 0 grid 1,1,1 block 128,1,1 shared 0 stream (nil)",
            "  params A0+0 feffffffffffffff 662e c03f 0000000000000240 f9 ffffffff 0000000000000000 0000000000000000",
        ]
    );
}

#[test]
fn bad_arguments_are_named_before_the_driver() {
    let (out, log) = with_fake_driver("bad_arguments");
    let lines: Vec<&str> = out.split(" | ").collect();
    let want = [
        "TypeError: Triton kernel add takes 7 arguments (grid_x, grid_y, grid_z, then x_ptr: *fp32, \
         y_ptr: *fp32, out_ptr: *fp32, n: i32), got 3",
        "TypeError: Triton kernel add: parameter n (i32) must be an int, got float",
        "ValueError: Triton kernel add: grid_x = 0 is outside 1..=2147483647",
        "ValueError: Triton kernel add: grid_y = 70000 is outside 1..=65535",
        "ValueError: Triton kernel add: parameter n (i32) = 8589934592 does not fit 32 bits",
        "TypeError: Triton kernel add: parameter x_ptr (*fp32): the tensor holds float16",
        "ValueError: Triton kernel add: parameter x_ptr (*fp32): the tensor is on device type 1, not a CUDA device",
        "TypeError: Triton kernel add: parameter x_ptr (*fp32) must be a tensor, an int address, an opaque \
         pointer or None, got float",
        "ValueError: Triton kernel scalars: parameter b_fp16 (fp16) = 1000000 is too large for fp16",
    ];
    assert_eq!(lines, want);
    assert!(
        !log.iter().any(|l| l.starts_with("cuLaunchKernelEx")),
        "nothing launched: {log:?}"
    );
}

#[test]
fn hostile_files_are_errors() {
    let dir = common::workdir("triton", "hostile");
    let read = |name: &str, file: &str| std::fs::read(fixture(name).join(file)).unwrap();
    let add_json = String::from_utf8(read("add", "add.json")).unwrap();
    // What, the cubin, the metadata, the signature, what the error says.
    type Case<'a> = (&'a str, Vec<u8>, Vec<u8>, Vec<u8>, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            "no num_warps",
            read("add", "add.cubin"),
            add_json.replace("\"num_warps\": 4, ", "").into_bytes(),
            read("add", "add.ttir"),
            "\"num_warps\" is missing",
        ),
        (
            "absurd num_warps",
            read("add", "add.cubin"),
            add_json
                .replace("\"num_warps\": 4", "\"num_warps\": 4294967296")
                .into_bytes(),
            read("add", "add.ttir"),
            "\"num_warps\" = 4294967296 is outside 1..=32",
        ),
        (
            "absurd scratch",
            read("add", "add.cubin"),
            add_json
                .replace(
                    "\"global_scratch_size\": 0",
                    "\"global_scratch_size\": 1099511627776",
                )
                .into_bytes(),
            read("add", "add.ttir"),
            "\"global_scratch_size\" = 1099511627776 is outside",
        ),
        (
            "another signature",
            read("add", "add.cubin"),
            add_json
                .replace("\"name\": \"add\"", "\"name\": \"scalars\"")
                .into_bytes(),
            read("scalars", "scalars.ttir"),
            "the cubin declares no kernel of that name",
        ),
        (
            "a signature the cubin disagrees with",
            read("add", "add.cubin"),
            add_json.clone().into_bytes(),
            String::from_utf8(read("add", "add.ttir"))
                .unwrap()
                .replacen("%n: i32", "%n: i64", 1)
                .into_bytes(),
            "make parameters of [8, 8, 8, 8, 8, 8] bytes; the cubin declares [8, 8, 8, 4, 8, 8]",
        ),
        (
            "a cubin cut short",
            read("add", "add.cubin")[..2000].to_vec(),
            add_json.clone().into_bytes(),
            read("add", "add.ttir"),
            "hostile/add: cubin: not a readable 64-bit ELF file",
        ),
        (
            "another release",
            read("add", "add.cubin"),
            add_json.replace("3.9.0", "3.10.0").into_bytes(),
            read("add", "add.ttir"),
            "is of Triton 3.10.0: the launch (hidden parameters, launch attributes) is known here \
             for Triton 3.0-3.9 only",
        ),
    ];
    for (what, cubin, meta, sig, says) in cases {
        let entry = dir.join(what.replace(' ', "_"));
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(entry.join("add.cubin"), &cubin).unwrap();
        std::fs::write(entry.join("add.json"), &meta).unwrap();
        std::fs::write(entry.join("add.ttir"), &sig).unwrap();
        let parts = call(
            "ffi.TritonCacheToArtifacts",
            &[&text("hostile"), &text(entry.to_str().unwrap())],
        );
        let e = parts
            .and_then(|p| call("ffi.Artifact.loader.triton", &[&p]))
            .map(|_| "loaded".to_owned())
            .unwrap_or_else(|e| e.to_string());
        assert!(e.contains(says), "{what}: {e}");
    }
    // A link instead of a file, and a directory with no metadata.
    let entry = dir.join("link");
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(entry.join("add.json"), read("add", "add.json")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", entry.join("add.cubin")).unwrap();
    let e = artifacts_of(&entry).unwrap_err().to_string();
    assert!(e.contains("add.cubin is not a regular file"), "{e}");
    let e = artifacts_of(&dir).unwrap_err().to_string();
    assert!(e.contains("no kernel metadata"), "{e}");
}

fn artifacts_of(dir: &Path) -> tvm_ffi::runtime::Result<Any> {
    call(
        "ffi.TritonCacheToArtifacts",
        &[&text("triton_kernel"), &text(dir.to_str().unwrap())],
    )
}

#[test]
fn a_rust_host_launches_an_exported_kernel() {
    let (out, log) = with_fake_driver("exported");
    assert_eq!(out, "ok");
    let launch: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("cuLaunchKernelEx") || l.starts_with("  params"))
        .collect();
    assert_eq!(
        launch,
        [
            "cuLaunchKernelEx add device 0 grid 4,1,1 block 128,1,1 shared 0 stream (nil)",
            "  params A0+0 A1+0 A2+0 00040000 0000000000000000 0000000000000000",
        ]
    );
}
