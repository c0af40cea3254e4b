//! Linux futex waits, from the thread's registers at the system call
//! (x86-64: rdi = the futex word's address, rdx = the value it waits on;
//! arm64: x0, x2) and the memory the dump (or the capture's wait-object
//! stream) holds.
//!
//! - `pthread_join`: the futex word is the joined thread's tid field and
//!   the awaited value its tid: the joined thread, no memory needed.
//! - a mutex (`__lll_lock_wait`, `pthread_mutex_lock`): the futex word is
//!   the mutex; glibc keeps the owner's tid 8 bytes further.
//! - a condition variable or a semaphore: no owner, and the report says
//!   so.

use minidump_processor::ProcessState;

use super::common::{read_u32, top_names};
use crate::model::{Report, Wait, WaitKind};
use crate::python::Memory;

/// Frames from the top looked at for the call that waits.
const DEPTH: usize = 8;

const JOIN: [&str; 5] = [
    "pthread_join",
    "__pthread_join",
    "___pthread_join",
    "__pthread_clockjoin_ex",
    "pthread_timedjoin_np",
];
/// (Names as `signature_name` spells them: `__GI___lll_lock_wait` is
/// `__lll_lock_wait`, `__new_sem_wait_slow64.constprop.0` is
/// `__new_sem_wait_slow64`.)
const MUTEX: [&str; 6] = [
    "pthread_mutex_lock",
    "__pthread_mutex_lock",
    "___pthread_mutex_lock",
    "__pthread_mutex_lock_full",
    "__lll_lock_wait",
    "lll_lock_wait",
];
const CONDITION: [&str; 6] = [
    "pthread_cond_wait",
    "__pthread_cond_wait",
    "___pthread_cond_wait",
    "__pthread_cond_wait_common",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
];

const SEMAPHORE: [&str; 7] = [
    "sem_wait",
    "__new_sem_wait",
    "__new_sem_wait_slow",
    "__new_sem_wait_slow64",
    "sem_timedwait",
    "sem_clockwait",
    "__old_sem_wait",
];

/// Fills `wait` of each blocked thread of a Linux dump.
pub(super) fn find_waits(state: &ProcessState, memory: &dyn Memory, report: &mut Report) {
    let ids: Vec<u32> = report.threads.iter().map(|t| t.id).collect();
    let signalled = report.exception.as_ref().map(|e| e.thread_id);
    for thread in &mut report.threads {
        let Some(stack) = state.threads.iter().find(|s| s.thread_id == thread.id) else {
            continue;
        };
        let Some(top) = stack.frames.first() else {
            continue;
        };
        let names = top_names(thread, DEPTH);
        let has = |list: &[&str]| names.iter().any(|(_, n)| list.contains(n));
        let kind = if has(&JOIN) {
            WaitKind::Join
        } else if has(&MUTEX) {
            WaitKind::Mutex
        } else if has(&CONDITION) {
            WaitKind::Condition
        } else if has(&SEMAPHORE) {
            WaitKind::Semaphore
        } else {
            continue;
        };
        // The registers are the system call's arguments only while the
        // thread sits in it: its top frame must be a futex wait.
        let in_futex = thread.frames.first().is_some_and(|f| {
            f.names()
                .any(|n| n.contains("futex") || n.contains("lll_lock_wait") || n == "syscall")
        }) || (names
            .iter()
            .any(|(i, n)| *i <= 1 && (MUTEX.contains(n) || JOIN.contains(n)))
            && in_system_call(&top.context));
        // The exception's thread away from its futex call took a fault (a
        // crash on a freed mutex): it is not waiting. (A dump requested of
        // a hung process names a thread that is.)
        if signalled == Some(thread.id) && !in_futex {
            continue;
        }
        let context = &top.context;
        let (address, value) = match (
            context
                .get_register("rdi")
                .or_else(|| context.get_register("x0")),
            context
                .get_register("rdx")
                .or_else(|| context.get_register("x2")),
        ) {
            (Some(a), Some(v)) if in_futex => (Some(a), Some(v)),
            _ => (None, None),
        };
        let wait = match (kind, address, value) {
            (WaitKind::Condition, address, _) => {
                Wait::unknown(kind, address, "a condition variable has no owner")
            }
            (WaitKind::Semaphore, address, _) => Wait::unknown(
                kind,
                address,
                "a semaphore has no owner: any thread may post it",
            ),
            (_, None, _) | (_, _, None) => Wait::unknown(
                kind,
                None,
                "the thread is not at its futex system call in the dump: its registers do not say",
            ),
            (WaitKind::Join, Some(address), Some(value)) => {
                let tid = value as u32;
                if ids.contains(&tid) {
                    Wait::held(kind, address, tid)
                } else {
                    Wait::unknown(
                        kind,
                        Some(address),
                        &format!("it joins thread {tid}, which is not in the dump"),
                    )
                }
            }
            (_, Some(address), Some(_)) => match address
                .checked_add(8)
                .and_then(|owner| read_u32(memory, owner))
            {
                Some(0) => Wait::unknown(kind, Some(address), "the mutex records no owner"),
                Some(owner) if ids.contains(&owner) => Wait::held(kind, address, owner),
                Some(owner) => Wait {
                    gone_owner: Some(owner),
                    ..Wait::unknown(
                        kind,
                        Some(address),
                        &format!(
                            "the mutex records thread {owner} as its owner, which is not in the dump (it ended holding it?)"
                        ),
                    )
                },
                None => Wait::unknown(
                    kind,
                    Some(address),
                    "the mutex's memory is not in the dump: its holder is unknown",
                ),
            },
        };
        thread.wait = Some(wait);
    }
}

/// Whether an x86-64 thread was stopped inside a system call: the kernel
/// leaves rax at a restart code (-ERESTARTSYS and its kin) for a call a
/// stop interrupted. The lock and join functions make no other blocking
/// call than futex, so a lock function at the top (glibc makes some futex
/// calls inline: robust and priority-inheriting mutexes in
/// `__pthread_mutex_lock_full`) or right below an unnamed top frame (libc
/// named from its exports only) is at its futex call.
fn in_system_call(context: &minidump::MinidumpContext) -> bool {
    context
        .get_register("rax")
        .is_some_and(|rax| (-516..=-512).contains(&(rax as i64)))
}
