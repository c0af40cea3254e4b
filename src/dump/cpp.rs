//! The C++ exception of a crash: the type an MSVC `throw` threw, and one
//! still being dispatched when the process died, read from the dump's
//! memory or the throwing module's binary.

use super::stack_search::STACK_SEARCH_BYTES;
use crate::symbols::DumpSymbols;
use minidump::{Minidump, Module as _};
use minidump_processor::ProcessState;

/// The type a C++ exception threw: its tables read from the throwing
/// module's image (the dump's memory, or the binary found for it).
pub(super) async fn thrown_type(
    code: u32,
    parameters: &[u64],
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
) -> Option<String> {
    use crate::symbols::unwind::pe::ImageBytes;
    if code != crate::cpp_exception::CPP_EXCEPTION {
        return None;
    }
    // The module holding the ThrowInfo (parameter 2).
    let module = state.modules.module_at_address(*parameters.get(2)?)?;
    let base = module.base_address();
    let image = symbols.module_image(module).await;
    let read = |address: u64, len: usize| image.read(address.checked_sub(base)?, len);
    crate::cpp_exception::thrown_type(code, parameters, &read)
}

/// An MSVC C++ exception still being dispatched on the crashing thread: the
/// EXCEPTION_RECORD that RaiseException built for a `throw` lies in the live
/// part of the stack (from the crash's stack pointer up) while the handlers
/// run, so an abort from std::terminate, or a fault in a catch block, still
/// has it. A record is taken only when it reads as one whole: the C++ code,
/// sane flags, the parameter count of the C++ ABI, its magic, a ThrowInfo
/// inside a module and (64-bit) that module's base, and a type read from
/// the tables.
pub(super) async fn cpp_in_flight<T>(
    dump: &Minidump<'_, T>,
    memory: Option<&minidump::UnifiedMemoryList<'_>>,
    state: &ProcessState,
    symbols: &DumpSymbols<'_>,
    thread_id: u32,
) -> Option<crate::model::CppInFlight>
where
    T: std::ops::Deref<Target = [u8]>,
{
    use minidump::MinidumpThreadList;
    let threads = dump.get_stream::<MinidumpThreadList>().ok()?;
    let region = threads.get_thread(thread_id)?.stack_memory(memory?)?;
    let stack = state.threads.iter().find(|s| s.thread_id == thread_id)?;
    let sp = stack.frames.first()?.context.get_stack_pointer();
    let wide = !matches!(
        state.system_info.cpu.pointer_width(),
        minidump::system_info::PointerWidth::Bits32
    );
    let (bytes, base) = (region.bytes(), region.base_address());
    let start = usize::try_from(sp.checked_sub(base)?).ok()?;
    let end = bytes
        .len()
        .min(start.saturating_add(STACK_SEARCH_BYTES as usize));
    let word = |at: usize, wide: bool| -> Option<u64> {
        if wide {
            Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
        } else {
            Some(u64::from(u32::from_le_bytes(
                bytes.get(at..at + 4)?.try_into().ok()?,
            )))
        }
    };
    let align = if wide { 8 } else { 4 };
    // A stack pointer far above the region's base (a hostile dump's) has
    // no word of it to look at.
    let mut at = start.checked_next_multiple_of(align)?;
    while at + 4 <= end {
        let here = at;
        at += align;
        if word(here, false) != Some(u64::from(crate::cpp_exception::CPP_EXCEPTION)) {
            continue;
        }
        // EXCEPTION_RECORD: code, flags, record, address, count, information[]
        // (pointers 8 bytes wide and 8-aligned on 64-bit).
        let (count_at, info_at, width) = if wide { (24, 32, 8) } else { (16, 20, 4) };
        let flags = word(here + 4, false)?;
        let count = word(here + count_at, false)?;
        let wanted = if wide { 4 } else { 3 };
        if flags & !0xff != 0 || count != wanted {
            continue;
        }
        let parameters: Vec<u64> = (0..count as usize)
            .map_while(|i| word(here + info_at + i * width, wide))
            .collect();
        if parameters.len() != count as usize {
            continue;
        }
        let Some(module) = state.modules.module_at_address(parameters[2]) else {
            continue;
        };
        if wide && parameters[3] != module.base_address() {
            continue;
        }
        let code = crate::cpp_exception::CPP_EXCEPTION;
        if let Some(cpp_type) = thrown_type(code, &parameters, state, symbols).await {
            return Some(crate::model::CppInFlight {
                cpp_type,
                record_address: base.wrapping_add(here as u64),
            });
        }
    }
    None
}
