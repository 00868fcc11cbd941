//! TVM's CUDA modules (kind `cuda`), run through the dlopened driver.
//!
//! A module holds the blob as TVM wrote it (saved back byte for byte) and
//! the code's format, sniffed from its bytes. The code is loaded per device
//! at the first call on that device, into the device's primary context;
//! CUDA source is compiled first with NVRTC for the device's architecture.
//! Each kernel is a function with TVM's calling convention: its arguments,
//! then one integer per grid, block or cluster tag, then the dynamic shared
//! memory size, launched on `TVMFFIEnvGetStream(kDLCUDA, device)` with the
//! attributes TVM sets. Before the first launch on a device the function
//! table is checked against what the code declares (an `.entry` of that
//! name, the parameter sizes): a mismatch is an error, never a launch.

use super::driver::{self, Driver, Handle, LaunchAttributes, LaunchConfig, attr};
use super::loaded::{MAX_DEVICES, PerDevice, current_device, device_pointer};
use super::nvrtc;
use crate::abi::*;
use crate::module::format::cuda_blob::{self, ArgKind, CudaBlob, FunctionInfo, LaunchTags};
use crate::module::format::device_code::{self, CodeFormat, Listing};
use crate::module::format::symbols::property;
use crate::module::objects::module::{Module, ModuleKind};
use crate::runtime::call::function::{Args, Function};
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::Described;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::string::{TextKind, str_bytes_of};
use crate::runtime::model::type_table::type_key_of;
use crate::runtime::value::env;
use core::ffi::{c_int, c_void};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Dynamic shared memory above this needs the kernel's attribute raised.
const DEFAULT_SHARED_LIMIT: u64 = 48 << 10;

/// What a module shares with its kernel functions.
struct Code {
    blob: CudaBlob,
    format: CodeFormat,
    listing: Listing,
    /// The code as the driver takes it (PTX gets its NUL terminator).
    image: Vec<u8>,
    /// The code loaded per device.
    loaded: PerDevice,
    /// Cubins compiled from CUDA source, per architecture.
    compiled: Mutex<HashMap<i32, Arc<Vec<u8>>>>,
}

/// The `cuda` module kind.
pub struct CudaModule {
    code: Arc<Code>,
}

impl CudaModule {
    /// A module of `blob`; the code's format is sniffed (TVM's label is kept
    /// for saving, not trusted).
    pub fn new(blob: CudaBlob) -> Result<CudaModule> {
        let format = device_code::sniff(&blob.code)?;
        let listing = device_code::list(&blob.code)?;
        let mut image = blob.code.clone();
        if format == CodeFormat::Ptx && image.last() != Some(&0) {
            image.push(0);
        }
        Ok(CudaModule {
            code: Arc::new(Code {
                blob,
                format,
                listing,
                image,
                loaded: Default::default(),
                compiled: Mutex::default(),
            }),
        })
    }

    /// `ffi.Module.load_from_bytes.cuda`: a module of a serialized blob.
    pub fn load_from_bytes(bytes: &[u8]) -> Result<Module> {
        Module::new(CudaModule::new(cuda_blob::decode(bytes)?)?)
    }
}

impl Code {
    /// The image to load on a device of compute capability `arch`.
    fn image_for(&self, d: &Driver, device: c_int) -> Result<Arc<Vec<u8>>> {
        if self.format != CodeFormat::CudaSource {
            return Ok(Arc::new(self.image.clone()));
        }
        let arch = d.compute_capability(device)?;
        if let Some(c) = self
            .compiled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&arch)
        {
            return Ok(c.clone());
        }
        // Compiled unlocked; threads that compile at once keep the first.
        let cubin = Arc::new(nvrtc::compile(&self.blob.code, arch)?);
        let mut table = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        Ok(table.entry(arch).or_insert(cubin).clone())
    }
}

impl ModuleKind for CudaModule {
    fn kind(&self) -> &str {
        "cuda"
    }
    fn property_mask(&self) -> i64 {
        property::BINARY_SERIALIZABLE | property::RUNNABLE
    }
    fn get_function(&self, _module: &Module, name: &str) -> Result<Option<Function>> {
        let Some((_, info)) = self.code.blob.functions.iter().find(|(k, _)| k == name) else {
            return Ok(None);
        };
        let kernel = Kernel::new(self.code.clone(), info)?;
        Ok(Some(Function::from_closure(move |args| kernel.call(args))))
    }
    fn implements_function(&self, _module: &Module, name: &str) -> Result<bool> {
        Ok(self.code.blob.functions.iter().any(|(k, _)| k == name))
    }
    fn save_to_bytes(&self) -> Result<Vec<u8>> {
        Ok(cuda_blob::encode(&self.code.blob))
    }
    fn inspect_source(&self, format: &str) -> String {
        let code = &self.code.blob.code;
        let text = || {
            String::from_utf8_lossy(code)
                .trim_end_matches('\0')
                .to_owned()
        };
        let fmt = self.code.blob.fmt.as_str();
        if format == fmt || (format.is_empty() && matches!(fmt, "ptx" | "cuda")) {
            text()
        } else {
            String::new()
        }
    }
}

/// Registers `ffi.Module.load_from_bytes.cuda`, the loader of this kind,
/// yielding to a registration of the same name (TVM's runtime registers
/// its own when imported).
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.yielding(Described::packed(
        "ffi.Module.load_from_bytes.cuda",
        Function::from_closure(|args| {
            args.expect_len("ffi.Module.load_from_bytes.cuda", 1)?;
            let bytes = str_bytes_of(args.get(0), TextKind::Bytes)
                .ok_or_else(|| Error::type_error("ffi.Module.load_from_bytes.cuda takes bytes"))?;
            Ok(Any::from(CudaModule::load_from_bytes(bytes)?.into_object()))
        }),
    ));
}

/// One kernel as a packed function.
struct Kernel {
    code: Arc<Code>,
    info: FunctionInfo,
    name: CString,
    kinds: Vec<ArgKind>,
    tags: LaunchTags,
    launch_names: Vec<String>,
    /// The kernel per device (a `CUfunction`, NULL until the first call).
    functions: [AtomicPtr<c_void>; MAX_DEVICES],
    /// The dynamic shared memory limit set per device.
    shared_limit: [AtomicU32; MAX_DEVICES],
}

/// One launch's extents (TVM's `ThreadWorkLoad`): grid, block, cluster,
/// preferred cluster; then the dynamic shared memory size.
struct Workload {
    dims: [u32; 12],
    shared: u32,
}

impl Kernel {
    fn new(code: Arc<Code>, info: &FunctionInfo) -> Result<Kernel> {
        let tags = info.launch_tags()?;
        Ok(Kernel {
            name: CString::new(info.name.clone())
                .map_err(|_| Error::value(format!("kernel name {:?} holds a NUL", info.name)))?,
            kinds: info.arg_kinds()?,
            launch_names: tags.names(),
            tags,
            code,
            info: info.clone(),
            functions: Default::default(),
            shared_limit: Default::default(),
        })
    }

    fn label(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }

    fn call(&self, args: Args<'_>) -> Result<Any> {
        let want = self.kinds.len() + self.tags.count();
        if args.len() != want {
            return Err(Error::type_error(format!(
                "kernel {} takes {} arguments ({} for the kernel, then {}), got {}",
                self.label(),
                want,
                self.kinds.len(),
                self.launch_names.join(", "),
                args.len()
            )));
        }
        let wl = self.workload(args)?;
        let mut holders = [0u64; 16];
        let mut big: Vec<u64>;
        let values: &mut [u64] = if self.kinds.len() <= holders.len() {
            &mut holders[..self.kinds.len()]
        } else {
            big = vec![0; self.kinds.len()];
            &mut big
        };
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(self.kinds.len());
        for (i, kind) in self.kinds.iter().enumerate() {
            let v = args.get(i);
            match kind {
                ArgKind::TensorMap => {}
                _ => values[i] = self.convert(i, *kind, v)?,
            }
        }
        for (i, kind) in self.kinds.iter().enumerate() {
            pointers.push(match kind {
                ArgKind::TensorMap => self.tensor_map(i, args.get(i))?,
                _ => (&mut values[i] as *mut u64).cast(),
            });
        }
        let d = driver::driver()?;
        let (device, dev) = current_device(d)?;
        let f = self.function_on(d, dev, &wl)?;
        let stream = env::get_stream(kDLCUDA, device);
        self.launch(d, f, &wl, stream, &mut pointers)?;
        Ok(Any::NONE)
    }

    /// The 8-byte holder of argument `i` (4-byte kinds use its low half,
    /// little-endian, as the driver reads them).
    fn convert(&self, i: usize, kind: ArgKind, v: AnyView<'_>) -> Result<u64> {
        let bad = |what: &str| {
            Error::type_error(format!(
                "kernel {}: argument {i} must be {what}, got {}",
                self.label(),
                type_key_of(v.type_index())
            ))
        };
        Ok(match kind {
            ArgKind::I64 => v.as_i64().ok_or_else(|| bad("an int"))? as u64,
            ArgKind::I32 => u64::from(v.as_i64().ok_or_else(|| bad("an int"))? as i32 as u32),
            ArgKind::U32 => u64::from(v.as_i64().ok_or_else(|| bad("an int"))? as u32),
            ArgKind::F64 => v.as_f64().ok_or_else(|| bad("a float"))?.to_bits(),
            ArgKind::F32 => u64::from((v.as_f64().ok_or_else(|| bad("a float"))? as f32).to_bits()),
            ArgKind::Handle => device_pointer(v).ok_or_else(|| {
                bad("a device pointer (an opaque pointer, None, an int address or a tensor)")
            })? as u64,
            ArgKind::TensorMap => unreachable!("passed by address"),
        })
    }

    /// The address of the `CUtensorMap` argument `i` points to.
    fn tensor_map(&self, i: usize, v: AnyView<'_>) -> Result<*mut c_void> {
        match v.as_opaque_ptr() {
            Some(p) if !p.is_null() => Ok(p),
            _ => Err(Error::type_error(format!(
                "kernel {}: argument {i} must point to a CUtensorMap, got {}",
                self.label(),
                type_key_of(v.type_index())
            ))),
        }
    }

    /// Reads the launch integers (TVM's `LaunchParamConfig::Extract`): a
    /// 0 extent is 1, as in TVM; a negative one, or one past 2^32, is an
    /// error.
    fn workload(&self, args: Args<'_>) -> Result<Workload> {
        let base = self.kinds.len();
        let mut wl = Workload {
            dims: [1; 12],
            shared: 0,
        };
        let read = |j: usize| -> Result<u32> {
            let v = args.get(base + j);
            let n = v.as_i64().ok_or_else(|| {
                Error::type_error(format!(
                    "kernel {}: launch argument {} must be an int, got {}",
                    self.label(),
                    self.launch_names[j],
                    type_key_of(v.type_index())
                ))
            })?;
            u32::try_from(n).map_err(|_| {
                Error::value(format!(
                    "kernel {}: launch argument {} = {n} is outside 0..2^32",
                    self.label(),
                    self.launch_names[j]
                ))
            })
        };
        for (j, &dim) in self.tags.dims.iter().enumerate() {
            let n = read(j)?;
            if n > 0 {
                wl.dims[usize::from(dim)] = n;
            }
        }
        if self.tags.dyn_shared_memory {
            wl.shared = read(self.tags.dims.len())?;
        }
        Ok(wl)
    }

    /// The kernel on `dev`, loading the code at the first call and raising
    /// its dynamic shared memory limit when a launch needs more.
    fn function_on(&self, d: &Driver, dev: usize, wl: &Workload) -> Result<Handle> {
        let mut f = self.functions[dev].load(Ordering::Acquire);
        if f.is_null() {
            device_code::check_kernel(
                &self.code.listing,
                self.code.format,
                &self.info,
                &self.kinds,
            )
            .map_err(Error::value)?;
            let m = self
                .code
                .loaded
                .module_on(d, dev, || self.code.image_for(d, dev as c_int))?;
            f = d.function(m, &self.name)?;
            // As TVM: at the first launch of a kernel with a cluster tag,
            // whatever the cluster's size then (a later launch may use a
            // larger one).
            if self.tags.cluster_launch
                && d.set_function_attribute(f, driver::FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                    != 0
            {
                return Err(Error::new(
                    ErrorKind::InternalError,
                    format!(
                        "Failed to allow non-portable CUDA cluster size ({}, {}, {})",
                        wl.dims[6], wl.dims[7], wl.dims[8]
                    ),
                ));
            }
            self.functions[dev].store(f, Ordering::Release);
        }
        if u64::from(wl.shared) >= DEFAULT_SHARED_LIMIT
            && wl.shared > self.shared_limit[dev].load(Ordering::Acquire)
        {
            if d.set_function_attribute(
                f,
                driver::FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                wl.shared as c_int,
            ) != 0
            {
                return Err(Error::new(
                    ErrorKind::InternalError,
                    format!(
                        "Failed to set the allowed dynamic shared memory size to {}",
                        wl.shared
                    ),
                ));
            }
            self.shared_limit[dev].fetch_max(wl.shared, Ordering::AcqRel);
        }
        Ok(f)
    }

    fn launch(
        &self,
        d: &Driver,
        f: Handle,
        wl: &Workload,
        stream: *mut c_void,
        pointers: &mut [*mut c_void],
    ) -> Result<()> {
        let dims = &wl.dims;
        let mut attrs = LaunchAttributes::default();
        let required = self.tags.required_block_dimension;
        if required {
            for i in 0..3 {
                if dims[9 + i] != 1 && dims[9 + i] != dims[6 + i] {
                    return Err(Error::value(
                        "CUDA required block dimensions cannot be combined with a different \
                         preferred cluster size",
                    ));
                }
                if !dims[i].is_multiple_of(dims[6 + i]) {
                    return Err(Error::value(
                        "CUDA required block dimension launch needs each logical block-grid \
                         dimension to be divisible by its compile-time cluster dimension",
                    ));
                }
            }
        }
        if !required && (self.tags.cluster_launch || dims[6..9] != [1, 1, 1]) {
            attrs.push(attr::CLUSTER_DIMENSION, &dims[6..9]);
        }
        if !required && dims[9..12] != [1, 1, 1] {
            attrs.push(attr::PREFERRED_CLUSTER_DIMENSION, &dims[9..12]);
        }
        if self.tags.programmatic_dependent_launch {
            attrs.push(attr::PROGRAMMATIC_STREAM_SERIALIZATION, &[1]);
        }
        if self.tags.cooperative {
            attrs.push(attr::COOPERATIVE, &[1]);
        }
        let (grid, block) = if required {
            (
                [dims[0] / dims[6], dims[1] / dims[7], dims[2] / dims[8]],
                [driver::REQUIRED_BLOCK_DIM, 1, 1],
            )
        } else {
            ([dims[0], dims[1], dims[2]], [dims[3], dims[4], dims[5]])
        };
        // `attrs` stays alive (shadowed) until the launch returns.
        let (attrs, num_attrs) = attrs.as_config();
        let config = LaunchConfig {
            grid,
            block,
            shared_mem_bytes: wl.shared,
            stream,
            attrs,
            num_attrs,
        };
        // SAFETY: one pointer per kernel parameter, each to a holder of the
        // parameter's size (the table was checked against the code's
        // declared sizes), alive for the call.
        let rc = unsafe { d.launch(&config, f, pointers.as_mut_ptr()) };
        if rc == 0 || rc == driver::ERROR_DEINITIALIZED {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InternalError,
            format!(
                "CUDALaunch Error: {} (CUDA driver)\n grid=({},{},{}),  block=({},{},{}) kernel {}",
                d.error_name(rc),
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                self.label()
            ),
        ))
    }
}
