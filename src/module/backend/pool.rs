//! The thread pool behind `__TVMBackendParallelLaunch` and
//! `__TVMBackendParallelBarrier`, with TVM's task semantics: a launch runs
//! `flambda(task_id, env, cdata)` for every task at once (the calling
//! thread is task 0), `env.num_task` tasks in all (0 asks for every
//! worker), and returns when all have; tasks may meet at barriers. A
//! task's failure (nonzero) fails the launch with that task's error.
//!
//! The pool has one thread per core, less the caller's (`TVM_NUM_THREADS`
//! or `OMP_NUM_THREADS` set the total, as for TVM, at most
//! [`MAX_THREADS`]: a larger value is clamped with a warning), started at
//! the first launch. A launch from inside a task, or while another
//! thread's launch holds the pool, runs its tasks one after another as a
//! single task, so nothing waits on the pool while holding it. The pool is
//! started with no lock held and published with one compare-and-swap, so a
//! child forked at any moment (even while another thread starts the
//! workers) starts a pool of its own at its first launch. No lock is held
//! while tasks run.

use crate::runtime::model::error::{Error, Result, take_raised};
use crate::runtime::model::object::ObjectRef;
use core::ffi::c_void;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// `TVMParallelGroupEnv`.
#[repr(C)]
pub struct GroupEnv {
    /// The barrier counters (this module's), one per task, `SYNC_STRIDE`
    /// apart.
    pub sync_handle: *mut c_void,
    /// The number of tasks of the launch.
    pub num_task: i32,
}

const _: () = {
    assert!(size_of::<GroupEnv>() == 16);
    assert!(core::mem::offset_of!(GroupEnv, num_task) == 8);
};

/// `FTVMParallelLambda`.
pub type Lambda = unsafe extern "C" fn(i32, *mut GroupEnv, *mut c_void) -> i32;

/// Counters lie a cache line apart (TVM's `kSyncStride`).
const SYNC_STRIDE: usize = 64 / size_of::<AtomicI32>();

thread_local! {
    /// Whether this thread is running a task of a launch.
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
}

/// How long an idle worker, or a launcher waiting for its tasks, spins
/// before it sleeps (a `spin_loop` hint each): launches in a loop then
/// never pay a wake-up.
const SPINS: u32 = 1 << 16;

/// The pool. A launch is published in the atomics below, then
/// `generation` is bumped; workers spin on it, then sleep on `work` (the
/// launcher wakes sleepers under `state`). Each worker that ran a task adds
/// one to `finished`; the launcher spins on it, then sleeps on `done`.
struct Pool {
    /// Threads besides the caller's.
    workers: AtomicUsize,
    pid: u32,
    /// Set when another thread's pool was published first: its workers
    /// leave.
    retired: AtomicBool,
    busy: AtomicBool,
    generation: AtomicU64,
    lambda: AtomicUsize,
    cdata: AtomicUsize,
    num_task: AtomicI32,
    finished: AtomicUsize,
    /// Barrier counters, `SYNC_STRIDE` apart, one per thread of the pool.
    counters: Box<[AtomicI32]>,
    /// Sleeping workers and whether the launcher sleeps (guarded by the
    /// mutex for the condition variables), and the failed tasks' errors.
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
}

#[derive(Default)]
struct State {
    sleeping_workers: usize,
    launcher_sleeps: bool,
    errors: Vec<(i32, Option<ObjectRef>)>,
}

/// This process's pool (never freed: its workers run for good), or NULL
/// before the first launch.
static POOL: AtomicPtr<Pool> = AtomicPtr::new(core::ptr::null_mut());

/// The most threads a pool has, the caller's included: what the machine
/// can use, with room for oversubscription, and bounded whatever the
/// environment says.
pub const MAX_THREADS: usize = 1024;

/// The number of threads a launch may use, the caller's included.
fn concurrency() -> usize {
    let set = ["TVM_NUM_THREADS", "OMP_NUM_THREADS"].iter().find_map(|v| {
        let text = std::env::var(v).ok()?;
        let n = text.trim().parse::<u128>().ok().filter(|&n| n > 0)?;
        Some((v, text, n))
    });
    match set {
        Some((var, text, n)) if n > MAX_THREADS as u128 => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "Warning: {var}={} is more threads than the pool's maximum; using {MAX_THREADS}",
                    text.trim()
                );
            });
            MAX_THREADS
        }
        Some((.., n)) => n as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
    }
}

/// This process's pool, started at first use (again in a forked child,
/// whose parent's workers did not follow it).
fn pool() -> &'static Pool {
    let pid = std::process::id();
    loop {
        let now = POOL.load(Ordering::Acquire);
        // SAFETY: a published pool is leaked, never freed.
        if let Some(p) = unsafe { now.as_ref() }.filter(|p| p.pid == pid) {
            return p;
        }
        // Started unlocked; threads that start one at once keep the first
        // published, and the others' workers leave.
        let made = start(pid);
        let made_ptr = (made as *const Pool).cast_mut();
        match POOL.compare_exchange(now, made_ptr, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return made,
            Err(_) => made.retire(),
        }
    }
}

/// A new pool with its workers running.
fn start(pid: u32) -> &'static Pool {
    let threads = concurrency();
    let p: &'static Pool = Box::leak(Box::new(Pool {
        workers: AtomicUsize::new(threads - 1),
        pid,
        retired: AtomicBool::new(false),
        busy: AtomicBool::new(false),
        generation: AtomicU64::new(0),
        lambda: AtomicUsize::new(0),
        cdata: AtomicUsize::new(0),
        num_task: AtomicI32::new(0),
        finished: AtomicUsize::new(0),
        counters: (0..threads * SYNC_STRIDE)
            .map(|_| AtomicI32::new(0))
            .collect(),
        state: Mutex::default(),
        work: Condvar::new(),
        done: Condvar::new(),
    }));
    for id in 1..threads {
        // Not `std::thread`: a child forked while another thread starts a
        // std thread could never start one (`platform::os::spawn_detached`).
        let spawned = crate::platform::os::spawn_detached(
            &format!("tvm-ffi-pool-{id}"),
            8 << 20,
            Box::new(move || p.serve(id as i32)),
        );
        if !spawned {
            // Fewer threads than planned: launches use the ones there are.
            p.workers.store(id - 1, Ordering::Relaxed);
            break;
        }
    }
    p
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells the workers of a pool that was never published to leave.
    fn retire(&self) {
        self.retired.store(true, Ordering::Release);
        let _sleepers = self.lock();
        self.work.notify_all();
    }

    /// Waits until a launch other than `seen` is published (an even
    /// `generation`): spins, then sleeps; `None` once the pool is retired.
    fn next_launch(&self, seen: u64) -> Option<u64> {
        let published = |g: u64| g != seen && g.is_multiple_of(2);
        for _ in 0..SPINS {
            let g = self.generation.load(Ordering::Acquire);
            if published(g) {
                return Some(g);
            }
            std::hint::spin_loop();
        }
        let mut s = self.lock();
        s.sleeping_workers += 1;
        while !published(self.generation.load(Ordering::Acquire)) {
            if self.retired.load(Ordering::Acquire) {
                return None;
            }
            s = self.work.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.sleeping_workers -= 1;
        Some(self.generation.load(Ordering::Acquire))
    }

    /// The launch of generation `g` (`lambda`, `cdata`, `num_task`), if it
    /// is still the published one: a sequence lock, as `launch` writes the
    /// fields between an odd and an even generation.
    fn read_launch(&self, g: u64) -> Option<(usize, usize, i32)> {
        let fields = (
            self.lambda.load(Ordering::Relaxed),
            self.cdata.load(Ordering::Relaxed),
            self.num_task.load(Ordering::Relaxed),
        );
        std::sync::atomic::fence(Ordering::Acquire);
        (self.generation.load(Ordering::Relaxed) == g).then_some(fields)
    }

    /// A worker's loop: run task `id` of every launch that has one.
    fn serve(&self, id: i32) {
        IN_TASK.with(|t| t.set(true));
        let mut seen = 0u64;
        while let Some(g) = self.next_launch(seen) {
            let Some((lambda, cdata, num_task)) = self.read_launch(g) else {
                continue;
            };
            seen = g;
            if id >= num_task {
                continue;
            }
            // SAFETY: `lambda` was stored from a `Lambda` by `launch`.
            let lambda: Lambda = unsafe { core::mem::transmute::<usize, Lambda>(lambda) };
            let failed = run_task(lambda, cdata, &self.counters, num_task, id);
            if let Some(err) = failed {
                self.lock().errors.push((id, err));
            }
            self.finished.fetch_add(1, Ordering::AcqRel);
            if self.lock().launcher_sleeps {
                self.done.notify_all();
            }
        }
    }

    /// Waits until `n` workers finished their tasks: spins, then sleeps.
    fn wait_finished(&self, n: usize) {
        for _ in 0..SPINS {
            if self.finished.load(Ordering::Acquire) >= n {
                return;
            }
            std::hint::spin_loop();
        }
        let mut s = self.lock();
        s.launcher_sleeps = true;
        while self.finished.load(Ordering::Acquire) < n {
            s = self.done.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.launcher_sleeps = false;
    }
}

/// Runs task `id` of a launch; on failure, the error it raised (if any).
fn run_task(
    lambda: Lambda,
    cdata: usize,
    counters: &[AtomicI32],
    num_task: i32,
    id: i32,
) -> Option<Option<ObjectRef>> {
    let mut env = GroupEnv {
        sync_handle: counters.as_ptr() as *mut c_void,
        num_task,
    };
    // SAFETY: the lambda and its closure data come from generated code's
    // launch, which waits for every task before it returns.
    let rc = unsafe { lambda(id, &mut env, cdata as *mut c_void) };
    (rc != 0).then(take_raised)
}

/// Runs `lambda` on `num_task` tasks (see the module docs).
///
/// # Safety
/// `lambda` may be called with `cdata` from several threads at once until
/// this returns.
pub unsafe fn launch(lambda: Lambda, cdata: *mut c_void, num_task: i32) -> Result<()> {
    let nested = IN_TASK.with(Cell::get);
    let pool = if nested { None } else { Some(pool()) };
    let pool = pool.filter(|p| {
        p.workers.load(Ordering::Relaxed) > 0
            && p.busy
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    });
    let Some(pool) = pool else {
        let counters: [AtomicI32; SYNC_STRIDE] = Default::default();
        return finish(run_task(lambda, cdata as usize, &counters, 1, 0).map(|e| (0, e)));
    };
    let total = pool.workers.load(Ordering::Relaxed) as i32 + 1;
    let num_task = if num_task <= 0 || num_task > total {
        total
    } else {
        num_task
    };
    // Published as a sequence lock: odd while the fields change, even after.
    pool.generation.fetch_add(1, Ordering::Relaxed);
    std::sync::atomic::fence(Ordering::Release);
    for c in pool.counters.iter().take(num_task as usize * SYNC_STRIDE) {
        c.store(0, Ordering::Relaxed);
    }
    pool.finished.store(0, Ordering::Relaxed);
    pool.lambda.store(lambda as usize, Ordering::Relaxed);
    pool.cdata.store(cdata as usize, Ordering::Relaxed);
    pool.num_task.store(num_task, Ordering::Relaxed);
    pool.generation.fetch_add(1, Ordering::Release);
    if pool.lock().sleeping_workers > 0 {
        pool.work.notify_all();
    }
    IN_TASK.with(|t| t.set(true));
    let mine = run_task(lambda, cdata as usize, &pool.counters, num_task, 0);
    IN_TASK.with(|t| t.set(false));
    pool.wait_finished((num_task - 1) as usize);
    let mut errors = std::mem::take(&mut pool.lock().errors);
    pool.busy.store(false, Ordering::Release);
    if let Some(e) = mine {
        errors.push((0, e));
    }
    errors.sort_by_key(|(id, _)| *id);
    finish(errors.into_iter().next())
}

/// The outcome of a launch given its first failed task.
fn finish(failed: Option<(i32, Option<ObjectRef>)>) -> Result<()> {
    match failed {
        None => Ok(()),
        Some((_, Some(err))) => Err(Error::object(err)),
        Some((id, None)) => Err(Error::runtime(format!(
            "task {id} of a parallel launch failed without raising an error"
        ))),
    }
}

/// Waits until every task of the launch reached this barrier as often as
/// task `task_id` has (TVM's `TVMBackendParallelBarrier`).
///
/// # Safety
/// `env` is the environment a launch of this module handed to the task.
pub unsafe fn barrier(task_id: i32, env: &GroupEnv) {
    let n = env.num_task.max(0) as usize;
    let base = env.sync_handle as *const AtomicI32;
    // SAFETY: the launch allocated `num_task * SYNC_STRIDE` counters.
    let counter = |i: usize| unsafe { &*base.add(i * SYNC_STRIDE) };
    let old = counter(task_id as usize).fetch_add(1, Ordering::Release);
    for i in (0..n).filter(|&i| i != task_id as usize) {
        while counter(i).load(Ordering::Relaxed) <= old {
            std::thread::yield_now();
        }
    }
    std::sync::atomic::fence(Ordering::Acquire);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::error::set_raised;

    /// Each task writes its id, meets the others, then sums what all wrote.
    unsafe extern "C" fn meet(task: i32, env: *mut GroupEnv, cdata: *mut c_void) -> i32 {
        // SAFETY: `cdata` is the test's slots; `env` the launch's.
        let (slots, env) = unsafe { (&*(cdata as *const [AtomicI32; 64]), &*env) };
        slots[task as usize].store(task + 1, Ordering::Relaxed);
        // SAFETY: the environment this launch handed over.
        unsafe { barrier(task, env) };
        let sum: i32 = (0..env.num_task as usize)
            .map(|i| slots[i].load(Ordering::Relaxed))
            .sum();
        slots[32 + task as usize].store(sum, Ordering::Relaxed);
        0
    }

    unsafe extern "C" fn fail_odd(task: i32, _: *mut GroupEnv, _: *mut c_void) -> i32 {
        if task % 2 == 1 || task == 0 {
            set_raised(Error::value(format!("task {task} failed")).into_object());
            return -1;
        }
        0
    }

    unsafe extern "C" fn nested(_: i32, env: *mut GroupEnv, cdata: *mut c_void) -> i32 {
        // SAFETY: `cdata` is the test's counter.
        let seen = unsafe { &*(cdata as *const AtomicI32) };
        // SAFETY: `meet` follows the contract; a nested launch runs serially.
        let inner = unsafe { launch(count_tasks, cdata, 0) };
        assert!(inner.is_ok());
        // SAFETY: the environment this launch handed over.
        seen.fetch_add(100 * unsafe { &*env }.num_task, Ordering::Relaxed);
        0
    }

    unsafe extern "C" fn count_tasks(_: i32, env: *mut GroupEnv, cdata: *mut c_void) -> i32 {
        // SAFETY: `cdata` is the test's counter; `env` the launch's.
        unsafe { &*(cdata as *const AtomicI32) }
            .fetch_add(unsafe { &*env }.num_task, Ordering::Relaxed);
        0
    }

    #[test]
    fn tasks_meet_at_barriers_and_failures_are_raised() {
        for _ in 0..200 {
            let slots: [AtomicI32; 64] = core::array::from_fn(|_| AtomicI32::new(0));
            // SAFETY: `meet` reads and writes only `slots`, alive throughout.
            unsafe {
                launch(
                    meet,
                    (&slots as *const [AtomicI32; 64]).cast_mut().cast(),
                    0,
                )
            }
            .unwrap();
            let n = (0..32)
                .take_while(|&i| slots[i].load(Ordering::Relaxed) != 0)
                .count() as i32;
            assert!(n >= 1);
            for t in 0..n as usize {
                assert_eq!(slots[32 + t].load(Ordering::Relaxed), n * (n + 1) / 2);
            }
        }
        // SAFETY: `fail_odd` touches nothing.
        let err = unsafe { launch(fail_odd, core::ptr::null_mut(), 0) }.unwrap_err();
        assert_eq!(err.to_string(), "ValueError: task 0 failed");
        let seen = AtomicI32::new(0);
        // SAFETY: `nested` only counts into `seen`.
        unsafe { launch(nested, (&seen as *const AtomicI32).cast_mut().cast(), 1) }.unwrap();
        assert_eq!(
            seen.load(Ordering::Relaxed),
            101,
            "the nested launch ran as one task"
        );
    }
}
