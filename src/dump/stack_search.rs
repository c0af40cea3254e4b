//! The stack search: for threads whose walk is poor, the return addresses
//! found in stack memory below the walked frames (what `dps` shows).

use crate::model::{file_name, Frame, SymbolSource, Trust};
use crate::symbols::DumpSymbols;
use minidump::{Minidump, MinidumpModuleList, Module as _};
use minidump_processor::ProcessState;
use minidump_unwind::{CallStack, FrameTrust};

/// Bytes of stack memory searched below the walked frames, at most.
pub(super) const STACK_SEARCH_BYTES: u64 = 512 * 1024;
/// Hits kept per thread, nearest first.
pub(super) const STACK_SEARCH_HITS: usize = 64;
/// A name from an export table is taken for a hit only this close after the
/// export: farther, the address is more likely data than code of it.
pub(super) const STACK_SEARCH_EXPORT_REACH: u64 = 0x2000;

/// Whether a thread's walk says too little to stand alone: it broke off
/// (fewer than three frames) or is mostly stack scanning.
pub(super) fn walk_is_poor(stack: &CallStack) -> bool {
    let frames = &stack.frames;
    let scanned = frames
        .iter()
        .filter(|f| f.trust == FrameTrust::Scan)
        .count();
    frames.len() < 3 || scanned * 2 >= frames.len()
}

/// For threads whose walk is poor: every pointer-sized word of stack memory
/// below the walked frames that points into a loaded module and names a
/// function there (what `dps` shows a debugger user). Keyed by thread id.
pub(super) async fn search_stacks<T>(
    dump: &Minidump<'_, T>,
    memory: Option<&minidump::UnifiedMemoryList<'_>>,
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
) -> std::collections::HashMap<u32, Vec<crate::model::StackHit>>
where
    T: std::ops::Deref<Target = [u8]>,
{
    use minidump::MinidumpThreadList;
    let mut found = std::collections::HashMap::new();
    let Ok(threads) = dump.get_stream::<MinidumpThreadList>() else {
        return found;
    };
    let width: u64 = match state.system_info.cpu.pointer_width() {
        minidump::system_info::PointerWidth::Bits32 => 4,
        _ => 8,
    };
    for stack in state.threads.iter().filter(|s| walk_is_poor(s)) {
        let (Some(top), Some(last)) = (stack.frames.first(), stack.frames.last()) else {
            continue;
        };
        let Some(thread) = threads.get_thread(stack.thread_id) else {
            continue;
        };
        let Some(region) = memory.and_then(|list| thread.stack_memory(list)) else {
            continue;
        };
        let sp = top.context.get_stack_pointer();
        let bottom = last.context.get_stack_pointer();
        let bytes = region.bytes();
        let base = region.base_address();
        // The whole stack from the top: a scanned walk covers it with stale
        // and real addresses alike, a broken one stops early. Addresses the
        // walk already shows are not repeated.
        let from = sp.max(base);
        let end = base
            .saturating_add(bytes.len() as u64)
            .min(from.saturating_add(STACK_SEARCH_BYTES));
        let walked: std::collections::HashSet<u64> =
            stack.frames.iter().map(|f| f.instruction).collect();
        let mut hits: Vec<crate::model::StackHit> = Vec::new();
        // A stack pointer at the very top of the address space (a hostile
        // dump's) has no word to look at.
        let Some(mut at) = from.checked_next_multiple_of(width) else {
            continue;
        };
        while at.saturating_add(width) <= end && hits.len() < STACK_SEARCH_HITS {
            let offset = (at - base) as usize;
            let word = match width {
                4 => bytes
                    .get(offset..offset + 4)
                    .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
                _ => bytes
                    .get(offset..offset + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_le_bytes),
            };
            at += width;
            let Some(word) = word.filter(|w| *w > 1) else {
                continue;
            };
            let Some(module) = state.modules.module_at_address(word) else {
                continue;
            };
            // A walked caller frame records its return address minus one.
            if walked.contains(&word)
                || walked.contains(&(word - 1))
                || hits.iter().any(|h| h.address == word)
            {
                continue;
            }
            let Some((function, function_base, source)) =
                symbols.name_address(module, word - 1).await
            else {
                continue;
            };
            let function_offset = word.wrapping_sub(function_base);
            if source == SymbolSource::Exports && function_offset > STACK_SEARCH_EXPORT_REACH {
                continue;
            }
            hits.push(crate::model::StackHit {
                below_walk: at - width > bottom,
                stack_offset: (at - width).wrapping_sub(sp),
                address: word,
                module: file_name(&module.code_file()).to_string(),
                function: crate::model::without_symbol_version(&function).to_string(),
                function_offset,
                symbol_source: source,
            });
        }
        if !hits.is_empty() {
            found.insert(stack.thread_id, hits);
        }
    }
    found
}

/// A crash into code that is no longer mapped (a library unloaded while a
/// pointer into it was kept) whose walk found no caller in a loaded module:
/// unwinding stops at the unmapped address more often than not (no unwind
/// information covers it, and the frame pointer is whatever the caller left
/// in it). The caller's return address is then the nearest hit of the stack
/// search (a `call` pushed it at the stack pointer): it becomes the frame
/// below the top, found by stack scan, as a walker's scan would have made
/// it, and leaves the search's list. A walk that has a caller in a loaded
/// module keeps it: a searched hit is weaker evidence.
pub(super) fn caller_from_search(thread: &mut crate::model::Thread, modules: &MinidumpModuleList) {
    let Some(top) = thread.frames.first() else {
        return;
    };
    let into_unmapped = thread.crashing && top.module.is_none() && top.function.is_none();
    let walked_caller = thread.frames[1..].iter().any(|f| f.module.is_some());
    if !into_unmapped || walked_caller || thread.stack_search.is_empty() {
        return;
    }
    let hit = thread.stack_search.remove(0);
    // A caller frame records its return address minus one, as walked
    // frames do: the address is then inside the call.
    let instruction = hit.address.saturating_sub(1);
    let frame = Frame {
        instruction,
        module: Some(hit.module),
        function: Some(hit.function),
        module_offset: modules
            .module_at_address(instruction)
            .map(|m| instruction.wrapping_sub(m.base_address())),
        function_offset: Some(hit.function_offset.saturating_sub(1)),
        trust: Trust::Scan,
        symbol_source: hit.symbol_source,
        ..Frame::from_text(1)
    };
    thread.frames.insert(1, frame);
    for (i, frame) in thread.frames.iter_mut().enumerate() {
        frame.index = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{StackHit, Thread};

    fn hit(function: &str, stack_offset: u64) -> StackHit {
        StackHit {
            stack_offset,
            below_walk: stack_offset > 0,
            address: 0x5000 + stack_offset,
            module: "app".to_string(),
            function: function.to_string(),
            function_offset: 0x20,
            symbol_source: SymbolSource::Dwarf,
        }
    }

    fn crashed(frames: Vec<Frame>) -> Thread {
        Thread {
            crashing: true,
            frames,
            stack_search: vec![hit("flush_cache", 0), hit("main", 0x40)],
            ..Thread::new(7)
        }
    }

    fn unmapped() -> Frame {
        Frame {
            instruction: 0x7f00_0000_10f9,
            trust: Trust::Context,
            ..Frame::from_text(0)
        }
    }

    #[test]
    fn a_walk_without_a_caller_takes_the_nearest_hit() {
        let mut thread = crashed(vec![unmapped()]);
        caller_from_search(&mut thread, &MinidumpModuleList::new());
        let names: Vec<_> = thread.frames.iter().map(|f| f.function.clone()).collect();
        assert_eq!(names, [None, Some("flush_cache".to_string())]);
        let caller = &thread.frames[1];
        assert_eq!((caller.index, caller.trust), (1, Trust::Scan));
        assert_eq!(caller.instruction, 0x4fff);
        assert_eq!(caller.function_offset, Some(0x1f));
        assert_eq!(thread.stack_search.len(), 1);
    }

    #[test]
    fn a_walked_caller_in_a_loaded_module_stays_alone() {
        let walked = Frame {
            module: Some("app".to_string()),
            function: Some("run_hook".to_string()),
            trust: Trust::Scan,
            ..Frame::from_text(1)
        };
        let mut thread = crashed(vec![unmapped(), walked]);
        caller_from_search(&mut thread, &MinidumpModuleList::new());
        assert_eq!(thread.frames.len(), 2);
        assert_eq!(thread.frames[1].function.as_deref(), Some("run_hook"));
        assert_eq!(thread.stack_search.len(), 2);
    }

    #[test]
    fn only_a_crash_into_unmapped_code() {
        // A crash in a loaded module, and a thread that did not crash.
        let mut in_module = crashed(vec![Frame {
            module: Some("app".to_string()),
            ..unmapped()
        }]);
        let mut waiting = crashed(vec![unmapped()]);
        waiting.crashing = false;
        for thread in [&mut in_module, &mut waiting] {
            caller_from_search(thread, &MinidumpModuleList::new());
            assert_eq!(thread.frames.len(), 1);
            assert_eq!(thread.stack_search.len(), 2);
        }
    }
}
