//! NVRTC, dlopened when CUDA source has to be compiled (TVM exports the
//! source when no CUDA toolkit was present at build time). It compiles to
//! a cubin for the device that will run it exactly as TVM 0.27's runtime
//! does (`tvm.support.nvcc` through `tvm_callback_cuda_compile`), so the
//! image is TVM's: the same source (`#include <cuda.h>` lines dropped, a
//! `CUtensorMap` definition where the code names one, TVM's preamble), the
//! same architecture (`sm_XY`, `sm_XYa` from compute capability 9.0 on) and
//! the same options in the same order (fast math, TVM's defines and ptxas
//! flags, `TVM_CUDA_PTXAS_REG_LEVEL`, `TVM_CUDA_PTXAS_EXTRA_OPTS`,
//! `TVM_CUDA_NVRTC_EXTRA_OPTS`), with the headers of the CUDA installation
//! NVRTC came from (`include/` and `include/cccl/` beside its `lib/`, or
//! under `$CUDA_PATH`, `$CUDA_HOME`, `/usr/local/cuda`).

use super::driver::{cuda_error, load_error};
use crate::platform::unlocked_once::get_or_make;
use crate::runtime::model::error::Result;
use core::ffi::{CStr, c_char, c_int, c_void};
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::OnceLock;

type Program = *mut c_void;

use crate::platform::os::NVRTC_NAMES;

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

    /// Compiles `source` to a cubin for compute capability `arch`, as
    /// TVM's runtime does (see the module docs).
    fn compile_cubin(&self, source: &[u8], arch: i32) -> Result<Vec<u8>> {
        let source = CString::new(tvm_source(source)).expect("no NUL inside");
        let arch = tvm_arch(arch);
        let includes = self.include_dirs();
        let options: Vec<CString> = tvm_options(&arch, &includes, &|v| std::env::var(v).ok())
            .into_iter()
            .filter_map(|o| CString::new(o).ok())
            .collect();
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
                "NVRTC could not compile the CUDA source for {arch}: {}\n{}",
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

/// TVM 0.27's NVRTC preamble (`tvm.support.nvcc`), put before the source:
/// the image depends on every byte of it.
const TVM_PREAMBLE: &str = "#include <cuda/std/cstdint>\nusing cuda::std::uint8_t;\n\
using cuda::std::uint16_t;\nusing cuda::std::uint32_t;\nusing cuda::std::uint64_t;\n\
using cuda::std::int8_t;\nusing cuda::std::int16_t;\nusing cuda::std::int32_t;\n\
using cuda::std::int64_t;\n\n// NVRTC uses asm/volatile instead of __asm__/__volatile__\n\
#ifndef __asm__\n#define __asm__ asm\n#endif\n#ifndef __volatile__\n\
#define __volatile__ volatile\n#endif\n\n\
// NVRTC does not pull in the host <math.h>, so INFINITY is undefined. Provide it\n\
// from libcu++ (same float +inf value nvcc's <math.h> yields).\n\
#include <cuda/std/limits>\n#ifndef INFINITY\n\
#define INFINITY (::cuda::std::numeric_limits<float>::infinity())\n#endif\n\n";

/// What TVM puts first where the code names `CUtensorMap` (NVRTC has no
/// `cuda.h`).
const TVM_TENSOR_MAP: &str = "struct alignas(64) CUtensorMap_st {\n  unsigned long long opaque[16];\n};\n\
typedef struct CUtensorMap_st CUtensorMap;\n\n";

/// The source TVM hands NVRTC for `code` (up to its first NUL): its lines
/// (split and joined as Python's `splitlines` and `"\n".join` do) without
/// the `#include <cuda.h>` ones, after the tensor map definition if the code
/// names `CUtensorMap` and TVM's preamble.
fn tvm_source(code: &[u8]) -> String {
    let code = code.split(|&b| b == 0).next().unwrap_or_default();
    let code = String::from_utf8_lossy(code);
    // Python's line boundaries and `str.isspace`.
    let boundary = |c: char| {
        matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        )
    };
    let space = |c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c);
    let mut lines = Vec::new();
    let mut rest: &str = &code;
    while !rest.is_empty() {
        let end = rest.find(boundary).unwrap_or(rest.len());
        lines.push(&rest[..end]);
        rest = &rest[end..];
        if rest.starts_with("\r\n") {
            rest = &rest[2..];
        } else if let Some(c) = rest.chars().next() {
            rest = &rest[c.len_utf8()..];
        }
    }
    let kept: Vec<&str> = lines
        .into_iter()
        .filter(|l| l.trim_matches(space) != "#include <cuda.h>")
        .collect();
    let body = kept.join("\n");
    let map = if body.contains("CUtensorMap") {
        TVM_TENSOR_MAP
    } else {
        ""
    };
    format!("{TVM_PREAMBLE}{map}{body}")
}

/// TVM's architecture for compute capability `arch` (`major * 10 + minor`):
/// `sm_XY`, with the `a` suffix (architecture-specific features) from 9.0 on.
fn tvm_arch(arch: i32) -> String {
    let suffix = if arch >= 90 { "a" } else { "" };
    format!("sm_{arch}{suffix}")
}

/// TVM's NVRTC options for `arch` in TVM's order, with `includes` for the
/// header directories and `env` reading its environment variables.
fn tvm_options(
    arch: &str,
    includes: &[PathBuf],
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "-default-device".into(),
        "--device-int128".into(),
    ];
    options.extend(includes.iter().map(|d| format!("-I{}", d.display())));
    for flag in [
        "-D__NV_SILENCE_DEPRECATION_BEGIN=",
        "-D__NV_SILENCE_DEPRECATION_END=",
        "-D__NV_SILENCE_HOST_DEPRECATION_BEGIN=",
        "-D__NV_SILENCE_HOST_DEPRECATION_END=",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT16_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT162_OPERATORS__",
        "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
        "--use_fast_math",
    ] {
        options.push(flag.into());
    }
    let level = env("TVM_CUDA_PTXAS_REG_LEVEL").unwrap_or_else(|| "10".into());
    let mut ptxas = vec![
        "-v".to_string(),
        format!("--register-usage-level={level}"),
        "--warn-on-local-memory-usage".into(),
    ];
    let words = |var: &str| -> Vec<String> {
        env(var)
            .map(|v| v.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    ptxas.extend(words("TVM_CUDA_PTXAS_EXTRA_OPTS"));
    options.extend(ptxas.into_iter().map(|f| format!("--ptxas-options={f}")));
    options.extend(words("TVM_CUDA_NVRTC_EXTRA_OPTS"));
    options
}

/// Compiles CUDA `source` to a cubin for compute capability `arch`
/// (`major * 10 + minor`); NVRTC is loaded at first use.
pub fn compile(source: &[u8], arch: i32) -> Result<Vec<u8>> {
    let nvrtc = get_or_make(&NVRTC, load).map_err(|why| cuda_error(&why))?;
    nvrtc.compile_cubin(source, arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_and_options_are_tvms() {
        let src = tvm_source(b"#include <cuda.h>\r\n  #include <cuda.h>  \nextern \"C\" __global__ void k(CUtensorMap m) {}\n\0junk");
        assert!(src.starts_with(TVM_PREAMBLE));
        assert_eq!(
            &src[TVM_PREAMBLE.len()..],
            format!("{TVM_TENSOR_MAP}extern \"C\" __global__ void k(CUtensorMap m) {{}}")
        );
        assert_eq!(
            tvm_source(b"a\n\nb\r\rc"),
            format!("{TVM_PREAMBLE}a\n\nb\n\nc")
        );
        assert_eq!(tvm_arch(86), "sm_86");
        assert_eq!(tvm_arch(90), "sm_90a");
        assert_eq!(tvm_arch(120), "sm_120a");
        let env = |v: &str| match v {
            "TVM_CUDA_PTXAS_EXTRA_OPTS" => Some("-O1  --def-load-cache=ca".to_string()),
            "TVM_CUDA_NVRTC_EXTRA_OPTS" => Some("-lineinfo".to_string()),
            _ => None,
        };
        let o = tvm_options("sm_90a", &[PathBuf::from("/cuda/include")], &env);
        assert_eq!(
            o[..4],
            [
                "--gpu-architecture=sm_90a",
                "-default-device",
                "--device-int128",
                "-I/cuda/include"
            ]
        );
        assert_eq!(
            o[o.len() - 7..],
            [
                "--use_fast_math",
                "--ptxas-options=-v",
                "--ptxas-options=--register-usage-level=10",
                "--ptxas-options=--warn-on-local-memory-usage",
                "--ptxas-options=-O1",
                "--ptxas-options=--def-load-cache=ca",
                "-lineinfo",
            ]
        );
    }
}
