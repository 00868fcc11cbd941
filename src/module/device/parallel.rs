//! The thread pool behind `__TVMBackendParallelLaunch` and
//! `__TVMBackendParallelBarrier`, with TVM's task semantics: a launch runs
//! `flambda(task_id, env, cdata)` for every task at once (the calling
//! thread is task 0), `env.num_task` tasks in all (0 asks for every
//! worker), and returns when all have; tasks may meet at barriers. A
//! task's failure (nonzero) fails the launch with that task's error.
//!
//! The pool has one thread per core, less the caller's (`TVM_NUM_THREADS`
//! or `OMP_NUM_THREADS` set the total, as for TVM), started at the first
//! launch. A launch from inside a task, or while another thread's launch
//! holds the pool, runs its tasks one after another as a single task, so
//! nothing waits on the pool while holding it; a forked child starts a
//! pool of its own. No lock is held while tasks run.

use crate::runtime::model::error::{Error, Result, take_raised};
use crate::runtime::model::object::ObjectRef;
use core::ffi::c_void;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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

/// One launch as the workers see it.
#[derive(Clone)]
struct Job {
    lambda: Lambda,
    cdata: usize,
    num_task: i32,
    counters: Arc<[AtomicI32]>,
}

#[derive(Default)]
struct State {
    generation: u64,
    job: Option<Job>,
    finished: usize,
    errors: Vec<(i32, Option<ObjectRef>)>,
}

struct Pool {
    /// Threads besides the caller's.
    workers: AtomicUsize,
    pid: u32,
    busy: AtomicBool,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
}

static POOL: Mutex<Option<Arc<Pool>>> = Mutex::new(None);

/// The number of threads a launch may use, the caller's included.
fn concurrency() -> usize {
    ["TVM_NUM_THREADS", "OMP_NUM_THREADS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// This process's pool, started at first use.
fn pool() -> Arc<Pool> {
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.as_ref().filter(|p| p.pid == pid) {
        return p.clone();
    }
    let p = Arc::new(Pool {
        workers: AtomicUsize::new(concurrency().saturating_sub(1)),
        pid,
        busy: AtomicBool::new(false),
        state: Mutex::default(),
        work: Condvar::new(),
        done: Condvar::new(),
    });
    for id in 1..=p.workers.load(Ordering::Relaxed) {
        let worker = p.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("tvm-ffi-pool-{id}"))
            .stack_size(8 << 20)
            .spawn(move || worker.serve(id as i32));
        if spawned.is_err() {
            // Fewer threads than planned: launches use the ones there are.
            p.workers.store(id - 1, Ordering::Relaxed);
            break;
        }
    }
    *slot = Some(p.clone());
    p
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker's loop: run task `id` of every launch that has one.
    fn serve(&self, id: i32) {
        IN_TASK.with(|t| t.set(true));
        let mut seen = 0u64;
        loop {
            let job = {
                let mut s = self.lock();
                while s.generation == seen {
                    s = self.work.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                seen = s.generation;
                s.job.clone()
            };
            let Some(job) = job else { continue };
            if id >= job.num_task {
                continue;
            }
            let failed = run_task(&job, id);
            let mut s = self.lock();
            if let Some(err) = failed {
                s.errors.push((id, err));
            }
            s.finished += 1;
            drop(s);
            self.done.notify_all();
        }
    }
}

/// Runs task `id` of `job`; on failure, the error it raised (if any).
fn run_task(job: &Job, id: i32) -> Option<Option<ObjectRef>> {
    let mut env = GroupEnv {
        sync_handle: job.counters.as_ptr() as *mut c_void,
        num_task: job.num_task,
    };
    // SAFETY: the lambda and its closure data come from generated code's
    // launch, which waits for every task before it returns.
    let rc = unsafe { (job.lambda)(id, &mut env, job.cdata as *mut c_void) };
    (rc != 0).then(take_raised)
}

fn counters(num_task: i32) -> Arc<[AtomicI32]> {
    (0..num_task as usize * SYNC_STRIDE)
        .map(|_| AtomicI32::new(0))
        .collect()
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
        let job = Job {
            lambda,
            cdata: cdata as usize,
            num_task: 1,
            counters: counters(1),
        };
        return finish(run_task(&job, 0).map(|e| (0, e)));
    };
    let total = pool.workers.load(Ordering::Relaxed) as i32 + 1;
    let num_task = if num_task <= 0 || num_task > total {
        total
    } else {
        num_task
    };
    let job = Job {
        lambda,
        cdata: cdata as usize,
        num_task,
        counters: counters(num_task),
    };
    {
        let mut s = pool.lock();
        s.job = Some(job.clone());
        s.finished = 0;
        s.errors.clear();
        s.generation += 1;
    }
    pool.work.notify_all();
    IN_TASK.with(|t| t.set(true));
    let mine = run_task(&job, 0);
    IN_TASK.with(|t| t.set(false));
    let mut s = pool.lock();
    while s.finished < (num_task - 1) as usize {
        s = pool.done.wait(s).unwrap_or_else(|e| e.into_inner());
    }
    s.job = None;
    let mut errors = std::mem::take(&mut s.errors);
    drop(s);
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
