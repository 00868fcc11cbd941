//! One Triton kernel, launched as the launcher of the Triton release that
//! compiled it launches it (the differences between releases are in
//! [`super::release`]):
//!
//! - the call is `(grid_x, grid_y, grid_z, <the runtime parameters>)`:
//!   pointers (`*fp32`) from tensors (their dtype and a CUDA device checked),
//!   integer addresses, opaque pointers or None; scalars by their declared
//!   width (i1 as 4 bytes, fp16 packed as Python packs it, bf16 as the top
//!   half of the float32, as Triton does); then the hidden trailing
//!   pointers the release appends (global scratch, profile scratch), each
//!   NULL when its size is 0, else `grid × programs per cluster × size`
//!   bytes allocated stream-ordered for the launch;
//! - block `warp_size × num_warps`, the grid times the cluster's shape,
//!   dynamic shared memory `shared`, on `TVMFFIEnvGetStream` of the current
//!   device; a cluster (spread scheduling) when `num_ctas` > 1, programmatic
//!   stream serialization for `launch_pdl`, cooperative for
//!   `launch_cooperative_grid`, as far as the release reads them;
//! - at the first launch on a device, the cubin is loaded and, above 48 KiB
//!   of shared memory where the device allows more, the kernel's limit is
//!   raised as the release raises it.
//!
//! A wrong count, a float for an int, a tensor of another dtype or device,
//! a grid axis of 0 or past the device's limits: an error naming the
//! parameter before the driver is called.

use crate::abi::*;
use crate::module::backend::workspace;
use crate::module::cuda::driver::{self, Driver, Handle, LaunchAttributes, LaunchConfig, attr};
use crate::module::cuda::loaded::{
    MAX_DEVICES, PerDevice, current_device, device_pointer, tensor_of,
};
use crate::module::format::device_code::{self, CodeFormat, SymbolKind};
use crate::module::format::triton_cache::{Metadata, ParamType, Scalar, Scratch, Signature};
use crate::module::triton::release::Release;
use crate::runtime::call::function::Args;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::type_table::type_key_of;
use crate::runtime::value::env;
use core::ffi::{c_int, c_uint, c_void};
use std::ffi::CString;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Dynamic shared memory above this needs the kernel's mode raised.
const DEFAULT_SHARED_LIMIT: u32 = 48 << 10;
/// Above this a launch asks for oversized shared memory (Triton's 228 KiB).
const OVERSIZED_SHARED: u32 = 228 << 10;
/// The grid's limits per axis (x counts programs times `num_ctas`).
const GRID_LIMITS: [u64; 3] = [(1 << 31) - 1, 65535, 65535];
const GRID_NAMES: [&str; 3] = ["grid_x", "grid_y", "grid_z"];
/// Scratch is allocated stream-ordered, aligned to at least this.
const SCRATCH_ALIGN: u64 = 256;

/// A Triton kernel: its cubin, metadata and signature, checked against
/// each other, and its function per device.
pub struct TritonKernel {
    meta: Metadata,
    release: Release,
    signature: Signature,
    cubin: Arc<Vec<u8>>,
    name: CString,
    loaded: PerDevice,
    functions: [AtomicPtr<c_void>; MAX_DEVICES],
}

impl TritonKernel {
    /// A kernel of `cubin` described by `meta` and `signature`: the release
    /// must be one whose launch is known, the names must agree, the cubin
    /// must declare the kernel as an entry with the parameters the
    /// signature and the release's hidden ones make.
    pub fn new(cubin: Vec<u8>, meta: Metadata, signature: Signature) -> Result<TritonKernel> {
        let release = Release::of(&meta)?;
        let who = format!("Triton kernel {}", meta.name);
        if signature.name != meta.name {
            return Err(Error::value(format!(
                "{who}: the signature is of {}, the metadata of {}",
                signature.name, meta.name
            )));
        }
        for s in release.scratches(&meta).into_iter().flatten() {
            if s.align > SCRATCH_ALIGN {
                return Err(Error::value(format!(
                    "{who}: a scratch alignment of {} bytes is more than the {SCRATCH_ALIGN} \
                     this runtime's allocations guarantee",
                    s.align
                )));
            }
        }
        let format = device_code::sniff(&cubin)?;
        if format != CodeFormat::Cubin {
            return Err(Error::value(format!(
                "{who}: the code is {}, not a cubin",
                format.name()
            )));
        }
        let listing = device_code::list(&cubin)?;
        let symbol = listing.find(&meta.name).ok_or_else(|| {
            Error::value(format!("{who}: the cubin declares no kernel of that name"))
        })?;
        if symbol.kind != SymbolKind::Entry {
            return Err(Error::value(format!(
                "{who}: the cubin declares it a device function, not a kernel entry"
            )));
        }
        let kernel = TritonKernel {
            name: CString::new(meta.name.clone())
                .map_err(|_| Error::value(format!("{who}: the name holds a NUL")))?,
            meta,
            release,
            signature,
            cubin: Arc::new(cubin),
            loaded: PerDevice::default(),
            functions: Default::default(),
        };
        let want = kernel.param_sizes();
        if let Some(sizes) = &symbol.param_sizes
            && *sizes != want
        {
            return Err(Error::value(format!(
                "{who}: the signature ({}) and {} hidden parameter(s) make parameters of {want:?} \
                 bytes; the cubin declares {sizes:?}",
                kernel.spelled(),
                kernel.hidden()
            )));
        }
        Ok(kernel)
    }

    /// The kernel's symbol.
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// How many hidden trailing pointers the release appends.
    fn hidden(&self) -> usize {
        self.release.hidden()
    }

    /// The cluster's shape, by which the grid is multiplied ([1, 1, 1] for
    /// a kernel of one program per cluster).
    fn cluster(&self) -> [u32; 3] {
        if self.meta.num_ctas == 1 {
            [1, 1, 1]
        } else {
            self.release.cluster(&self.meta)
        }
    }

    /// The size of every kernel parameter, hidden ones included.
    fn param_sizes(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = self
            .signature
            .params
            .iter()
            .map(|p| size_of_param(p.ty))
            .collect();
        sizes.extend(std::iter::repeat_n(8, self.hidden()));
        sizes
    }

    /// The parameters as Triton spells them.
    fn spelled(&self) -> String {
        self.signature
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty.spelling()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// One line per fact, for the inspector.
    pub fn describe(&self) -> Vec<String> {
        let m = &self.meta;
        let mut out = vec![
            format!("kernel {}({})", m.name, self.spelled()),
            format!(
                "Triton {}, sm_{}, num_warps {}, num_ctas {}, shared {} bytes",
                m.release(),
                m.arch,
                m.num_warps,
                m.num_ctas,
                m.shared
            ),
        ];
        if m.num_ctas != 1 {
            let [x, y, z] = self.cluster();
            out.push(format!(
                "cluster: {x}x{y}x{z} programs (the grid is multiplied by it)"
            ));
        }
        let [global, profile] = self.release.scratches(m);
        for (which, s) in [("global", global), ("profile", profile)] {
            if let Some(s) = s {
                out.push(format!(
                    "{which} scratch: {} bytes per program, aligned to {}",
                    s.size, s.align
                ));
            }
        }
        if m.launch_pdl || m.launch_cooperative_grid {
            out.push(format!(
                "launch: programmatic dependent {}, cooperative {}",
                m.launch_pdl, m.launch_cooperative_grid
            ));
        }
        out.push(format!(
            "cubin: an entry with parameters of {:?} bytes (the signature and {} hidden), as the signature says",
            self.param_sizes(),
            self.hidden()
        ));
        out
    }

    /// A launch: see the module docs.
    pub fn call(&self, args: Args<'_>) -> Result<Any> {
        let who = || format!("Triton kernel {}", self.meta.name);
        let params = &self.signature.params;
        if args.len() != 3 + params.len() {
            return Err(Error::type_error(format!(
                "{} takes {} arguments (grid_x, grid_y, grid_z, then {}), got {}",
                who(),
                3 + params.len(),
                self.spelled(),
                args.len()
            )));
        }
        let cluster = self.cluster();
        let mut grid = [0u32; 3];
        for (i, g) in grid.iter_mut().enumerate() {
            let v = args.get(i);
            let n = v
                .as_i64()
                .filter(|_| v.type_index() == kTVMFFIInt)
                .ok_or_else(|| {
                    Error::type_error(format!(
                        "{}: {} must be an int, got {}",
                        who(),
                        GRID_NAMES[i],
                        type_key_of(v.type_index())
                    ))
                })?;
            let limit = GRID_LIMITS[i] / u64::from(cluster[i]);
            *g = u64::try_from(n)
                .ok()
                .filter(|n| (1..=limit).contains(n))
                .ok_or_else(|| {
                    Error::value(format!(
                        "{}: {} = {n} is outside 1..={limit}",
                        who(),
                        GRID_NAMES[i]
                    ))
                })? as u32;
        }
        let mut holders: Vec<u64> = params
            .iter()
            .enumerate()
            .map(|(i, p)| self.convert(p.ty, &p.name, args.get(3 + i)))
            .collect::<Result<_>>()?;
        let d = driver::driver()?;
        let (device, dev) = current_device(d)?;
        // At most 2^31 × 2^16 × 2^16 cells: times 16 programs this may
        // saturate, and the scratch's size then overflows (an error).
        let programs = (u64::from(grid[0]) * u64::from(grid[1]) * u64::from(grid[2]))
            .saturating_mul(self.release.scratch_programs_per_cell(&self.meta));
        let scratch = Scratches::new(device, &self.meta, self.release, programs)?;
        holders.extend_from_slice(&scratch.pointers[..self.hidden()]);
        let mut pointers: Vec<*mut c_void> =
            holders.iter_mut().map(|h| (h as *mut u64).cast()).collect();
        let f = self.function_on(d, device, dev)?;
        let grid = [0, 1, 2].map(|i| grid[i] * cluster[i]);
        self.launch(d, f, grid, env::get_stream(kDLCUDA, device), &mut pointers)?;
        scratch.free()?;
        Ok(Any::NONE)
    }

    /// The 8-byte holder of a parameter (smaller ones in its low bytes, as
    /// the driver reads them on a little-endian machine).
    fn convert(&self, ty: ParamType, name: &str, v: AnyView<'_>) -> Result<u64> {
        let bad = |what: &str| {
            Error::type_error(format!(
                "Triton kernel {}: parameter {name} ({}) must be {what}, got {}",
                self.meta.name,
                ty.spelling(),
                type_key_of(v.type_index())
            ))
        };
        match ty {
            ParamType::Pointer(elem) => {
                self.check_tensor(elem, name, v)?;
                device_pointer(v)
                    .map(|p| p as u64)
                    .ok_or_else(|| bad("a tensor, an int address, an opaque pointer or None"))
            }
            ParamType::Value(s) if s.is_float() => {
                let x = match v.type_index() {
                    kTVMFFIFloat | kTVMFFIInt | kTVMFFIBool => v.as_f64(),
                    _ => None,
                }
                .ok_or_else(|| bad("a float"))?;
                Ok(match s {
                    Scalar::F16 => u64::from(f16_bits(x).ok_or_else(|| {
                        Error::value(format!(
                            "Triton kernel {}: parameter {name} (fp16) = {x} is too large for fp16",
                            self.meta.name
                        ))
                    })?),
                    Scalar::BF16 => u64::from(((x as f32).to_bits() >> 16) as u16),
                    Scalar::F32 => u64::from((x as f32).to_bits()),
                    _ => x.to_bits(),
                })
            }
            ParamType::Value(s) => {
                if !matches!(v.type_index(), kTVMFFIInt | kTVMFFIBool) {
                    return Err(bad("an int"));
                }
                let n = v.as_i64().ok_or_else(|| bad("an int"))?;
                let bits = 8 * size_of_param(ty) as u32;
                // Signed or unsigned of the width (TTIR drops signedness).
                let fits = bits == 64 || (n >= -(1i64 << (bits - 1)) && n < (1i64 << bits));
                if !fits {
                    return Err(Error::value(format!(
                        "Triton kernel {}: parameter {name} ({}) = {n} does not fit {bits} bits",
                        self.meta.name,
                        s.name()
                    )));
                }
                Ok(if bits == 64 {
                    n as u64
                } else {
                    (n as u64) & ((1u64 << bits) - 1)
                })
            }
        }
    }

    /// A tensor handed for a pointer parameter must hold `elem`s on a CUDA
    /// device (device memory, pinned host or managed memory).
    fn check_tensor(&self, elem: Scalar, name: &str, v: AnyView<'_>) -> Result<()> {
        let t = tensor_of(v);
        let Some(t) = t else { return Ok(()) };
        let (code, bits) = elem.dlpack();
        let who = || {
            format!(
                "Triton kernel {}: parameter {name} (*{})",
                self.meta.name,
                elem.name()
            )
        };
        if t.dtype.code != code || t.dtype.bits != bits || t.dtype.lanes != 1 {
            return Err(Error::type_error(format!(
                "{}: the tensor holds {}",
                who(),
                crate::runtime::value::dtype::to_string(t.dtype)
                    .unwrap_or_else(|_| "another type".into())
            )));
        }
        if !matches!(t.device.device_type, kDLCUDA | kDLCUDAHost | kDLCUDAManaged) {
            return Err(Error::value(format!(
                "{}: the tensor is on device type {}, not a CUDA device",
                who(),
                t.device.device_type
            )));
        }
        Ok(())
    }

    /// The kernel on `dev`, loading the cubin at the first launch there.
    fn function_on(&self, d: &Driver, device: c_int, dev: usize) -> Result<Handle> {
        let f = self.functions[dev].load(Ordering::Acquire);
        if !f.is_null() {
            return Ok(f);
        }
        let m = self.loaded.module_on(d, dev, || Ok(self.cubin.clone()))?;
        let f = d.function(m, &self.name)?;
        if self.meta.shared > DEFAULT_SHARED_LIMIT {
            let optin =
                d.device_attribute(device, driver::DEVICE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
            if optin > DEFAULT_SHARED_LIMIT as c_int
                && (!self.release.shared_memory_mode()
                    || d.set_function_attribute(
                        f,
                        driver::FUNC_SHARED_MEMORY_MODE,
                        driver::SHARED_MEMORY_MODE_ALLOW_OVERSIZED,
                    ) != 0)
            {
                // Before 3.8, or a driver without the shared memory mode.
                d.set_cache_config(f, driver::FUNC_CACHE_PREFER_SHARED)?;
                let fixed = d.function_attribute(f, driver::FUNC_SHARED_SIZE_BYTES)?;
                let rc = d.set_function_attribute(
                    f,
                    driver::FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    optin - fixed,
                );
                d.check(rc, "cuFuncSetAttribute")?;
            }
        }
        self.functions[dev].store(f, Ordering::Release);
        Ok(f)
    }

    fn launch(
        &self,
        d: &Driver,
        f: Handle,
        grid: [u32; 3],
        stream: *mut c_void,
        pointers: &mut [*mut c_void],
    ) -> Result<()> {
        let (m, r) = (&self.meta, self.release);
        let mut attrs = LaunchAttributes::default();
        if r.shared_memory_mode() && m.shared > OVERSIZED_SHARED {
            attrs.push(
                attr::SHARED_MEMORY_MODE,
                &[driver::SHARED_MEMORY_MODE_ALLOW_OVERSIZED as c_uint],
            );
        }
        if r.programmatic() && m.launch_pdl {
            attrs.push(attr::PROGRAMMATIC_STREAM_SERIALIZATION, &[1]);
        }
        let cooperative = r.cooperative() && m.launch_cooperative_grid;
        if cooperative && !r.cooperative_last() {
            attrs.push(attr::COOPERATIVE, &[1]);
        }
        if m.num_ctas != 1 {
            attrs.push(attr::CLUSTER_DIMENSION, &self.cluster());
            attrs.push(attr::CLUSTER_SCHEDULING_POLICY_PREFERENCE, &[1]);
        }
        if cooperative && r.cooperative_last() {
            attrs.push(attr::COOPERATIVE, &[1]);
        }
        if r.non_portable_16() && m.num_ctas == 16 {
            let rc = d.set_function_attribute(f, driver::FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
            d.check(rc, "cuFuncSetAttribute")?;
        }
        // `attrs` stays alive (shadowed) until the launch returns.
        let (attrs, num_attrs) = attrs.as_config();
        let config = LaunchConfig {
            grid,
            block: [m.block(), 1, 1],
            shared_mem_bytes: m.shared,
            stream,
            attrs,
            num_attrs,
        };
        let plain = r.plain_launch() && num_attrs == 0;
        // SAFETY: one pointer per kernel parameter, each to an 8-byte holder
        // of at least the parameter's size (the cubin's declared sizes were
        // checked against the signature), alive for the call.
        let rc = unsafe {
            if plain {
                d.launch_plain(&config, f, pointers.as_mut_ptr())
            } else {
                d.launch(&config, f, pointers.as_mut_ptr())
            }
        };
        if rc == 0 {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InternalError,
            format!(
                "Triton kernel {}: {} failed with error {} (grid ({},{},{}), block {})",
                m.name,
                if plain {
                    "cuLaunchKernel"
                } else {
                    "cuLaunchKernelEx"
                },
                d.error_name(rc),
                config.grid[0],
                config.grid[1],
                config.grid[2],
                m.block()
            ),
        ))
    }
}

/// A parameter's size as the release's launcher passes it (i1 as an int32,
/// as Triton 3.9 does).
fn size_of_param(ty: ParamType) -> usize {
    match ty {
        ParamType::Value(Scalar::I1) => 4,
        t => t.size(),
    }
}

/// The scratch buffers of one launch, in parameter order (0 for none),
/// freed stream-ordered after it.
struct Scratches {
    device: c_int,
    pointers: [u64; 2],
}

impl Scratches {
    /// The release's buffers for `programs` programs.
    fn new(device: c_int, meta: &Metadata, release: Release, programs: u64) -> Result<Scratches> {
        let mut out = Scratches {
            device,
            pointers: [0; 2],
        };
        for (i, (s, which)) in release
            .scratches(meta)
            .into_iter()
            .zip(["global", "profile"])
            .enumerate()
        {
            match Self::alloc(device, meta, s.unwrap_or_default(), which, programs) {
                Ok(p) => out.pointers[i] = p,
                Err(e) => {
                    let _ = out.free();
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    fn alloc(
        device: c_int,
        meta: &Metadata,
        s: Scratch,
        which: &str,
        programs: u64,
    ) -> Result<u64> {
        if s.size == 0 {
            return Ok(0);
        }
        let bytes = programs.checked_mul(s.size).ok_or_else(|| {
            Error::value(format!(
                "Triton kernel {}: the {which} scratch of {programs} programs overflows",
                meta.name
            ))
        })?;
        Ok(workspace::alloc_workspace(kDLCUDA, device, bytes)? as u64)
    }

    fn free(self) -> Result<()> {
        for p in self.pointers.into_iter().filter(|&p| p != 0) {
            workspace::free_workspace(kDLCUDA, self.device, p as *mut c_void)?;
        }
        Ok(())
    }
}

/// `x` as IEEE half-precision bits, rounded to nearest even as Python's
/// `PyFloat_Pack2` packs it; `None` when it is too large (Python's
/// OverflowError). NaN and the infinities keep their sign.
fn f16_bits(x: f64) -> Option<u16> {
    let sign = u16::from(x.is_sign_negative()) << 15;
    if x.is_nan() {
        return Some(sign | 0x7e00);
    }
    if x.is_infinite() {
        return Some(sign | 0x7c00);
    }
    let a = x.abs();
    if a == 0.0 {
        return Some(sign);
    }
    // a = f × 2^e with 1 <= f < 2 (an f64 subnormal is far below half's).
    let raw = ((a.to_bits() >> 52) & 0x7ff) as i32;
    if raw == 0 {
        return Some(sign);
    }
    let mut e = raw - 1023;
    let mut f = f64::from_bits((a.to_bits() & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if e >= 16 {
        return None;
    } else if e < -25 {
        f = 0.0;
        e = 0;
    } else if e < -14 {
        f *= 2f64.powi(14 + e);
        e = 0;
    } else {
        e += 15;
        f -= 1.0;
    }
    f *= 1024.0;
    let mut bits = f as u16;
    let rest = f - f64::from(bits);
    if rest > 0.5 || (rest == 0.5 && bits % 2 == 1) {
        bits += 1;
        if bits == 1024 {
            bits = 0;
            e += 1;
            if e == 31 {
                return None;
            }
        }
    }
    Some(sign | ((e as u16) << 10) | bits)
}

#[cfg(test)]
mod tests {
    use super::f16_bits;

    #[test]
    fn fp16_packs_as_python_does() {
        for (x, bits) in [
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (0.1, 0x2e66),
            (65504.0, 0x7bff),
            (6.0e-8, 0x0001),
            (1e-9, 0x0000),
            (0.333251953125, 0x3555),
            (f64::INFINITY, 0x7c00),
        ] {
            assert_eq!(f16_bits(x), Some(bits), "{x}");
        }
        assert_eq!(f16_bits(65520.0), None, "rounds past the largest half");
        assert_eq!(f16_bits(1e10), None);
    }
}
