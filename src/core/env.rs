//! The environment API: frontend callbacks (signal checks under the GIL) and
//! per-thread device streams.

use super::error::{Error, Result};
use core::ffi::{c_int, c_void};
use core::mem::transmute;
use std::cell::RefCell;
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
        // SAFETY: per the contract `symbol` has this signature; NULL is None.
        b"PyErr_CheckSignals" => {
            api.check_signals = unsafe { transmute::<*mut c_void, CheckSignals>(symbol) }
        }
        // SAFETY: as above.
        b"PyGILState_Ensure" => {
            api.gil_ensure = unsafe { transmute::<*mut c_void, GilEnsure>(symbol) }
        }
        // SAFETY: as above.
        b"PyGILState_Release" => {
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

thread_local! {
    /// The current stream of each (device_type, device_id) on this thread.
    static STREAMS: RefCell<HashMap<(i32, i32), usize>> = RefCell::new(HashMap::new());
}

/// Sets this thread's stream for a device; returns the previous one.
pub fn set_stream(device_type: i32, device_id: i32, stream: *mut c_void) -> *mut c_void {
    STREAMS
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let old = if stream.is_null() {
                s.remove(&(device_type, device_id))
            } else {
                s.insert((device_type, device_id), stream as usize)
            };
            old.unwrap_or(0) as *mut c_void
        })
        .unwrap_or(core::ptr::null_mut())
}

/// This thread's stream for a device, NULL if none was set.
pub fn get_stream(device_type: i32, device_id: i32) -> *mut c_void {
    STREAMS
        .try_with(|s| {
            s.borrow()
                .get(&(device_type, device_id))
                .copied()
                .unwrap_or(0)
        })
        .unwrap_or(0) as *mut c_void
}
