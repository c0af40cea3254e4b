//! What the exception says about the dump rather than the exit: a dump
//! requested by a tool or a debugger's break-in is no crash, and a crash
//! that is the process ending itself (abort, fail-fast) says why.

use super::tables::{any_match, Tables};
use crate::model::Thread;

/// Exception codes that mark how a dump was taken rather than a crash.
pub(super) const DUMP_REQUESTED_CODES: [(u32, &str); 2] = [
    (
        0xffff_ffff,
        "dump requested (no crash): written on demand from a live process",
    ),
    (
        0x0517_a7ed,
        "dump requested (no crash): Crashpad simulated exception",
    ),
];
pub(super) const BREAKPOINT: u32 = 0x8000_0003;

/// Codes of 0xC0000409 fast-fail exceptions (winnt.h's FAST_FAIL_*, as
/// the Windows SDK metadata numbers them; 15 to 17 are not assigned), by
/// the name a developer looks up.
pub(super) const FAST_FAIL_CODES: &[(u64, &str)] = &[
    (0, "FAST_FAIL_LEGACY_GS_VIOLATION"),
    (1, "FAST_FAIL_VTGUARD_CHECK_FAILURE"),
    (2, "FAST_FAIL_STACK_COOKIE_CHECK_FAILURE"),
    (3, "FAST_FAIL_CORRUPT_LIST_ENTRY"),
    (4, "FAST_FAIL_INCORRECT_STACK"),
    (5, "FAST_FAIL_INVALID_ARG"),
    (6, "FAST_FAIL_GS_COOKIE_INIT"),
    (7, "FAST_FAIL_FATAL_APP_EXIT"),
    (8, "FAST_FAIL_RANGE_CHECK_FAILURE"),
    (9, "FAST_FAIL_UNSAFE_REGISTRY_ACCESS"),
    (10, "FAST_FAIL_GUARD_ICALL_CHECK_FAILURE"),
    (11, "FAST_FAIL_GUARD_WRITE_CHECK_FAILURE"),
    (12, "FAST_FAIL_INVALID_FIBER_SWITCH"),
    (13, "FAST_FAIL_INVALID_SET_OF_CONTEXT"),
    (14, "FAST_FAIL_INVALID_REFERENCE_COUNT"),
    (18, "FAST_FAIL_INVALID_JUMP_BUFFER"),
    (19, "FAST_FAIL_MRDATA_MODIFIED"),
    (20, "FAST_FAIL_CERTIFICATION_FAILURE"),
    (21, "FAST_FAIL_INVALID_EXCEPTION_CHAIN"),
    (22, "FAST_FAIL_CRYPTO_LIBRARY"),
    (23, "FAST_FAIL_INVALID_CALL_IN_DLL_CALLOUT"),
    (24, "FAST_FAIL_INVALID_IMAGE_BASE"),
    (25, "FAST_FAIL_DLOAD_PROTECTION_FAILURE"),
    (26, "FAST_FAIL_UNSAFE_EXTENSION_CALL"),
    (27, "FAST_FAIL_DEPRECATED_SERVICE_INVOKED"),
    (28, "FAST_FAIL_INVALID_BUFFER_ACCESS"),
    (29, "FAST_FAIL_INVALID_BALANCED_TREE"),
    (30, "FAST_FAIL_INVALID_NEXT_THREAD"),
    (31, "FAST_FAIL_GUARD_ICALL_CHECK_SUPPRESSED"),
    (32, "FAST_FAIL_APCS_DISABLED"),
    (33, "FAST_FAIL_INVALID_IDLE_STATE"),
    (34, "FAST_FAIL_MRDATA_PROTECTION_FAILURE"),
    (35, "FAST_FAIL_UNEXPECTED_HEAP_EXCEPTION"),
    (36, "FAST_FAIL_INVALID_LOCK_STATE"),
    (37, "FAST_FAIL_GUARD_JUMPTABLE"),
    (38, "FAST_FAIL_INVALID_LONGJUMP_TARGET"),
    (39, "FAST_FAIL_INVALID_DISPATCH_CONTEXT"),
    (40, "FAST_FAIL_INVALID_THREAD"),
    (41, "FAST_FAIL_INVALID_SYSCALL_NUMBER"),
    (42, "FAST_FAIL_INVALID_FILE_OPERATION"),
    (43, "FAST_FAIL_LPAC_ACCESS_DENIED"),
    (44, "FAST_FAIL_GUARD_SS_FAILURE"),
    (45, "FAST_FAIL_LOADER_CONTINUITY_FAILURE"),
    (46, "FAST_FAIL_GUARD_EXPORT_SUPPRESSION_FAILURE"),
    (47, "FAST_FAIL_INVALID_CONTROL_STACK"),
    (48, "FAST_FAIL_SET_CONTEXT_DENIED"),
    (49, "FAST_FAIL_INVALID_IAT"),
    (50, "FAST_FAIL_HEAP_METADATA_CORRUPTION"),
    (51, "FAST_FAIL_PAYLOAD_RESTRICTION_VIOLATION"),
    (52, "FAST_FAIL_LOW_LABEL_ACCESS_DENIED"),
    (53, "FAST_FAIL_ENCLAVE_CALL_FAILURE"),
    (54, "FAST_FAIL_UNHANDLED_LSS_EXCEPTON"),
    (55, "FAST_FAIL_ADMINLESS_ACCESS_DENIED"),
    (56, "FAST_FAIL_UNEXPECTED_CALL"),
    (57, "FAST_FAIL_CONTROL_INVALID_RETURN_ADDRESS"),
    (58, "FAST_FAIL_UNEXPECTED_HOST_BEHAVIOR"),
    (59, "FAST_FAIL_FLAGS_CORRUPTION"),
    (60, "FAST_FAIL_VEH_CORRUPTION"),
    (61, "FAST_FAIL_ETW_CORRUPTION"),
    (62, "FAST_FAIL_RIO_ABORT"),
    (63, "FAST_FAIL_INVALID_PFN"),
    (64, "FAST_FAIL_GUARD_ICALL_CHECK_FAILURE_XFG"),
    (65, "FAST_FAIL_CAST_GUARD"),
    (66, "FAST_FAIL_HOST_VISIBILITY_CHANGE"),
    (67, "FAST_FAIL_KERNEL_CET_SHADOW_STACK_ASSIST"),
    (68, "FAST_FAIL_PATCH_CALLBACK_FAILED"),
    (69, "FAST_FAIL_NTDLL_PATCH_FAILED"),
    (70, "FAST_FAIL_INVALID_FLS_DATA"),
];

/// The name of a fast-fail code (`FAST_FAIL_FATAL_APP_EXIT` for 7).
pub(crate) fn fast_fail_name(code: u64) -> Option<&'static str> {
    FAST_FAIL_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| *name)
}

/// Why a crash is an abort (the process ended itself on purpose), if it is.
pub(super) fn abort_reason(
    exception: &crate::model::Exception,
    windows: bool,
    thread: Option<&Thread>,
    tables: &Tables,
) -> Option<String> {
    match exception.code {
        0xc000_0409 if windows => {
            let code = exception.parameters.first().copied();
            let name = code.and_then(|c| FAST_FAIL_CODES.iter().find(|(n, _)| *n == c));
            return Some(match (code, name) {
                (_, Some((c, name))) => format!("fail-fast 0xC0000409, code {c} ({name})"),
                (Some(c), None) => format!("fail-fast 0xC0000409, code {c}"),
                (None, None) => "fail-fast 0xC0000409".to_string(),
            });
        }
        0xc000_0602 if windows => return Some("fail-fast exception 0xC0000602".to_string()),
        // What crash reporters record for abort() caught by their SIGABRT
        // handler: the status of a fatal application exit.
        0x4000_0015 if windows => {
            return Some("abort(): STATUS_FATAL_APP_EXIT 0x40000015".to_string())
        }
        6 if !windows => return Some("SIGABRT".to_string()),
        _ => {}
    }
    let (index, name) = thread?
        .frames
        .iter()
        .take(tables.abort_depth)
        .enumerate()
        .find_map(|(i, f)| {
            f.names()
                .find(|n| any_match(&tables.abort_functions, n))
                .map(|n| (i, n))
        })?;
    Some(format!("{name} at frame {index}"))
}

/// The thread a debugger injects to break in runs only in ntdll/kernel32
/// (DbgUiRemoteBreakin -> DbgBreakPoint).
pub(super) fn is_break_in_thread(thread: &Thread, tables: &Tables) -> bool {
    let named = thread
        .frames
        .iter()
        .any(|f| f.names().any(|n| any_match(&tables.break_in_functions, n)));
    let only_system = !thread.frames.is_empty()
        && thread.frames.iter().all(|f| {
            f.module
                .as_deref()
                .is_some_and(|m| tables.break_in_modules.iter().any(|p| p.matches(m)))
        });
    named || only_system
}
