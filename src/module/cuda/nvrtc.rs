//! NVRTC, dlopened when CUDA source has to be compiled (TVM exports the
//! source when no CUDA toolkit was present at build time). It compiles to
//! a cubin for the device that will run it, with the headers of the CUDA
//! installation it came from (`include/` and `include/cccl/` beside its
//! `lib/`, or under `$CUDA_PATH`, `$CUDA_HOME`, `/usr/local/cuda`).

use super::driver::{cuda_error, load_error};
use crate::platform::unlocked_once::get_or_make;
use crate::runtime::model::error::Result;
use core::ffi::{CStr, c_char, c_int, c_void};
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::OnceLock;

type Program = *mut c_void;

#[cfg(windows)]
const NVRTC_NAMES: &[&str] = &[
    "nvrtc64_130_0.dll",
    "nvrtc64_120_0.dll",
    "nvrtc64_112_0.dll",
];
#[cfg(not(windows))]
const NVRTC_NAMES: &[&str] = &[
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
    "libnvrtc.so",
];

/// What to install when NVRTC is missing.
const INSTALL_HINT: &str = "install the CUDA toolkit or `pip install nvidia-cuda-nvrtc \
     nvidia-cuda-cccl` and put its lib/ on LD_LIBRARY_PATH or set CUDA_PATH";

struct Nvrtc {
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    cubin_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    cubin: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Program) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    /// CUDA installation roots whose headers the compile may need.
    roots: Vec<PathBuf>,
}

static NVRTC: OnceLock<core::result::Result<&'static Nvrtc, String>> = OnceLock::new();

fn env_roots() -> Vec<PathBuf> {
    ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")])
        .collect()
}

fn open() -> core::result::Result<(libloading::Library, Option<PathBuf>), String> {
    let mut tried = Vec::new();
    let candidates = NVRTC_NAMES.iter().map(|n| (PathBuf::from(n), None)).chain(
        env_roots().into_iter().flat_map(|root| {
            ["lib64", "lib", "bin"].into_iter().flat_map(move |dir| {
                let root = root.clone();
                NVRTC_NAMES
                    .iter()
                    .map(move |n| (root.join(dir).join(n), Some(root.clone())))
            })
        }),
    );
    for (path, root) in candidates {
        if root.is_some() && !path.exists() {
            continue;
        }
        // SAFETY: NVRTC's initialisers are safe to run at any time.
        match unsafe { libloading::Library::new(&path) } {
            Ok(lib) => return Ok((lib, root)),
            Err(e) => tried.push(format!("{}: {}", path.display(), load_error(&e))),
        }
    }
    Err(format!(
        "compiling CUDA source needs NVRTC, which could not be loaded ({}); {INSTALL_HINT}",
        tried.join("; ")
    ))
}

fn load() -> core::result::Result<&'static Nvrtc, String> {
    let (lib, root) = open()?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: each entry point has the signature nvrtc.h gives it.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("NVRTC lacks {}: {e}", $name))?
        };
    }
    let create: unsafe extern "C" fn(_, _, _, _, _, _) -> c_int = sym!("nvrtcCreateProgram");
    // The installation NVRTC came from: `<root>/lib/libnvrtc.so.N`.
    let own_root = root.or_else(|| {
        let path = crate::platform::image::path_of_address(create as usize)?;
        Some(path.parent()?.parent()?.to_path_buf())
    });
    let roots = own_root.into_iter().chain(env_roots()).collect();
    Ok(Box::leak(Box::new(Nvrtc {
        create,
        compile: sym!("nvrtcCompileProgram"),
        log_size: sym!("nvrtcGetProgramLogSize"),
        log: sym!("nvrtcGetProgramLog"),
        cubin_size: sym!("nvrtcGetCUBINSize"),
        cubin: sym!("nvrtcGetCUBIN"),
        destroy: sym!("nvrtcDestroyProgram"),
        error_string: sym!("nvrtcGetErrorString"),
        roots,
    })))
}

impl Nvrtc {
    fn error(&self, rc: c_int) -> String {
        // SAFETY: returns a static NUL-terminated string.
        let s = unsafe { (self.error_string)(rc) };
        if s.is_null() {
            return format!("NVRTC error {rc}");
        }
        // SAFETY: as above.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }

    fn include_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for root in &self.roots {
            for dir in [root.join("include"), root.join("include").join("cccl")] {
                if dir.is_dir() && !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        dirs
    }

    /// Compiles `source` to a cubin for `sm_<arch>`.
    fn compile_cubin(&self, source: &[u8], arch: i32) -> Result<Vec<u8>> {
        let source = CString::new(
            source
                .iter()
                .copied()
                .take_while(|&b| b != 0)
                .collect::<Vec<_>>(),
        )
        .expect("no NUL inside");
        let mut options: Vec<CString> = [
            format!("--gpu-architecture=sm_{arch}"),
            "-default-device".into(),
            "--device-int128".into(),
            "-D__NV_SILENCE_DEPRECATION_BEGIN=".into(),
            "-D__NV_SILENCE_DEPRECATION_END=".into(),
        ]
        .into_iter()
        .map(|o| CString::new(o).expect("no NUL"))
        .collect();
        for dir in self.include_dirs() {
            if let Ok(o) = CString::new(format!("-I{}", dir.display())) {
                options.push(o);
            }
        }
        let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Program = core::ptr::null_mut();
        // SAFETY: NUL-terminated source and name, no headers.
        let rc = unsafe {
            (self.create)(
                &mut prog,
                source.as_ptr(),
                c"tvm_kernels.cu".as_ptr(),
                0,
                core::ptr::null(),
                core::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(cuda_error(&format!(
                "nvrtcCreateProgram failed: {}",
                self.error(rc)
            )));
        }
        // SAFETY: a program just created; options outlive the call.
        let rc = unsafe { (self.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr()) };
        let result = if rc != 0 {
            Err(cuda_error(&format!(
                "NVRTC could not compile the CUDA source for sm_{arch}: {}\n{}",
                self.error(rc),
                self.program_log(prog)
            )))
        } else {
            self.program_cubin(prog)
        };
        // SAFETY: destroys the program made above, once.
        unsafe { (self.destroy)(&mut prog) };
        result
    }

    fn program_log(&self, prog: Program) -> String {
        let mut size = 0usize;
        // SAFETY: a live program; out-pointer to a local.
        if unsafe { (self.log_size)(prog, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the `size` bytes NVRTC said the log needs.
        if unsafe { (self.log)(prog, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        String::from_utf8_lossy(&buf)
            .trim_end_matches('\0')
            .to_owned()
    }

    fn program_cubin(&self, prog: Program) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: a compiled program; out-pointer to a local.
        let rc = unsafe { (self.cubin_size)(prog, &mut size) };
        if rc != 0 {
            return Err(cuda_error(&format!(
                "nvrtcGetCUBINSize failed: {}",
                self.error(rc)
            )));
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the `size` bytes NVRTC said the cubin needs.
        let rc = unsafe { (self.cubin)(prog, buf.as_mut_ptr().cast()) };
        if rc != 0 {
            return Err(cuda_error(&format!(
                "nvrtcGetCUBIN failed: {}",
                self.error(rc)
            )));
        }
        Ok(buf)
    }
}

/// Compiles CUDA `source` to a cubin for compute capability `arch`
/// (`major * 10 + minor`); NVRTC is loaded at first use.
pub fn compile(source: &[u8], arch: i32) -> Result<Vec<u8>> {
    let nvrtc = get_or_make(&NVRTC, load).map_err(|why| cuda_error(&why))?;
    nvrtc.compile_cubin(source, arch)
}
