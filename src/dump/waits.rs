//! What each blocked thread waits for, and who holds it (issue 28), where
//! the dump can tell: Linux futex waits, from the thread's registers at
//! the system call (x86-64: rdi = the futex word's address, rdx = the
//! value it waits on; arm64: x0, x2) and the memory the dump (or the
//! capture's wait-object stream) holds.
//!
//! - `pthread_join`: the futex word is the joined thread's tid field and
//!   the awaited value its tid: the joined thread, no memory needed.
//! - a mutex (`__lll_lock_wait`, `pthread_mutex_lock`): the futex word is
//!   the mutex; glibc keeps the owner's tid 8 bytes further.
//! - a condition variable: no owner, and the report says so.
//!
//! Nothing is guessed: a value that cannot be read is said, not inferred.

use minidump::UnifiedMemoryList;
use minidump_processor::ProcessState;

use crate::model::{bare_name, Report, Wait, WaitKind};

/// The stream `run` and `attach` add with the bytes around each futex a
/// thread waits on (the dump's own memory lists seldom hold a mutex in a
/// program's data): entries of an address (u64), a length (u32) and the
/// bytes, little-endian.
pub(crate) const WAIT_OBJECTS_STREAM: u32 = 0x4454_0002;

/// Frames from the top looked at for the call that waits.
const DEPTH: usize = 8;

const JOIN: [&str; 5] = [
    "pthread_join",
    "__pthread_join",
    "___pthread_join",
    "__pthread_clockjoin_ex",
    "pthread_timedjoin_np",
];
const MUTEX: [&str; 8] = [
    "pthread_mutex_lock",
    "__pthread_mutex_lock",
    "___pthread_mutex_lock",
    "__GI___pthread_mutex_lock",
    "__pthread_mutex_lock_full",
    "__lll_lock_wait",
    "__GI___lll_lock_wait",
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

/// The wait-object stream's entries.
pub(super) fn kept_objects(raw: Option<&[u8]>) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let Some(mut raw) = raw else { return out };
    while raw.len() >= 12 {
        let address = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(raw[8..12].try_into().expect("4 bytes")) as usize;
        let Some(bytes) = raw.get(12..12 + len) else {
            break;
        };
        out.push((address, bytes.to_vec()));
        raw = &raw[12 + len..];
    }
    out
}

/// Fills `wait` of each blocked thread of a Linux dump.
pub(super) fn find_waits(
    state: &ProcessState,
    memory: Option<&UnifiedMemoryList<'_>>,
    kept: &[(u64, Vec<u8>)],
    report: &mut Report,
) {
    let linux = report.system.as_ref().is_some_and(|s| s.os == "Linux");
    if !linux {
        return;
    }
    let ids: Vec<u32> = report.threads.iter().map(|t| t.id).collect();
    let read_u32 = |address: u64| -> Option<u32> {
        for (base, bytes) in kept {
            if address >= *base && address + 4 <= base + bytes.len() as u64 {
                let at = (address - base) as usize;
                return Some(u32::from_le_bytes(bytes[at..at + 4].try_into().ok()?));
            }
        }
        memory?
            .memory_at_address(address)?
            .get_memory_at_address::<u32>(address)
    };
    let signalled = report.exception.as_ref().map(|e| e.thread_id);
    for thread in &mut report.threads {
        let Some(stack) = state.threads.iter().find(|s| s.thread_id == thread.id) else {
            continue;
        };
        let Some(top) = stack.frames.first() else {
            continue;
        };
        let names: Vec<&str> = thread
            .frames
            .iter()
            .take(DEPTH)
            .flat_map(|f| f.names())
            .map(bare_name)
            .collect();
        let has = |list: &[&str]| names.iter().any(|n| list.contains(n));
        let kind = if has(&JOIN) {
            WaitKind::Join
        } else if has(&MUTEX) {
            WaitKind::Mutex
        } else if has(&CONDITION) {
            WaitKind::Condition
        } else {
            continue;
        };
        // The registers are the system call's arguments only while the
        // thread sits in it: its top frame must be a futex wait.
        let in_futex = thread.frames.first().is_some_and(|f| {
            f.names()
                .any(|n| n.contains("futex") || n.contains("lll_lock_wait") || n == "syscall")
        });
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
        let unknown = |why: &str| Some(why.to_string());
        let wait = match (kind, address, value) {
            (WaitKind::Condition, address, _) => Wait {
                kind,
                address,
                holder: None,
                note: unknown("a condition variable has no owner"),
            },
            (_, None, _) | (_, _, None) => Wait {
                kind,
                address: None,
                holder: None,
                note: unknown("the thread is not at its futex system call in the dump: its registers do not say"),
            },
            (WaitKind::Join, Some(address), Some(value)) => {
                let tid = value as u32;
                Wait {
                    kind,
                    address: Some(address),
                    holder: ids.contains(&tid).then_some(tid),
                    note: (!ids.contains(&tid))
                        .then(|| format!("it joins thread {tid}, which is not in the dump")),
                }
            }
            (_, Some(address), Some(_)) => match read_u32(address + 8) {
                Some(0) => Wait {
                    kind,
                    address: Some(address),
                    holder: None,
                    note: unknown("the mutex records no owner"),
                },
                Some(owner) if ids.contains(&owner) => Wait {
                    kind,
                    address: Some(address),
                    holder: Some(owner),
                    note: None,
                },
                Some(owner) => Wait {
                    kind,
                    address: Some(address),
                    holder: None,
                    note: Some(format!(
                        "the mutex records thread {owner} as its owner, which is not in the dump (it ended holding it?)"
                    )),
                },
                None => Wait {
                    kind,
                    address: Some(address),
                    holder: None,
                    note: unknown("the mutex's memory is not in the dump: its holder is unknown"),
                },
            },
        };
        thread.wait = Some(wait);
    }
}
