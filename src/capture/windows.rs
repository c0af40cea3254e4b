//! Windows capture: MiniDumpWriteDump with what `procdump -mp` asks for
//! (thread info, unloaded modules, handle data, read/write memory). dbghelp
//! adds thread names itself where the OS has them.
//!
//! Not built or run on the project's Linux machines: see README, "Windows".
//! `run` is Linux-only for now.

use std::fs::File;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_ACCESS_DENIED, ERROR_INVALID_PARAMETER, HANDLE, STILL_ACTIVE,
};
use windows_sys::Win32::System::Diagnostics::Debug::{
    MiniDumpWithDataSegs, MiniDumpWithFullMemoryInfo, MiniDumpWithHandleData,
    MiniDumpWithPrivateReadWriteMemory, MiniDumpWithThreadInfo, MiniDumpWithUnloadedModules,
    MiniDumpWriteDump,
};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, OpenProcess, QueryFullProcessImageNameW, PROCESS_DUP_HANDLE,
    PROCESS_NAME_WIN32, PROCESS_QUERY_INFORMATION, PROCESS_QUERY_LIMITED_INFORMATION,
    PROCESS_VM_READ,
};

use super::types::{CaptureError, DescendantCore, ExitStatus, RunOptions, Supervised};

/// A process handle closed on drop.
struct Process(HANDLE);

impl Process {
    fn open(pid: u32, access: u32) -> Result<Process, CaptureError> {
        // SAFETY: OpenProcess has no memory effects; a null handle is an error.
        let handle = unsafe { OpenProcess(access, 0, pid) };
        if handle.is_null() {
            // SAFETY: reads the calling thread's last error.
            let error = unsafe { GetLastError() };
            return Err(match error {
                ERROR_INVALID_PARAMETER => CaptureError::NoSuchProcess(pid),
                ERROR_ACCESS_DENIED => CaptureError::Refused {
                    pid,
                    why: "access denied (run as the process's user, or elevated)".to_string(),
                },
                other => CaptureError::Refused {
                    pid,
                    why: std::io::Error::from_raw_os_error(other as i32).to_string(),
                },
            });
        }
        Ok(Process(handle))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenProcess and is closed once.
        unsafe { CloseHandle(self.0) };
    }
}

pub(super) fn process_name(pid: u32) -> String {
    let Ok(process) = Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION) else {
        return String::new();
    };
    let mut buffer = [0u16; 1024];
    let mut size = buffer.len() as u32;
    // SAFETY: the buffer and its size are passed together.
    let ok = unsafe {
        QueryFullProcessImageNameW(
            process.0,
            PROCESS_NAME_WIN32,
            buffer.as_mut_ptr(),
            &mut size,
        )
    };
    if ok == 0 {
        return String::new();
    }
    let path = String::from_utf16_lossy(&buffer[..size as usize]);
    crate::model::file_name(&path).to_string()
}

pub(super) fn check_attachable(pid: u32) -> Result<(), CaptureError> {
    if pid == std::process::id() {
        return Err(CaptureError::OwnProcess(pid));
    }
    let process = Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
    let mut code = 0u32;
    // SAFETY: writes one u32.
    let ok = unsafe { GetExitCodeProcess(process.0, &mut code) };
    if ok != 0 && code != STILL_ACTIVE as u32 {
        return Err(CaptureError::Exited {
            pid,
            how: format!("exited with status {code}"),
        });
    }
    Ok(())
}

pub(super) fn write_live_dump(
    pid: u32,
    file: &mut File,
    _path: &Path,
    _stop: super::types::StopOptions,
) -> Result<(), CaptureError> {
    let process = Process::open(
        pid,
        PROCESS_QUERY_INFORMATION | PROCESS_VM_READ | PROCESS_DUP_HANDLE,
    )?;
    let kind = MiniDumpWithDataSegs
        | MiniDumpWithPrivateReadWriteMemory
        | MiniDumpWithHandleData
        | MiniDumpWithFullMemoryInfo
        | MiniDumpWithThreadInfo
        | MiniDumpWithUnloadedModules;
    // SAFETY: valid process and file handles; no exception, user stream or
    // callback parameters.
    let ok = unsafe {
        MiniDumpWriteDump(
            process.0,
            pid,
            file.as_raw_handle() as HANDLE,
            kind,
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if ok == 0 {
        return Err(CaptureError::Writer {
            pid,
            why: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(())
}

pub(super) fn why_no_threads(pid: u32) -> CaptureError {
    CaptureError::Refused {
        pid,
        why: "MiniDumpWriteDump wrote no thread".to_string(),
    }
}

pub(super) fn supervise(
    _options: &RunOptions,
    _notice: &dyn Fn(super::types::Notice),
) -> Result<(Supervised, Vec<DescendantCore>), CaptureError> {
    Err(CaptureError::Unsupported("dumptriage run"))
}

pub(super) fn exit_like(status: ExitStatus) -> ! {
    match status {
        ExitStatus::Code(code) => std::process::exit(code),
        ExitStatus::Signal(_) => std::process::exit(1),
    }
}

pub(super) fn signal_name(signal: i32) -> String {
    format!("signal {signal}")
}

/// `attach --tree` finds process trees on Linux only.
pub(super) fn stuck_below(_pid: u32) -> Vec<u32> {
    Vec::new()
}

/// Attach by name is Linux only.
pub(super) fn processes_named(name: &str) -> Result<Vec<u32>, String> {
    Err(format!(
        "attach by name ({name:?}) works on Linux only: give the PID"
    ))
}

/// The command line of another process is not read here.
pub(super) fn command_line(_pid: u32) -> Vec<String> {
    Vec::new()
}
