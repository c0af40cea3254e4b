//! Windows waits, from the frames, the words of the wait's own stack
//! frames and the memory the dump holds.
//!
//! - A critical section (`RtlEnterCriticalSection` and the functions it
//!   waits in): the caller's pointer to the section stays on the wait's
//!   stack (a saved register or a spilled argument), so every word there is
//!   a candidate and only one that points at a valid, owned critical
//!   section counts: `OwningThread` a thread id, `RecursionCount` at least
//!   one, `LockCount` locked (the old and the Windows Server 2003 SP1+
//!   encodings), and `DebugInfo` pointing back at it where the dump holds
//!   the debug record. Its `OwningThread` is the holder. The loader lock is
//!   the section the PEB names (TEB+0x60 -> PEB, PEB+0x110 -> LoaderLock).
//! - An SRW lock and a condition variable: no owner, and the report says so.
//! - A wait on handles: which object the handle is, the dump does not say.
//!
//! 64-bit processes only (x64, arm64): the offsets above are their layouts;
//! a 32-bit process's waits are named, their objects not read.

use std::ops::Range;

use minidump_processor::ProcessState;

use super::common::{read_u64, top_names, DumpThread};
use crate::model::{Report, Wait, WaitKind};
use crate::python::Memory;

/// Frames from the top looked at for the call that waits.
const DEPTH: usize = 10;

const CRITICAL_SECTION: [&str; 6] = [
    "RtlEnterCriticalSection",
    "RtlpEnterCriticalSectionContended",
    "RtlpWaitOnCriticalSection",
    "RtlpWaitForCriticalSection",
    "EnterCriticalSection",
    "LdrpAcquireLoaderLock",
];
const SRW_LOCK: [&str; 6] = [
    "RtlAcquireSRWLockExclusive",
    "RtlAcquireSRWLockShared",
    "RtlpAcquireSRWLockExclusiveContended",
    "RtlpAcquireSRWLockSharedContended",
    "AcquireSRWLockExclusive",
    "AcquireSRWLockShared",
];
const CONDITION: [&str; 4] = [
    "RtlSleepConditionVariableCS",
    "RtlSleepConditionVariableSRW",
    "SleepConditionVariableCS",
    "SleepConditionVariableSRW",
];
const HANDLES: [&str; 12] = [
    "NtWaitForSingleObject",
    "ZwWaitForSingleObject",
    "NtWaitForMultipleObjects",
    "ZwWaitForMultipleObjects",
    "WaitForSingleObject",
    "WaitForSingleObjectEx",
    "WaitForMultipleObjects",
    "WaitForMultipleObjectsEx",
    "MsgWaitForMultipleObjects",
    "MsgWaitForMultipleObjectsEx",
    "SignalObjectAndWait",
    "CoWaitForMultipleHandles",
];
/// The modules the wait machinery lives in: frames above the waiting call
/// must all be theirs.
const SYSTEM_MODULES: [&str; 5] = [
    "ntdll.dll",
    "kernelbase.dll",
    "kernel32.dll",
    "win32u.dll",
    "combase.dll",
];

/// The stack words of a critical-section wait looked at, at most.
const MAX_STACK_BYTES: u64 = 4096;

/// Fills `wait` of each blocked thread of a Windows dump.
pub(super) fn find_waits(
    state: &ProcessState,
    memory: &dyn Memory,
    threads: &[DumpThread],
    report: &mut Report,
) {
    // The layouts read (critical section, TEB, PEB) are the 64-bit ones.
    let wide = report
        .system
        .as_ref()
        .is_some_and(|s| s.cpu == "amd64" || s.cpu == "arm64");
    let ids: Vec<u32> = report.threads.iter().map(|t| t.id).collect();
    let stacks: Vec<Range<u64>> = threads.iter().map(|t| t.stack.clone()).collect();
    let loader_lock = loader_lock(memory, threads);
    // The crashing thread took a fault; it is not waiting.
    let crashed = report
        .exception
        .as_ref()
        .filter(|_| report.crashed())
        .map(|e| e.thread_id);
    for thread in &mut report.threads {
        if crashed == Some(thread.id) {
            continue;
        }
        let Some(stack) = state.threads.iter().find(|s| s.thread_id == thread.id) else {
            continue;
        };
        let names = top_names(thread, DEPTH);
        let system = |index: usize| {
            thread.frames.get(index).is_some_and(|f| {
                f.module
                    .as_deref()
                    .is_some_and(|m| SYSTEM_MODULES.iter().any(|s| m.eq_ignore_ascii_case(s)))
            })
        };
        // The first waiting call from the top, with only system frames
        // above it.
        let first = |lists: &[&[&str]]| {
            names
                .iter()
                .find(|(_, n)| lists.iter().any(|l| l.contains(n)))
                .map(|(i, _)| *i)
                .filter(|&i| (0..i).all(system))
        };
        let wait = if let Some(at) = first(&[&CRITICAL_SECTION, &SRW_LOCK, &CONDITION]) {
            let name = names.iter().find(|(i, _)| *i == at).map_or("", |(_, n)| *n);
            if CONDITION.contains(&name) {
                Wait::unknown(
                    WaitKind::Condition,
                    None,
                    "a condition variable has no owner",
                )
            } else if SRW_LOCK.contains(&name) {
                Wait::unknown(
                    WaitKind::SrwLock,
                    None,
                    "an SRW lock does not record its owner",
                )
            } else {
                // The outermost frame of the critical-section code: the
                // caller's pointer lies on the stack up to its caller.
                let mut last = at;
                while names
                    .iter()
                    .any(|(i, n)| *i == last + 1 && CRITICAL_SECTION.contains(n))
                {
                    last += 1;
                }
                if wide {
                    let words = stack_words(stack, memory, last + 1);
                    critical_section_wait(thread.id, &words, memory, &ids, &stacks, loader_lock)
                } else {
                    Wait::unknown(
                        WaitKind::CriticalSection,
                        None,
                        "which critical section is read on 64-bit processes only",
                    )
                }
            }
        } else if first(&[&HANDLES]).is_some() {
            Wait::unknown(
                WaitKind::Handle,
                None,
                "which object the handle is, the dump does not say",
            )
        } else {
            continue;
        };
        thread.wait = Some(wait);
    }
}

/// The loader lock's address: the PEB's `LoaderLock`, the PEB found
/// through any TEB the dump holds.
fn loader_lock(memory: &dyn Memory, threads: &[DumpThread]) -> Option<u64> {
    let peb = threads
        .iter()
        .find_map(|t| read_u64(memory, t.teb.checked_add(0x60)?))?;
    read_u64(memory, peb.checked_add(0x110)?).filter(|&a| a != 0)
}

/// The 8-byte words of the stack from the top frame's stack pointer up to
/// the stack pointer of frame `until` (the caller of the wait), and the
/// top context's general registers.
fn stack_words(stack: &minidump_unwind::CallStack, memory: &dyn Memory, until: usize) -> Vec<u64> {
    let mut words = Vec::new();
    let Some(top) = stack.frames.first() else {
        return words;
    };
    for register in [
        "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
        "r15",
    ] {
        if let Some(value) = top.context.get_register(register) {
            words.push(value);
        }
    }
    let from = top.context.get_stack_pointer();
    let to = stack
        .frames
        .get(until)
        .map(|f| f.context.get_stack_pointer())
        .filter(|&to| to > from)
        .unwrap_or(from.saturating_add(512))
        .min(from.saturating_add(MAX_STACK_BYTES));
    if let Some(bytes) = memory.read(from, (to - from) as usize) {
        words.extend(
            bytes
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes"))),
        );
    }
    words
}

/// A critical section the dump holds at `address`, checked as one that
/// is owned.
struct Section {
    owner: u32,
    /// Its debug record points back at it (the strongest check).
    debug_checked: bool,
}

fn section_at(memory: &dyn Memory, address: u64) -> Option<Section> {
    if address == 0 || !address.is_multiple_of(8) {
        return None;
    }
    let raw = memory.read(address, 0x28).filter(|raw| raw.len() >= 0x28)?;
    let u64_at = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
    let i32_at = |at: usize| i32::from_le_bytes(raw[at..at + 4].try_into().expect("4 bytes"));
    let (debug_info, lock_count, recursion, owner) =
        (u64_at(0), i32_at(8), i32_at(0xc), u64_at(0x10));
    if owner == 0 || owner > u64::from(u32::MAX) || !owner.is_multiple_of(4) {
        return None;
    }
    if !(1..=0x10000).contains(&recursion) {
        return None;
    }
    // Locked with a waiter (the thread that waits for it): in the old
    // encoding (Wine, Windows before Server 2003 SP1) the count of waiters,
    // 1 or more; in the newer one the low bit clear (locked) and the
    // waiters counted in steps of 4 below -2.
    let waited = if lock_count >= 0 {
        lock_count >= 1
    } else {
        lock_count & 1 == 0 && lock_count <= -6
    };
    if !waited {
        return None;
    }
    // The debug record (RTL_CRITICAL_SECTION_DEBUG): type 0, a pointer
    // back at the section, and a consistent entry in the process's list of
    // locks. Windows 8 and later give most sections none (-1).
    let debug_checked = match debug_info {
        0 | u64::MAX => false,
        record if !record.is_multiple_of(8) => return None,
        record => match memory
            .read(record, 0x20)
            .filter(|debug| debug.len() >= 0x20)
        {
            Some(debug) => {
                let u64_in =
                    |at: usize| u64::from_le_bytes(debug[at..at + 8].try_into().expect("8 bytes"));
                let kind = u16::from_le_bytes([debug[0], debug[1]]);
                let (back, flink) = (u64_in(8), u64_in(0x10));
                let listed = read_u64(memory, flink.checked_add(8)?)
                    .is_none_or(|blink| Some(blink) == record.checked_add(0x10));
                if kind != 0 || back != address || !listed {
                    return None;
                }
                true
            }
            None => false,
        },
    };
    Some(Section {
        owner: owner as u32,
        debug_checked,
    })
}

fn critical_section_wait(
    waiter: u32,
    words: &[u64],
    memory: &dyn Memory,
    ids: &[u32],
    stacks: &[Range<u64>],
    loader_lock: Option<u64>,
) -> Wait {
    // Sections whose debug record checks out first; then, when there is
    // none, sections without one (Windows 8 and later give most sections
    // none) but only those a thread of the dump owns and that are not on
    // a stack: without the record, an owner no thread has could be any
    // word, and a stack holds many structure-like words.
    let mut checked: Vec<(u64, Section)> = Vec::new();
    let mut unchecked: Vec<(u64, Section)> = Vec::new();
    for &word in words {
        if checked.iter().chain(&unchecked).any(|(a, _)| *a == word) {
            continue;
        }
        let Some(section) = section_at(memory, word).filter(|s| s.owner != waiter) else {
            continue;
        };
        if section.debug_checked {
            checked.push((word, section));
        } else if ids.contains(&section.owner) && !stacks.iter().any(|r| r.contains(&word)) {
            unchecked.push((word, section));
        }
    }
    let found = if checked.is_empty() {
        unchecked
    } else {
        checked
    };
    let kind_of = |address: u64| {
        if Some(address) == loader_lock {
            WaitKind::LoaderLock
        } else {
            WaitKind::CriticalSection
        }
    };
    match found.as_slice() {
        [] => {
            // The loader lock's address on the stack, its memory absent.
            if let Some(lock) = loader_lock.filter(|l| words.contains(l)) {
                return Wait::unknown(
                    WaitKind::LoaderLock,
                    Some(lock),
                    "the loader lock's memory is not in the dump: its owner is unknown",
                );
            }
            Wait::unknown(
                WaitKind::CriticalSection,
                None,
                "no critical section the dump holds is on the wait's stack: its holder is unknown \
                 (a dump with data segments or full memory holds it)",
            )
        }
        [(address, section)] => {
            let how = if section.debug_checked {
                "on the wait's stack; owner, lock count and debug record checked"
            } else {
                "on the wait's stack; owner and lock count checked"
            };
            let mut wait = if ids.contains(&section.owner) {
                Wait::held(kind_of(*address), *address, section.owner)
            } else {
                Wait {
                    gone_owner: Some(section.owner),
                    ..Wait::unknown(
                        kind_of(*address),
                        Some(*address),
                        &format!(
                            "its owner, thread {}, is not in the dump: it ended without leaving it",
                            section.owner
                        ),
                    )
                }
            };
            wait.found = Some(how.to_string());
            wait
        }
        several => Wait::unknown(
            WaitKind::CriticalSection,
            None,
            &format!(
                "{} owned critical sections are on the wait's stack ({}): which one it waits for is not certain",
                several.len(),
                several
                    .iter()
                    .map(|(a, _)| crate::model::hex(*a))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory of a few ranges.
    struct Ranges(Vec<(u64, Vec<u8>)>);

    impl Memory for Ranges {
        fn read(&self, address: u64, len: usize) -> Option<Vec<u8>> {
            self.0.iter().find_map(|(base, bytes)| {
                let at = usize::try_from(address.checked_sub(*base)?).ok()?;
                bytes.get(at..at.checked_add(len)?).map(<[u8]>::to_vec)
            })
        }
    }

    const SECTION: u64 = 0x1_4000_60f0;
    const RECORD: u64 = 0x24_6000;

    fn section(debug: u64, lock_count: i32, recursion: i32, owner: u64) -> Vec<u8> {
        let mut raw = Vec::new();
        raw.extend(debug.to_le_bytes());
        raw.extend(lock_count.to_le_bytes());
        raw.extend(recursion.to_le_bytes());
        raw.extend(owner.to_le_bytes());
        raw.extend([0u8; 16]);
        raw
    }

    fn record(kind: u16, back: u64) -> Vec<u8> {
        let mut raw = vec![0u8; 0x30];
        raw[..2].copy_from_slice(&kind.to_le_bytes());
        raw[8..16].copy_from_slice(&back.to_le_bytes());
        raw
    }

    #[test]
    fn owned_sections_with_a_waiter_are_recognised_in_both_lock_count_encodings() {
        // Old encoding (Wine): one waiter; its debug record points back.
        let memory = Ranges(vec![
            (SECTION, section(RECORD, 1, 1, 0x10c)),
            (RECORD, record(0, SECTION)),
        ]);
        let found = section_at(&memory, SECTION).expect("a section");
        assert_eq!(found.owner, 0x10c);
        assert!(found.debug_checked);
        // Newer encoding: locked (low bit clear) with one waiter (-6); no
        // debug record (-1), as Windows 8 and later give most sections.
        let memory = Ranges(vec![(SECTION, section(u64::MAX, -6, 1, 0x2a8c))]);
        let found = section_at(&memory, SECTION).expect("a section");
        assert!(!found.debug_checked);
    }

    #[test]
    fn words_that_only_resemble_a_section_are_not_one() {
        let cases = [
            // Free (old and new encodings), locked without a waiter.
            section(u64::MAX, -1, 0, 0),
            section(u64::MAX, -2, 1, 0x10c),
            section(u64::MAX, 0, 1, 0x10c),
            // No owner, an owner that is no thread id, no recursion.
            section(u64::MAX, 1, 1, 0),
            section(u64::MAX, 1, 1, 0x10d),
            section(u64::MAX, 1, 1, 0x1_0000_0000),
            section(u64::MAX, 1, 0, 0x10c),
            // A debug record that is not this section's.
            section(RECORD, 1, 1, 0x10c),
        ];
        for raw in cases {
            let memory = Ranges(vec![
                (SECTION, raw.clone()),
                (RECORD, record(0, SECTION + 8)),
            ]);
            assert!(section_at(&memory, SECTION).is_none(), "{raw:02x?}");
        }
        // A record of another type (a resource, not a critical section).
        let memory = Ranges(vec![
            (SECTION, section(RECORD, 1, 1, 0x10c)),
            (RECORD, record(1, SECTION)),
        ]);
        assert!(section_at(&memory, SECTION).is_none());
        // Unaligned, or not in the dump.
        assert!(section_at(&memory, SECTION + 4).is_none());
        assert!(section_at(&Ranges(Vec::new()), SECTION).is_none());
    }

    #[test]
    fn the_holder_is_named_only_when_one_section_is_certain() {
        let ids = [0x10c, 0x110];
        let one = Ranges(vec![
            (SECTION, section(RECORD, 1, 1, 0x110)),
            (RECORD, record(0, SECTION)),
        ]);
        let wait = critical_section_wait(0x10c, &[7, SECTION, 9], &one, &ids, &[], None);
        assert_eq!(wait.holder, Some(0x110));
        assert_eq!(wait.kind, WaitKind::CriticalSection);
        // The loader lock, by the PEB's address.
        let wait = critical_section_wait(0x10c, &[SECTION], &one, &ids, &[], Some(SECTION));
        assert_eq!(wait.kind, WaitKind::LoaderLock);
        // An owner that ended.
        let wait = critical_section_wait(0x10c, &[SECTION], &one, &[0x10c], &[], None);
        assert_eq!((wait.holder, wait.gone_owner), (None, Some(0x110)));
        // Without its debug record, an owner no thread has is no evidence.
        let bare = Ranges(vec![(SECTION, section(u64::MAX, 1, 1, 0x110))]);
        let wait = critical_section_wait(0x10c, &[SECTION], &bare, &[0x10c], &[], None);
        assert_eq!(
            (wait.holder, wait.gone_owner, wait.address),
            (None, None, None)
        );
        // Nor is a section-like structure on a stack.
        let stack = SECTION - 0x100..SECTION + 0x100;
        let wait = critical_section_wait(0x10c, &[SECTION], &bare, &ids, &[stack], None);
        assert_eq!(wait.holder, None);
        // Two owned sections on the wait's stack: which one is not certain.
        let second = SECTION + 0x100;
        let two = Ranges(vec![
            (SECTION, section(RECORD, 1, 1, 0x110)),
            (RECORD, record(0, SECTION)),
            (second, section(RECORD + 0x40, 1, 1, 0x110)),
            (RECORD + 0x40, record(0, second)),
        ]);
        let wait = critical_section_wait(0x10c, &[SECTION, second], &two, &ids, &[], None);
        assert_eq!(wait.holder, None);
        assert!(wait.note.unwrap().contains("not certain"));
        // Hostile words and records at the top of the address space.
        let top: u64 = !7;
        let hostile = Ranges(vec![
            (top - 0x28, section(top - 0x8, 1, 1, 0x110)),
            (top - 0x8, vec![0u8; 8]),
        ]);
        // (No panic; the section there is owned by a thread of the dump
        // and its record is not readable: it counts, unchecked.)
        let wait = critical_section_wait(0x10c, &[top - 0x28, top, 0], &hostile, &ids, &[], None);
        assert_eq!(wait.holder, Some(0x110));
        assert!(wait.found.unwrap().contains("owner and lock count checked"));
        // The waiter's own section (it holds it) is not what it waits for.
        let wait = critical_section_wait(0x110, &[SECTION], &one, &ids, &[], None);
        assert_eq!(wait.holder, None);
    }
}
