//! The environment API: frontend callbacks (signal checks under the GIL) and
//! per-thread device streams.

use crate::abi::{DLPackManagedTensorAllocator, DLTensor};
use crate::runtime::model::error::{Error, Result};
use core::ffi::{c_int, c_void};
use core::mem::transmute;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::RwLock;

type CheckSignals = Option<unsafe extern "C" fn() -> c_int>;
type GilEnsure = Option<unsafe extern "C" fn() -> *mut c_void>;
type GilRelease = Option<unsafe extern "C" fn(*mut c_void)>;

/// Frontend functions registered with `TVMFFIEnvRegisterCAPI`.
#[derive(Clone, Copy)]
struct FrontendApi {
    check_signals: CheckSignals,
    gil_ensure: GilEnsure,
    gil_release: GilRelease,
}

static FRONTEND: RwLock<FrontendApi> = RwLock::new(FrontendApi {
    check_signals: None,
    gil_ensure: None,
    gil_release: None,
});

/// Registers a frontend function by its well-known name.
///
/// # Safety
/// `symbol` is NULL or a function with the signature the name implies.
pub unsafe fn register_capi(name: &[u8], symbol: *mut c_void) -> Result<()> {
    let mut api = FRONTEND.write().unwrap_or_else(|e| e.into_inner());
    match name {
        b"PyErr_CheckSignals" => {
            // SAFETY: per the contract `symbol` has this signature; NULL is None.
            api.check_signals = unsafe { transmute::<*mut c_void, CheckSignals>(symbol) }
        }
        b"PyGILState_Ensure" => {
            // SAFETY: as above.
            api.gil_ensure = unsafe { transmute::<*mut c_void, GilEnsure>(symbol) }
        }
        b"PyGILState_Release" => {
            // SAFETY: as above.
            api.gil_release = unsafe { transmute::<*mut c_void, GilRelease>(symbol) }
        }
        _ => {
            return Err(Error::value(format!(
                "Unknown env API {}",
                String::from_utf8_lossy(name)
            )));
        }
    }
    Ok(())
}

/// Asks the frontend whether a signal (e.g. Ctrl-C) arrived: 0 if not or if
/// no frontend is registered, -1 if the frontend raised an error of its own.
pub fn check_signals() -> c_int {
    let api = *FRONTEND.read().unwrap_or_else(|e| e.into_inner());
    let Some(check) = api.check_signals else {
        return 0;
    };
    // SAFETY: registered by the frontend with these signatures; the GIL is
    // held (when the frontend gave us the means) around the check.
    unsafe {
        let state = api.gil_ensure.map(|ensure| ensure());
        let code = check();
        if let (Some(release), Some(state)) = (api.gil_release, state) {
            release(state);
        }
        if code != 0 { -1 } else { 0 }
    }
}

/// Device types and ids below these bounds keep their stream in a plain
/// per-thread table, so a lookup is an array index (kernels call
/// `TVMFFIEnvGetStream` on every launch); other devices use a map.
const FAST_TYPES: usize = 32;
const FAST_IDS: usize = 16;

/// A thread's streams of the common devices, by device type and id.
type FastStreams = [[Cell<usize>; FAST_IDS]; FAST_TYPES];

thread_local! {
    /// The common devices' streams (const-initialised and without a
    /// destructor, so reaching it costs no lazy set-up).
    static FAST_STREAMS: FastStreams =
        const { [const { [const { Cell::new(0) }; FAST_IDS] }; FAST_TYPES] };
    /// The streams of other (device_type, device_id) pairs.
    static STREAMS: RefCell<HashMap<(i32, i32), usize>> = RefCell::new(HashMap::new());
}

/// The fast-table slot of a device, if it has one.
#[inline]
fn fast_slot(device_type: i32, device_id: i32) -> Option<(usize, usize)> {
    let (t, i) = (device_type as u32 as usize, device_id as u32 as usize);
    (t < FAST_TYPES && i < FAST_IDS).then_some((t, i))
}

/// Device types and ids a stream can be set for: `0..STREAM_BOUND`. The
/// reference keeps a table indexed by both, grown to the largest asked for
/// (24 bytes per device type, 8 per id, for the thread's life): a negative
/// type fails there (-1), a negative id crashes, and beyond this bound the
/// table takes tens of megabytes to gigabytes, or fails.
const STREAM_BOUND: i32 = 1 << 20;

/// Sets this thread's stream for a device; returns the previous one. A
/// device type or id outside `0..2^20` is an `InternalError` (the
/// reference's kind for a negative type).
pub fn set_stream(device_type: i32, device_id: i32, stream: *mut c_void) -> Result<*mut c_void> {
    for (what, value) in [("device_type", device_type), ("device_id", device_id)] {
        if !(0..STREAM_BOUND).contains(&value) {
            return Err(Error::new(
                crate::runtime::model::error::ErrorKind::InternalError,
                format!(
                    "TVMFFIEnvSetStream: {what} {value} is out of range (0 to {})",
                    STREAM_BOUND - 1
                ),
            ));
        }
    }
    if let Some((t, i)) = fast_slot(device_type, device_id) {
        return Ok(FAST_STREAMS
            .try_with(|s| s[t][i].replace(stream as usize))
            .unwrap_or(0) as *mut c_void);
    }
    Ok(STREAMS
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let old = if stream.is_null() {
                s.remove(&(device_type, device_id))
            } else {
                s.insert((device_type, device_id), stream as usize)
            };
            old.unwrap_or(0) as *mut c_void
        })
        .unwrap_or(core::ptr::null_mut()))
}

/// This thread's stream for a device, NULL if none was set.
#[inline]
pub fn get_stream(device_type: i32, device_id: i32) -> *mut c_void {
    if let Some((t, i)) = fast_slot(device_type, device_id) {
        return FAST_STREAMS.with(|s| s[t][i].get()) as *mut c_void;
    }
    get_stream_slow(device_type, device_id)
}

#[cold]
#[inline(never)]
fn get_stream_slow(device_type: i32, device_id: i32) -> *mut c_void {
    STREAMS
        .try_with(|s| {
            s.borrow()
                .get(&(device_type, device_id))
                .copied()
                .unwrap_or(0)
        })
        .unwrap_or(0) as *mut c_void
}

/// The allocator every thread falls back to.
static GLOBAL_ALLOCATOR: RwLock<DLPackManagedTensorAllocator> = RwLock::new(None);

thread_local! {
    /// This thread's allocator, if set.
    static ALLOCATOR: core::cell::Cell<DLPackManagedTensorAllocator> = const { core::cell::Cell::new(None) };
}

/// Sets this thread's DLPack allocator (and the process-wide fallback when
/// `write_global`); returns the thread's previous one.
pub fn set_allocator(
    allocator: DLPackManagedTensorAllocator,
    write_global: bool,
) -> DLPackManagedTensorAllocator {
    if write_global {
        *GLOBAL_ALLOCATOR.write().unwrap_or_else(|e| e.into_inner()) = allocator;
    }
    ALLOCATOR.try_with(|a| a.replace(allocator)).unwrap_or(None)
}

/// This thread's allocator, else the process-wide one.
pub fn get_allocator() -> DLPackManagedTensorAllocator {
    ALLOCATOR
        .try_with(|a| a.get())
        .ok()
        .flatten()
        .or_else(|| *GLOBAL_ALLOCATOR.read().unwrap_or_else(|e| e.into_inner()))
}

/// `SetError` callback handed to allocators: raises the error they report.
unsafe extern "C" fn allocator_set_error(
    _ctx: *mut c_void,
    kind: *const core::ffi::c_char,
    message: *const core::ffi::c_char,
) {
    let text = |p: *const core::ffi::c_char| {
        if p.is_null() {
            Vec::new()
        } else {
            // SAFETY: the allocator passes NUL-terminated strings (or NULL).
            unsafe { core::ffi::CStr::from_ptr(p) }.to_bytes().to_vec()
        }
    };
    crate::runtime::model::boundary::catch_or((), || {
        let err =
            crate::runtime::model::error::new_error(&text(kind), &text(message), b"", None, None);
        crate::runtime::model::error::set_raised(err);
    });
}

/// Allocates a tensor like `prototype` with the environment allocator.
///
/// # Safety
/// `prototype` is a valid DLTensor for the call.
pub unsafe fn tensor_alloc(
    prototype: *mut DLTensor,
) -> Result<crate::runtime::model::object::ObjectRef> {
    let Some(alloc) = get_allocator() else {
        return Err(Error::runtime(
            "TVMFFIEnvTensorAlloc: allocator is nullptr, likely because \
             TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.",
        ));
    };
    let mut managed = core::ptr::null_mut();
    // SAFETY: the allocator follows the DLPack allocator contract.
    let code = unsafe {
        alloc(
            prototype,
            &mut managed,
            core::ptr::null_mut(),
            Some(allocator_set_error),
        )
    };
    if code != 0 {
        return Err(Error::from_raised(code));
    }
    if managed.is_null() {
        return Err(Error::runtime(
            "TVMFFIEnvTensorAlloc: failed to allocate a tensor from the allocator",
        ));
    }
    // SAFETY: the allocator handed over a valid managed tensor.
    unsafe { crate::runtime::value::tensor::from_allocator(managed) }
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    #[test]
    fn streams_in_and_beyond_the_table_and_per_thread() {
        let devices = [
            (2, 0),
            (2, 15),
            (2, 16),
            (31, 0),
            (32, 0),
            (1000, 7),
            (STREAM_BOUND - 1, STREAM_BOUND - 1),
        ];
        for (n, &(t, i)) in devices.iter().enumerate() {
            let s = (0x100 + n) as *mut c_void;
            assert!(set_stream(t, i, s).unwrap().is_null());
            assert_eq!(get_stream(t, i), s);
            assert_eq!(set_stream(t, i, core::ptr::null_mut()).unwrap(), s);
            assert!(get_stream(t, i).is_null());
        }
        for (t, i) in [(2, -1), (-5, 2), (STREAM_BOUND, 0), (0, STREAM_BOUND)] {
            let refused = set_stream(t, i, 0x7 as *mut c_void).unwrap_err();
            assert!(
                refused
                    .to_string()
                    .contains("is out of range (0 to 1048575)")
            );
            assert!(get_stream(t, i).is_null());
        }
        set_stream(2, 3, 0x42 as *mut c_void).unwrap();
        let other = std::thread::spawn(|| get_stream(2, 3) as usize)
            .join()
            .unwrap();
        assert_eq!((other, get_stream(2, 3) as usize), (0, 0x42));
        set_stream(2, 3, core::ptr::null_mut()).unwrap();
    }
}
