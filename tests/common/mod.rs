//! What the integration tests share: a fresh directory for a test's files,
//! starting a program built for the target, running a case in a child
//! process, a versioned library to build and load, and the fake CUDA
//! driver. Under a cross runner (`tests/platforms/aarch64/run.sh` runs the tests with
//! qemu-aarch64), a child built for the target starts through the same
//! runner, named in `TVM_FFI_TEST_RUNNER` (program and arguments, split on
//! spaces).
#![allow(dead_code, reason = "each test uses a part")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh, empty directory `group/name` under cargo's scratch space for
/// integration tests.
pub fn workdir(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A command that runs `program`, a binary built for the target.
pub fn target_command(program: impl AsRef<OsStr>) -> Command {
    match std::env::var("TVM_FFI_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut cmd = Command::new(words.next().expect("a runner program"));
            cmd.args(words).arg(program);
            cmd
        }
        _ => Command::new(program),
    }
}

/// The C compiler for libraries this process loads (the library's own
/// choice: `$CC`, or the compiler for this architecture).
pub fn c_compiler() -> Command {
    Command::new(tvm_ffi::module::emit::c_compiler())
}

/// What a child process saw: `ok <detail>`, `err <kind: message>`, or how
/// it ended if it printed neither (a signal, `hang` after 60 s). The child
/// is this test program running only the test `probe`, with the case in
/// `HOSTILE_CASE` and its argument in `HOSTILE_ARG`; the probe prints its
/// answer with [`print_result`].
#[cfg(unix)]
pub fn in_child(probe: &str, case: &str, arg: &[u8], env: &[(&str, &Path)]) -> String {
    use std::os::unix::ffi::OsStrExt;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut cmd = target_command(std::env::current_exe().unwrap());
    cmd.args([probe, "--exact", "--nocapture", "--test-threads=1"])
        .env("HOSTILE_CASE", case)
        .env("HOSTILE_ARG", OsStr::from_bytes(arg))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            return "hang".into();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    out.lines()
        .find_map(|l| l.split_once("RESULT: ").map(|(_, r)| r))
        .map(str::to_string)
        .unwrap_or_else(|| format!("no result ({status})"))
}

/// A child probe's answer, on the one line [`in_child`] reads.
pub fn print_result(line: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "RESULT: {}", line.replace('\n', " ")).unwrap();
}

/// Builds a library whose `__tvm_ffi_version` returns `version`.
pub fn build_versioned(dir: &Path, version: i64, out: &Path) {
    let src = dir.join(format!("v{version}.c"));
    std::fs::write(
        &src,
        format!(
            "#include <tvm/ffi/c_api.h>\n\
             TVM_FFI_DLL_EXPORT int __tvm_ffi_version(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {{\n\
             r->type_index = kTVMFFIInt; r->zero_padding = 0; r->v_int64 = {version}; return 0; }}\n"
        ),
    )
    .unwrap();
    build_c_library(&src, out);
}

/// Compiles the C file `src` (which may include our headers) into the
/// shared library `out`.
pub fn build_c_library(src: &Path, out: &Path) {
    let status = c_compiler()
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(src)
        .arg(concat!("-I", env!("CARGO_MANIFEST_DIR"), "/include"))
        .status()
        .unwrap();
    assert!(status.success(), "cc failed on {}", src.display());
}

/// Loads `lib` and calls its `version` function: the answer, the function
/// and the module.
pub fn load_version(
    lib: &Path,
) -> Result<(i64, tvm_ffi::runtime::Function, tvm_ffi::runtime::Any), String> {
    use tvm_ffi::runtime::{Any, Function, TextKind, make_text, registry::get_global};
    let path = lib.to_str().expect("a UTF-8 test path").as_bytes();
    let m = tvm_ffi::module::load_from_file(path).map_err(|e| e.to_string())?;
    let m = Any::from(m.into_object());
    let name = make_text(b"version", TextKind::Str);
    let f = get_global(b"ffi.ModuleGetFunction")
        .unwrap()
        .call(&[m.view(), name.view(), Any::from(false).view()])
        .map_err(|e| e.to_string())?;
    let f = Function::from_object(f.view().to_object().ok_or("no function `version`")?).unwrap();
    let v = f.call(&[]).map_err(|e| e.to_string())?;
    Ok((v.view().as_i64().unwrap(), f, m))
}

/// A directory holding the fake CUDA driver (`tests/data/fake_cuda.c`) as
/// `libcuda.so.1`, built once per test program under `group`.
pub fn fake_cuda_driver(group: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = workdir(group, "fake_driver");
        let status = c_compiler()
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(dir.join("libcuda.so.1"))
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fake_cuda.c"))
            .status()
            .unwrap();
        assert!(status.success());
        dir
    })
    .clone()
}

/// A 1-D tensor of `n` elements of `dtype` (code, bits) at `data` on
/// `device_type` (device 0), made through `TVMFFITensorFromDLPack`; its
/// shape and DLPack record live for the process.
pub fn tensor_at(
    data: *mut u8,
    n: i64,
    dtype: (u8, u8),
    device_type: i32,
) -> tvm_ffi::runtime::Any {
    use tvm_ffi::abi::*;
    let shape = Box::leak(Box::new([n]));
    let managed = Box::leak(Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.cast(),
            device: DLDevice {
                device_type,
                device_id: 0,
            },
            ndim: 1,
            dtype: DLDataType {
                code: dtype.0,
                bits: dtype.1,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: core::ptr::null_mut(),
            byte_offset: 0,
        },
        manager_ctx: core::ptr::null_mut(),
        deleter: None,
    }));
    let mut out = core::ptr::null_mut();
    // SAFETY: a valid managed tensor, handed over; `out` is writable.
    let rc = unsafe { tvm_ffi::capi::TVMFFITensorFromDLPack(managed, 0, 0, &mut out) };
    assert_eq!(rc, 0);
    // SAFETY: a new Tensor object.
    tvm_ffi::runtime::Any::from(unsafe {
        tvm_ffi::runtime::ObjectRef::from_raw(core::ptr::NonNull::new(out.cast()).unwrap())
    })
}

/// `set` (an `ffi.ArtifactSet`) written as Model Library Format at `tar`,
/// read back and loaded: the module tree `ffi.ArtifactSetLoad` makes.
pub fn mlf_round_trip(set: &tvm_ffi::runtime::Any, tar: &Path) -> tvm_ffi::module::Module {
    use tvm_ffi::runtime::{TextKind, make_text, registry::get_global};
    let call = |name: &str, args: &[&tvm_ffi::runtime::Any]| {
        let views: Vec<_> = args.iter().map(|a| a.view()).collect();
        get_global(name.as_bytes()).unwrap().call(&views).unwrap()
    };
    let path = make_text(tar.to_str().unwrap().as_bytes(), TextKind::Str);
    call("ffi.ArtifactSetExportModelLibraryFormat", &[set, &path]);
    let back = call("ffi.ArtifactSetFromModelLibraryFormat", &[&path]);
    let m = call("ffi.ArtifactSetLoad", &[&back]);
    tvm_ffi::module::Module::from_object(m.view().to_object().unwrap()).unwrap()
}
