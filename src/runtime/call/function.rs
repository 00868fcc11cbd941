//! Function objects: `{TVMFFIObject, TVMFFIFunctionCell, ...}`.
//!
//! Functions this library makes leave `cpp_call` NULL, so C++ code compiled
//! with the official headers always goes through `safe_call`.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::boundary::{catch_to_code, failed_call};
use crate::runtime::model::error::{Error, Result};
use crate::runtime::model::object::{ObjBox, ObjectRef, new_object};
use core::ffi::{c_int, c_void};
use core::sync::atomic::AtomicUsize;
#[cfg(tvm_ffi_fast_call)]
use core::sync::atomic::Ordering;

/// A strong reference to a Function object (ours or foreign).
#[derive(Clone, Debug)]
pub struct Function(ObjectRef);

/// The arguments of a packed call, borrowed for its duration.
#[derive(Clone, Copy)]
pub struct Args<'a>(&'a [TVMFFIAny]);

impl<'a> Args<'a> {
    /// The number of arguments.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Checks the argument count for function `name`.
    pub fn expect_len(&self, name: &str, n: usize) -> Result<()> {
        if self.0.len() == n {
            Ok(())
        } else {
            Err(Error::type_error(format!(
                "Mismatched number of arguments when calling: `{name}`. Expected {n} but got {}",
                self.0.len()
            )))
        }
    }
    /// The `i`-th argument (the count was checked with `expect_len`).
    pub fn get(&self, i: usize) -> AnyView<'a> {
        // SAFETY: the caller of the packed function guarantees every argument
        // is valid for the call (the `TVMFFISafeCallType` contract).
        unsafe { AnyView::from_raw(&self.0[i]) }
    }
}

/// The error for argument `i` of function `name` not being `expected`.
pub fn arg_type_error(name: &str, i: usize, expected: &str, got: AnyView<'_>) -> Error {
    Error::type_error(format!(
        "Mismatched type on argument #{i} when calling: `{name}`. Expected `{expected}` but got `{}`",
        crate::runtime::model::type_table::type_key_of(got.type_index())
    ))
}

/// A non-NULL `TVMFFISafeCallType`.
pub type SafeCallFn =
    unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, i32, *mut TVMFFIAny) -> c_int;

/// A function backed by a C `safe_call` with its own `self` and deleter.
#[repr(C)]
struct ExternC {
    cell: TVMFFIFunctionCell,
    this: *mut c_void,
    safe_call: SafeCallFn,
    deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    /// The first thread to call it (its thread pointer; 0 while none, 1
    /// while being claimed) and that thread's callback floor: the
    /// trampoline's stack check without a call. Claimed once, floor first,
    /// then owner, and never changed: a reader that sees its own thread
    /// pointer sees its floor.
    #[cfg_attr(
        not(tvm_ffi_fast_call),
        allow(dead_code, reason = "the portable trampoline keeps no floor")
    )]
    owner: AtomicUsize,
    #[cfg_attr(
        not(tvm_ffi_fast_call),
        allow(dead_code, reason = "the portable trampoline keeps no floor")
    )]
    floor: AtomicUsize,
}

// SAFETY: the C side promises its function may be called and released from
// any thread, as for every TVM-FFI function.
unsafe impl Send for ExternC {}
// SAFETY: see `Send`.
unsafe impl Sync for ExternC {}

impl Drop for ExternC {
    fn drop(&mut self) {
        if let Some(deleter) = self.deleter {
            // SAFETY: runs exactly once, when the function object dies.
            unsafe { deleter(self.this) };
        }
    }
}

/// The callback floor (see
/// [`stack::thread_floor`](crate::runtime::model::depth::thread_floor)) of
/// the thread on the process's initial stack, set the first time it calls
/// an [`ExternC`] function; `usize::MAX` before. No other thread's stack
/// lies above it: the initial stack is the highest mapping of the process
/// (the kernel places every other mapping, thread stacks and signal stacks
/// included, below the gap it leaves under it), so a stack pointer at or
/// above this floor is that thread's, with room to call.
#[cfg(tvm_ffi_fast_call)]
static MAIN_FLOOR: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The offset of an [`ExternC`] field from the function object's handle,
/// for the naked trampolines' operands.
#[cfg(tvm_ffi_fast_call)]
macro_rules! extern_c_at {
    ($field:ident) => {
        ObjBox::<ExternC>::PAYLOAD_OFFSET + core::mem::offset_of!(ExternC, $field)
    };
}

/// The call of an [`ExternC`] function's C callee from a naked trampoline,
/// with `rdi` the live function object and the other arguments in place:
/// pushes the callee's address (which also aligns the stack for the call),
/// calls it with `this`, and returns its code; a failure goes to
/// [`failed_call`], which raises an error for a callee that answered a
/// failure and raised none. Seven instructions on success, where a tail
/// call takes three: the callee's code has to come back through here to be
/// seen at all. CFI keeps the frame walkable for unwinders and backtraces.
#[cfg(tvm_ffi_fast_call)]
macro_rules! call_extern_c_checked {
    () => {
        concat!(
            "push qword ptr [rdi + {safe_call}]\n",
            ".cfi_adjust_cfa_offset 8\n",
            "mov rdi, qword ptr [rdi + {this}]\n",
            "call qword ptr [rsp]\n",
            "pop rcx\n",
            ".cfi_adjust_cfa_offset -8\n",
            "test eax, eax\n",
            "jne 2f\n",
            "ret\n",
            "2:\n",
            "mov edi, eax\n",
            "jmp {failed}\n",
        )
    };
}

/// The `safe_call` of [`ExternC`] functions: calls the C callee with its
/// `this`, unless the thread's stack is nearly used up (then a
/// RecursionError; see [`stack::callback_may_run`](crate::runtime::model::depth::callback_may_run)),
/// and sees its code (see [`failed_call`]). On x86-64 Linux the stack
/// check costs two instructions on the main thread (a compare with
/// [`MAIN_FLOOR`]); other threads go on to [`extern_c_owner`].
///
/// # Safety
/// `handle` is a live `ExternC` function object; the arguments are the
/// caller's, forwarded unchanged.
#[cfg(tvm_ffi_fast_call)]
#[unsafe(naked)]
unsafe extern "C" fn extern_c_trampoline(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: compares the stack pointer with the main thread's floor; on
    // the fast path calls the callee loaded from the live object with its
    // `this` and the other arguments in place (see
    // `call_extern_c_checked`); else tail-calls the next check with the
    // arguments unchanged.
    core::arch::naked_asm!(
        ".cfi_startproc",
        "cmp rsp, qword ptr [rip + {main_floor}]",
        "jb {owner}",
        call_extern_c_checked!(),
        ".cfi_endproc",
        main_floor = sym MAIN_FLOOR,
        owner = sym extern_c_owner,
        failed = sym failed_call,
        safe_call = const extern_c_at!(safe_call),
        this = const extern_c_at!(this),
    )
}

/// [`extern_c_trampoline`] off the main thread's stack: for the thread
/// that called the function first (its floor is kept in the function: a
/// `__tls_get_addr` would cost some 40 instructions) three more; other
/// threads take the slow path.
///
/// # Safety
/// As for [`extern_c_trampoline`].
#[cfg(tvm_ffi_fast_call)]
#[unsafe(naked)]
unsafe extern "C" fn extern_c_owner(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: compares the thread pointer (`fs:0`) with the function's
    // owner and the stack pointer with its floor; on the fast path calls
    // the callee as `extern_c_trampoline` does; else tail-calls the slow
    // path with the arguments unchanged.
    core::arch::naked_asm!(
        ".cfi_startproc",
        "mov rax, qword ptr fs:[0]",
        "cmp rax, qword ptr [rdi + {owner}]",
        "jne {slow}",
        "cmp rsp, qword ptr [rdi + {floor}]",
        "jb {slow}",
        call_extern_c_checked!(),
        ".cfi_endproc",
        slow = sym extern_c_slow,
        failed = sym failed_call,
        owner = const extern_c_at!(owner),
        floor = const extern_c_at!(floor),
        safe_call = const extern_c_at!(safe_call),
        this = const extern_c_at!(this),
    )
}

/// The out-of-line path of [`extern_c_trampoline`]: finds the thread's
/// floor (keeping it in the function at its first call), raises when the
/// stack is nearly used up, else calls the callee.
///
/// # Safety
/// As for [`extern_c_trampoline`].
#[cfg(tvm_ffi_fast_call)]
#[cold]
#[inline(never)]
unsafe extern "C" fn extern_c_slow(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    let tp: usize;
    // SAFETY: reads the thread pointer, which `fs:0` holds on x86-64 Linux.
    unsafe {
        core::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags));
    }
    let sp = crate::runtime::model::depth::stack_pointer();
    let floor = crate::runtime::model::depth::thread_floor();
    // SAFETY: the caller holds a live `ExternC` function object.
    let f = unsafe { (*handle.cast::<ObjBox<ExternC>>()).payload() };
    if f.owner
        .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
    {
        f.floor.store(floor, Ordering::Relaxed);
        f.owner.store(tp, Ordering::Release);
    }
    if floor != 0
        && MAIN_FLOOR.load(Ordering::Relaxed) == usize::MAX
        && crate::platform::stack::on_initial_stack()
    {
        MAIN_FLOOR.store(floor, Ordering::Relaxed);
    }
    if !crate::runtime::model::depth::callback_may_run(sp) {
        return recursion_too_deep();
    }
    // SAFETY: per the contract.
    unsafe { call_extern_c(handle, args, num_args, result) }
}

/// The portable [`extern_c_trampoline`] (same contract).
#[cfg(not(tvm_ffi_fast_call))]
unsafe extern "C" fn extern_c_trampoline(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    if !crate::runtime::model::depth::callback_may_run(crate::runtime::model::depth::stack_pointer())
    {
        return recursion_too_deep();
    }
    // SAFETY: per the contract.
    unsafe { call_extern_c(handle, args, num_args, result) }
}

/// Calls the C callee of an [`ExternC`] function with its `this`.
///
/// # Safety
/// As for [`extern_c_trampoline`].
#[inline(always)]
unsafe fn call_extern_c(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: the caller holds a live `ExternC` function object.
    let f = unsafe { (*handle.cast::<ObjBox<ExternC>>()).payload() };
    // SAFETY: forwarding the caller's arguments as they came.
    match unsafe { (f.safe_call)(f.this, args, num_args, result) } {
        0 => 0,
        code => failed_call(code),
    }
}

/// Raises the error for a callback called with its thread's stack nearly
/// used up (a kind Python shows as a RuntimeError, like its own
/// RecursionError).
#[cold]
#[inline(never)]
fn recursion_too_deep() -> c_int {
    crate::runtime::model::boundary::raise_code(Error::new(
        crate::runtime::model::error::ErrorKind::RecursionError,
        "maximum recursion depth exceeded: the thread's stack is nearly used up, \
         calling the callback would overflow it",
    ))
}

/// The function installed directly in the cell (`self` and deleter NULL):
/// the callee receives the function object as its handle.
#[repr(C)]
struct Direct {
    cell: TVMFFIFunctionCell,
}

// SAFETY: only a function pointer.
unsafe impl Send for Direct {}
// SAFETY: only a function pointer.
unsafe impl Sync for Direct {}

/// A function implemented by a Rust closure.
#[repr(C)]
struct Closure<F> {
    cell: TVMFFIFunctionCell,
    f: F,
}

// SAFETY: `F: Send + Sync` (required by `from_closure`); the cell holds only
// a function pointer and a NULL.
unsafe impl<F: Send> Send for Closure<F> {}
// SAFETY: see `Send`.
unsafe impl<F: Sync> Sync for Closure<F> {}

unsafe extern "C" fn closure_trampoline<F>(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int
where
    F: Fn(Args<'_>) -> Result<Any> + Send + Sync + 'static,
{
    catch_to_code(|| {
        if result.is_null() || (args.is_null() && num_args != 0) || num_args < 0 {
            return Err(Error::value(
                "packed call with NULL result or invalid arguments",
            ));
        }
        // SAFETY: installed only in `Closure<F>` objects, kept alive by the caller.
        let f = unsafe { &(*handle.cast::<ObjBox<Closure<F>>>()).payload().f };
        let args = if num_args == 0 {
            &[][..]
        } else {
            // SAFETY: the caller passes `num_args` valid values.
            unsafe { core::slice::from_raw_parts(args, num_args as usize) }
        };
        let out = f(Args(args))?;
        // SAFETY: checked non-null; the caller provides the result slot and
        // expects an owned value in it.
        unsafe { result.write(out.into_raw()) };
        Ok(())
    })
}

/// A value read as C++ `Expected<Any>` reads it: an Error value (type
/// index exactly `ffi.Error`, as `Expected::is_err` tests) is the error,
/// anything else the result.
pub fn expected(v: Any) -> Result<Any> {
    match v.type_index() {
        kTVMFFIError => Err(Error::object(v.view().to_object().expect("an Error"))),
        _ => Ok(v),
    }
}

/// Whether `obj` would run code at an address `inside` accepts: its
/// deleter, and for a function its `safe_call` and C++ call (for a C
/// function made by `TVMFFIFunctionCreate`, its callee and deleter). What an
/// unloader asks of every value it can see before unmapping a library.
pub fn runs_code_in(obj: &ObjectRef, inside: &dyn Fn(usize) -> bool) -> bool {
    // SAFETY: `obj` keeps the object, and so its header, alive.
    let deleter = unsafe { (*obj.as_ptr()).deleter };
    if deleter.is_some_and(|d| inside(d as usize)) {
        return true;
    }
    let Some(cell) = obj.cell::<TVMFFIFunctionCell>() else {
        return false;
    };
    if cell.safe_call.is_some_and(|f| inside(f as usize)) || inside(cell.cpp_call as usize) {
        return true;
    }
    // The trampoline is not generic: one address, the one stored at creation.
    let trampoline: SafeCallFn = extern_c_trampoline;
    if !cell
        .safe_call
        .is_some_and(|f| core::ptr::fn_addr_eq(f, trampoline))
    {
        return false;
    }
    // SAFETY: only `ExternC` objects carry this trampoline.
    let f = unsafe { obj.payload::<ExternC>() };
    inside(f.safe_call as usize) || f.deleter.is_some_and(|d| inside(d as usize))
}

impl Function {
    /// Wraps a C function the way `TVMFFIFunctionCreate` does. `deleter(this)`
    /// runs exactly once, when the function dies. If both `this` and
    /// `deleter` are NULL, `safe_call` is installed directly and receives the
    /// function object as its handle (the reference runtime's behaviour).
    pub fn from_extern_c(
        this: *mut c_void,
        safe_call: SafeCallFn,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> Function {
        let cpp_call = core::ptr::null_mut();
        if this.is_null() && deleter.is_none() {
            let cell = TVMFFIFunctionCell {
                safe_call: Some(safe_call),
                cpp_call,
            };
            return Function(new_object(kTVMFFIFunction, Direct { cell }));
        }
        let cell = TVMFFIFunctionCell {
            safe_call: Some(extern_c_trampoline),
            cpp_call,
        };
        Function(new_object(
            kTVMFFIFunction,
            ExternC {
                cell,
                this,
                safe_call,
                deleter,
                owner: AtomicUsize::new(0),
                floor: AtomicUsize::new(0),
            },
        ))
    }

    /// Wraps a Rust closure. Errors it returns and panics are raised to the
    /// caller of the packed function.
    pub fn from_closure<F>(f: F) -> Function
    where
        F: Fn(Args<'_>) -> Result<Any> + Send + Sync + 'static,
    {
        let cell = TVMFFIFunctionCell {
            safe_call: Some(closure_trampoline::<F>),
            cpp_call: core::ptr::null_mut(),
        };
        Function(new_object(kTVMFFIFunction, Closure { cell, f }))
    }

    /// Views an object as a function, if it is one (`ffi.Function` has no
    /// subclasses: it is a built-in type registered without child slots).
    pub fn from_object(obj: ObjectRef) -> Option<Function> {
        (obj.type_index() == kTVMFFIFunction).then_some(Function(obj))
    }

    /// The underlying object.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    /// Gives up the function as an object reference.
    pub fn into_object(self) -> ObjectRef {
        self.0
    }

    /// Calls the function with borrowed arguments.
    pub fn call(&self, args: &[AnyView<'_>]) -> Result<Any> {
        const INLINE: usize = 8;
        let mut inline = [TVMFFIAny::NONE; INLINE];
        let heap: Vec<TVMFFIAny>;
        let raw = if args.len() <= INLINE {
            for (slot, a) in inline.iter_mut().zip(args) {
                *slot = *a.raw();
            }
            &inline[..args.len()]
        } else {
            heap = args.iter().map(|a| *a.raw()).collect();
            &heap
        };
        // SAFETY: copies of valid views, borrowed for the call.
        unsafe { self.call_raw(raw) }
    }

    /// Calls the function as C++ `CallExpected` does: a returned Error
    /// value (type index exactly `ffi.Error`, as `Expected::is_err` tests)
    /// is the call's error, not its result.
    pub fn call_expected(&self, args: &[AnyView<'_>]) -> Result<Any> {
        self.call(args).and_then(expected)
    }

    /// Calls the function with raw packed arguments.
    ///
    /// # Safety
    /// Every argument is a valid value (live objects, readable strings) for
    /// the duration of the call, as the packed convention requires.
    pub unsafe fn call_raw(&self, args: &[TVMFFIAny]) -> Result<Any> {
        let handle = self.0.as_ptr();
        let Some(safe_call) = self
            .0
            .cell::<TVMFFIFunctionCell>()
            .and_then(|cell| cell.safe_call)
        else {
            return Err(Error::runtime("the function has no safe_call"));
        };
        let mut result = TVMFFIAny::NONE;
        // SAFETY: `args` are valid for the call; `self` keeps the function alive.
        let code =
            unsafe { safe_call(handle.cast(), args.as_ptr(), args.len() as i32, &mut result) };
        if code != 0 {
            return Err(Error::from_raised(code));
        }
        // SAFETY: a successful call leaves an owned value in `result`.
        Ok(unsafe { Any::from_raw(result) })
    }
}
