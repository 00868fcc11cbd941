//! The CUDA driver API, dlopened at first use (`libcuda.so.1`,
//! `nvcuda.dll`): nothing links against CUDA, and without a driver, loading
//! and inspecting device code still work; only running it fails, with an
//! error that names the library it looked for.
//!
//! Contexts: a kernel runs in the context current on the calling thread;
//! with none, the device's primary context (the one the CUDA runtime and
//! PyTorch use) is made current, as the CUDA runtime does. The device is
//! the current context's, else device 0.

use crate::platform::unlocked_once::get_or_make;
use crate::runtime::model::error::{Error, Result, new_error};
use core::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// `CUresult`.
pub type CuResult = c_int;
/// `CUcontext`, `CUmodule`, `CUfunction`, `CUstream`.
pub type Handle = *mut c_void;

/// `CUlaunchAttribute`: an id, padding, a 64-byte value union.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct LaunchAttribute {
    /// `CUlaunchAttributeID`.
    pub id: c_uint,
    pad: c_uint,
    /// The value union, as 32-bit words (`clusterDim` is the first three,
    /// `cooperative` the first).
    pub value: [c_uint; 16],
}

/// The attributes of one launch, at most five, in the order added.
#[derive(Default)]
pub struct LaunchAttributes {
    items: [LaunchAttribute; 5],
    len: usize,
}

impl LaunchAttributes {
    /// Adds attribute `id` with the first words of its value.
    pub fn push(&mut self, id: u32, value: &[c_uint]) {
        let a = &mut self.items[self.len];
        a.id = id;
        a.value[..value.len()].copy_from_slice(value);
        self.len += 1;
    }

    /// What a [`LaunchConfig`] takes: the array (NULL when empty) and its
    /// length.
    pub fn as_config(&mut self) -> (*mut LaunchAttribute, c_uint) {
        let ptr = if self.len == 0 {
            core::ptr::null_mut()
        } else {
            self.items.as_mut_ptr()
        };
        (ptr, self.len as c_uint)
    }
}

/// `CUlaunchConfig`.
#[repr(C)]
pub struct LaunchConfig {
    /// Grid dimensions, in blocks.
    pub grid: [c_uint; 3],
    /// Block dimensions, in threads.
    pub block: [c_uint; 3],
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: c_uint,
    /// The stream (NULL: the legacy default stream).
    pub stream: Handle,
    /// Launch attributes (NULL when `num_attrs` is 0).
    pub attrs: *mut LaunchAttribute,
    /// The number of attributes.
    pub num_attrs: c_uint,
}

const _: () = {
    assert!(size_of::<LaunchAttribute>() == 72);
    assert!(core::mem::offset_of!(LaunchAttribute, value) == 8);
    assert!(size_of::<LaunchConfig>() == 56);
    assert!(core::mem::offset_of!(LaunchConfig, stream) == 32);
    assert!(core::mem::offset_of!(LaunchConfig, attrs) == 40);
    assert!(core::mem::offset_of!(LaunchConfig, num_attrs) == 48);
};

/// `CU_LAUNCH_ATTRIBUTE_*`.
pub mod attr {
    /// Cooperative launch.
    pub const COOPERATIVE: u32 = 2;
    /// Thread-block cluster dimensions.
    pub const CLUSTER_DIMENSION: u32 = 4;
    /// Programmatic stream serialization.
    pub const PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;
    /// Preferred cluster dimensions.
    pub const PREFERRED_CLUSTER_DIMENSION: u32 = 11;
    /// How the blocks of a cluster are scheduled (1: spread).
    pub const CLUSTER_SCHEDULING_POLICY_PREFERENCE: u32 = 5;
    /// The shared memory mode (3: oversized shared memory allowed).
    pub const SHARED_MEMORY_MODE: u32 = 18;
}
/// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`: a kernel's static shared memory.
pub const FUNC_SHARED_SIZE_BYTES: c_int = 1;
/// `CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE` (CUDA 13).
pub const FUNC_SHARED_MEMORY_MODE: c_int = 17;
/// `CU_SHARED_MEMORY_MODE_ALLOW_OVERSIZED_SHARED_MEMORY`.
pub const SHARED_MEMORY_MODE_ALLOW_OVERSIZED: c_int = 3;
/// `CU_FUNC_CACHE_PREFER_SHARED`.
pub const FUNC_CACHE_PREFER_SHARED: c_int = 1;
/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
pub const DEVICE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
pub const FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
/// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`.
pub const FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: c_int = 14;
/// `CU_LAUNCH_KERNEL_REQUIRED_BLOCK_DIM`.
pub const REQUIRED_BLOCK_DIM: c_uint = 1;
const DEVICE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const DEVICE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
/// `CUDA_ERROR_NOT_SUPPORTED`: a device without memory pools.
const ERROR_NOT_SUPPORTED: CuResult = 801;
/// `CUDA_ERROR_DEINITIALIZED`: the driver is shutting down (ignored on
/// unload, as TVM does).
pub const ERROR_DEINITIALIZED: CuResult = 4;

/// The library names tried, in order.
const DRIVER_NAMES: &[&str] = crate::platform::os::CUDA_DRIVER_NAMES;

/// The driver entry points this library calls.
pub struct Driver {
    name: &'static str,
    /// The library, loaded for good (held so that it stays reachable).
    _library: &'static libloading::Library,
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut Handle, c_int) -> CuResult,
    ctx_get_current: unsafe extern "C" fn(*mut Handle) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(Handle) -> CuResult,
    ctx_get_device: unsafe extern "C" fn(*mut c_int) -> CuResult,
    ctx_push: unsafe extern "C" fn(Handle) -> CuResult,
    ctx_pop: unsafe extern "C" fn(*mut Handle) -> CuResult,
    module_load_data: unsafe extern "C" fn(*mut Handle, *const c_void) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    module_unload: unsafe extern "C" fn(Handle) -> CuResult,
    func_set_attribute: unsafe extern "C" fn(Handle, c_int, c_int) -> CuResult,
    func_get_attribute: Option<unsafe extern "C" fn(*mut c_int, c_int, Handle) -> CuResult>,
    func_set_cache_config: Option<unsafe extern "C" fn(Handle, c_int) -> CuResult>,
    launch_kernel_ex: unsafe extern "C" fn(
        *const LaunchConfig,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    /// The launch without attributes, as Triton up to 3.3 calls it.
    launch_kernel: unsafe extern "C" fn(
        Handle,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut u64, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(u64) -> CuResult,
    /// Stream-ordered allocation (CUDA 11.2 and later).
    mem_alloc_async: Option<unsafe extern "C" fn(*mut u64, usize, Handle) -> CuResult>,
    mem_free_async: Option<unsafe extern "C" fn(u64, Handle) -> CuResult>,
    mem_alloc_host: unsafe extern "C" fn(*mut *mut c_void, usize) -> CuResult,
    mem_free_host: unsafe extern "C" fn(*mut c_void) -> CuResult,
    /// The primary contexts retained so far, by device.
    primary: std::sync::Mutex<Vec<(c_int, usize)>>,
}

static DRIVER: OnceLock<core::result::Result<&'static Driver, String>> = OnceLock::new();

/// The driver, loaded at first use (never unloaded); an error names the
/// libraries tried and why they failed.
pub fn driver() -> Result<&'static Driver> {
    get_or_make(&DRIVER, || load().map(|d| &*Box::leak(Box::new(d))))
        .map_err(|why| cuda_error(&why))
}

/// The driver if an earlier call loaded it (never loads it).
pub fn loaded() -> Option<&'static Driver> {
    DRIVER.get()?.as_ref().ok().copied()
}

fn load() -> core::result::Result<Driver, String> {
    let mut why = Vec::new();
    for &name in DRIVER_NAMES {
        // SAFETY: the NVIDIA driver's initialisers are safe to run at any
        // time (the CUDA runtime and PyTorch dlopen it the same way).
        match unsafe { libloading::Library::new(name) } {
            Ok(lib) => {
                let lib: &'static libloading::Library = Box::leak(Box::new(lib));
                return bind(name, lib).map_err(|e| format!("{name}: {e}"));
            }
            Err(e) => why.push(format!("{name}: {}", load_error(&e))),
        }
    }
    Err(format!(
        "the CUDA driver could not be loaded ({}); running device code needs the NVIDIA driver \
         and a GPU",
        why.join("; ")
    ))
}

fn bind(
    name: &'static str,
    lib: &'static libloading::Library,
) -> core::result::Result<Driver, String> {
    macro_rules! sym {
        ($name:literal) => {
            optional!($name).map_err(|e| format!("the driver lacks {}: {e}", $name))?
        };
    }
    macro_rules! optional {
        ($name:literal) => {
            // SAFETY: each entry point is declared with the signature the
            // driver API (cuda.h) gives it.
            unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map(|s| *s)
        };
    }
    let d = Driver {
        name,
        _library: lib,
        init: sym!("cuInit"),
        device_get_attribute: sym!("cuDeviceGetAttribute"),
        primary_ctx_retain: sym!("cuDevicePrimaryCtxRetain"),
        ctx_get_current: sym!("cuCtxGetCurrent"),
        ctx_set_current: sym!("cuCtxSetCurrent"),
        ctx_get_device: sym!("cuCtxGetDevice"),
        ctx_push: sym!("cuCtxPushCurrent_v2"),
        ctx_pop: sym!("cuCtxPopCurrent_v2"),
        module_load_data: sym!("cuModuleLoadData"),
        module_get_function: sym!("cuModuleGetFunction"),
        module_unload: sym!("cuModuleUnload"),
        func_set_attribute: sym!("cuFuncSetAttribute"),
        func_get_attribute: optional!("cuFuncGetAttribute").ok(),
        func_set_cache_config: optional!("cuFuncSetCacheConfig").ok(),
        launch_kernel_ex: sym!("cuLaunchKernelEx"),
        launch_kernel: sym!("cuLaunchKernel"),
        get_error_name: sym!("cuGetErrorName"),
        mem_alloc: sym!("cuMemAlloc_v2"),
        mem_free: sym!("cuMemFree_v2"),
        mem_alloc_async: optional!("cuMemAllocAsync").ok(),
        mem_free_async: optional!("cuMemFreeAsync").ok(),
        mem_alloc_host: sym!("cuMemAllocHost_v2"),
        mem_free_host: sym!("cuMemFreeHost"),
        primary: Default::default(),
    };
    // SAFETY: cuInit takes flags 0 and may be called any number of times.
    let rc = unsafe { (d.init)(0) };
    if rc != 0 {
        return Err(format!(
            "cuInit failed with error: {} (no usable GPU?)",
            d.error_name(rc)
        ));
    }
    Ok(d)
}

/// Why a library could not be opened (the system loader's own words).
pub fn load_error(e: &libloading::Error) -> String {
    std::error::Error::source(e).map_or_else(|| e.to_string(), |s| s.to_string())
}

/// A `CUDAError` (the kind TVM's CUDA runtime raises) with `message`.
pub fn cuda_error(message: &str) -> Error {
    Error::object(new_error(b"CUDAError", message.as_bytes(), b"", None, None))
}

impl Driver {
    /// The name of error code `rc` (`CUDA_ERROR_...`).
    pub fn error_name(&self, rc: CuResult) -> String {
        let mut s: *const c_char = core::ptr::null();
        // SAFETY: cuGetErrorName writes a static string or leaves NULL.
        if unsafe { (self.get_error_name)(rc, &mut s) } != 0 || s.is_null() {
            return format!("CUDA error {rc}");
        }
        // SAFETY: a NUL-terminated static string of the driver.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }

    /// `Ok` for `rc == 0`, else a `CUDAError` naming `call` and the driver.
    pub fn check(&self, rc: CuResult, call: &str) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        Err(cuda_error(&format!(
            "{call} failed with error: {} (CUDA driver {})",
            self.error_name(rc),
            self.name
        )))
    }

    /// The device of the calling thread's current context; with none, the
    /// primary context of device 0 is made current first.
    pub fn current_device(&self) -> Result<c_int> {
        let mut ctx: Handle = core::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        let rc = unsafe { (self.ctx_get_current)(&mut ctx) };
        self.check(rc, "cuCtxGetCurrent")?;
        if ctx.is_null() {
            self.set_device(0)?;
            return Ok(0);
        }
        let mut dev: c_int = 0;
        // SAFETY: out-pointer to a local.
        self.check(unsafe { (self.ctx_get_device)(&mut dev) }, "cuCtxGetDevice")?;
        Ok(dev)
    }

    /// Makes `device`'s primary context current on this thread
    /// (`cudaSetDevice`).
    pub fn set_device(&self, device: c_int) -> Result<()> {
        let ctx = self.primary_context(device)?;
        // SAFETY: a context the driver handed out, retained for good.
        self.check(unsafe { (self.ctx_set_current)(ctx) }, "cuCtxSetCurrent")
    }

    /// The primary context of `device`, retained at its first use and kept
    /// (retained outside the table's lock; threads that race retain it
    /// twice, which the driver counts).
    fn primary_context(&self, device: c_int) -> Result<Handle> {
        let cached =
            |table: &[(c_int, usize)]| table.iter().find(|(d, _)| *d == device).map(|e| e.1);
        if let Some(ctx) = cached(&self.primary.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(ctx as Handle);
        }
        let mut ctx: Handle = core::ptr::null_mut();
        // SAFETY: out-pointer to a local; the driver checks the ordinal.
        let rc = unsafe { (self.primary_ctx_retain)(&mut ctx, device) };
        self.check(rc, &format!("cuDevicePrimaryCtxRetain(device {device})"))?;
        let mut table = self.primary.lock().unwrap_or_else(|e| e.into_inner());
        if cached(&table).is_none() {
            table.push((device, ctx as usize));
        }
        Ok(ctx)
    }

    /// The compute capability of `device` as `major * 10 + minor`.
    pub fn compute_capability(&self, device: c_int) -> Result<i32> {
        let major = self.device_attribute(device, DEVICE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = self.device_attribute(device, DEVICE_COMPUTE_CAPABILITY_MINOR)?;
        Ok(major * 10 + minor)
    }

    /// Attribute `attr` (`CU_DEVICE_ATTRIBUTE_*`) of `device`.
    pub fn device_attribute(&self, device: c_int, attr: c_int) -> Result<c_int> {
        let mut v = 0;
        // SAFETY: an out-pointer to a local; the driver checks the rest.
        let rc = unsafe { (self.device_get_attribute)(&mut v, attr, device) };
        self.check(rc, "cuDeviceGetAttribute")?;
        Ok(v)
    }

    /// Attribute `attr` (`CU_FUNC_ATTRIBUTE_*`) of kernel `f`.
    pub fn function_attribute(&self, f: Handle, attr: c_int) -> Result<c_int> {
        let get = self
            .func_get_attribute
            .ok_or_else(|| cuda_error("the driver lacks cuFuncGetAttribute"))?;
        let mut v = 0;
        // SAFETY: an out-pointer to a local and a kernel the driver gave.
        self.check(unsafe { get(&mut v, attr, f) }, "cuFuncGetAttribute")?;
        Ok(v)
    }

    /// Sets kernel `f`'s cache preference (`CU_FUNC_CACHE_*`).
    pub fn set_cache_config(&self, f: Handle, config: c_int) -> Result<()> {
        let set = self
            .func_set_cache_config
            .ok_or_else(|| cuda_error("the driver lacks cuFuncSetCacheConfig"))?;
        // SAFETY: a kernel the driver gave.
        self.check(unsafe { set(f, config) }, "cuFuncSetCacheConfig")
    }

    /// Loads `image` (NUL-terminated if PTX) into `device`'s primary
    /// context.
    pub fn load_module(&self, device: c_int, image: &[u8]) -> Result<Handle> {
        let ctx = self.primary_context(device)?;
        // SAFETY: a retained context.
        self.check(unsafe { (self.ctx_push)(ctx) }, "cuCtxPushCurrent")?;
        let mut module: Handle = core::ptr::null_mut();
        // SAFETY: `image` is a whole cubin, fatbin or NUL-terminated PTX
        // (the caller sniffed it); the driver copies what it keeps.
        let rc = unsafe { (self.module_load_data)(&mut module, image.as_ptr().cast()) };
        let mut popped: Handle = core::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        unsafe { (self.ctx_pop)(&mut popped) };
        self.check(rc, "cuModuleLoadData")?;
        Ok(module)
    }

    /// Unloads `module` of `device`'s primary context; errors are ignored
    /// (the driver may be shutting down).
    pub fn unload_module(&self, device: c_int, module: Handle) {
        let Ok(ctx) = self.primary_context(device) else {
            return;
        };
        // SAFETY: a retained context, then a module loaded into it.
        unsafe {
            if (self.ctx_push)(ctx) == 0 {
                (self.module_unload)(module);
                let mut popped: Handle = core::ptr::null_mut();
                (self.ctx_pop)(&mut popped);
            }
        }
    }

    /// The kernel `name` of `module`.
    pub fn function(&self, module: Handle, name: &CStr) -> Result<Handle> {
        let mut f: Handle = core::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        let rc = unsafe { (self.module_get_function)(&mut f, module, name.as_ptr()) };
        self.check(
            rc,
            &format!("cuModuleGetFunction {}", name.to_string_lossy()),
        )?;
        Ok(f)
    }

    /// Sets attribute `attr` of kernel `f`.
    pub fn set_function_attribute(&self, f: Handle, attr: c_int, value: c_int) -> CuResult {
        // SAFETY: a kernel handle of a loaded module.
        unsafe { (self.func_set_attribute)(f, attr, value) }
    }

    /// Launches `f`.
    ///
    /// # Safety
    /// `args` holds one pointer per kernel parameter, each to a value of
    /// the parameter's size, valid for the call.
    pub unsafe fn launch(
        &self,
        config: &LaunchConfig,
        f: Handle,
        args: *mut *mut c_void,
    ) -> CuResult {
        // SAFETY: by the caller's contract; `config` and its attributes are
        // valid for the call.
        unsafe { (self.launch_kernel_ex)(config, f, args, core::ptr::null_mut()) }
    }

    /// Launches `f` through `cuLaunchKernel`, which takes no attributes
    /// (`config`'s are not passed).
    ///
    /// # Safety
    /// As [`Driver::launch`].
    pub unsafe fn launch_plain(
        &self,
        config: &LaunchConfig,
        f: Handle,
        args: *mut *mut c_void,
    ) -> CuResult {
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        // SAFETY: by the caller's contract.
        unsafe {
            (self.launch_kernel)(
                f,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.shared_mem_bytes,
                config.stream,
                args,
                core::ptr::null_mut(),
            )
        }
    }

    /// `cuMemAlloc` in the current context.
    pub fn mem_alloc(&self, size: usize) -> Result<u64> {
        let mut ptr = 0u64;
        // SAFETY: out-pointer to a local.
        self.check(unsafe { (self.mem_alloc)(&mut ptr, size) }, "cuMemAlloc")?;
        Ok(ptr)
    }

    /// `cuMemFree`.
    pub fn mem_free(&self, ptr: u64) -> Result<()> {
        // SAFETY: the driver checks the pointer.
        self.check(unsafe { (self.mem_free)(ptr) }, "cuMemFree")
    }

    /// `cuMemAllocAsync` on `stream` in the current context; `None` where
    /// the driver or the device has no stream-ordered allocation.
    pub fn mem_alloc_async(&self, size: usize, stream: usize) -> Result<Option<u64>> {
        let Some(alloc) = self
            .mem_alloc_async
            .filter(|_| self.mem_free_async.is_some())
        else {
            return Ok(None);
        };
        let mut ptr = 0u64;
        // SAFETY: out-pointer to a local; the stream is the caller's (NULL:
        // the legacy default stream).
        let rc = unsafe { alloc(&mut ptr, size, stream as Handle) };
        if rc == ERROR_NOT_SUPPORTED {
            return Ok(None);
        }
        self.check(rc, "cuMemAllocAsync")?;
        Ok(Some(ptr))
    }

    /// `cuMemFreeAsync` on `stream`, of memory `mem_alloc_async` gave.
    pub fn mem_free_async(&self, ptr: u64, stream: usize) -> Result<()> {
        let free = self
            .mem_free_async
            .ok_or_else(|| cuda_error("cuMemFreeAsync is missing"))?;
        // SAFETY: the driver checks the pointer and the stream.
        self.check(unsafe { free(ptr, stream as Handle) }, "cuMemFreeAsync")
    }

    /// `cuMemAllocHost`: pinned host memory.
    pub fn mem_alloc_host(&self, size: usize) -> Result<*mut c_void> {
        let mut ptr = core::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        let rc = unsafe { (self.mem_alloc_host)(&mut ptr, size) };
        self.check(rc, "cuMemAllocHost")?;
        Ok(ptr)
    }

    /// `cuMemFreeHost`.
    pub fn mem_free_host(&self, ptr: usize) -> Result<()> {
        // SAFETY: the driver checks the pointer.
        self.check(
            unsafe { (self.mem_free_host)(ptr as *mut c_void) },
            "cuMemFreeHost",
        )
    }
}
