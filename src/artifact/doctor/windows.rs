//! The Windows facts: Windows Error Reporting's LocalDumps key (where and
//! what kind of dump WER keeps of a crashing program) and its `Disabled`
//! value. Compiled for Windows only; the checks that read these facts are
//! tested on every OS (mod.rs).

use windows_sys::Win32::Foundation::ERROR_SUCCESS;
use windows_sys::Win32::System::Registry::{
    RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RRF_RT_REG_EXPAND_SZ, RRF_RT_REG_SZ,
};

use super::facts::{can_write, WindowsFacts};
use super::options::DoctorOptions;

const WER: &str = r"SOFTWARE\Microsoft\Windows\Windows Error Reporting";
const LOCAL_DUMPS: &str = r"SOFTWARE\Microsoft\Windows\Windows Error Reporting\LocalDumps";

pub(super) fn probe(options: &DoctorOptions) -> WindowsFacts {
    let dump_folder = string(LOCAL_DUMPS, "DumpFolder");
    let local_dumps = key_exists(LOCAL_DUMPS);
    let writable = local_dumps.then(|| {
        let folder = dump_folder
            .clone()
            .map(|f| expand(&f, options))
            .or_else(|| {
                options.var("LOCALAPPDATA").map(|d| {
                    std::path::Path::new(&d)
                        .join("CrashDumps")
                        .display()
                        .to_string()
                })
            })
            .unwrap_or_default();
        can_write(std::path::Path::new(&folder))
    });
    WindowsFacts {
        local_dumps,
        dump_folder,
        dump_type: dword(LOCAL_DUMPS, "DumpType"),
        dump_count: dword(LOCAL_DUMPS, "DumpCount"),
        wer_disabled: dword(WER, "Disabled") == Some(1),
        dump_folder_writable: writable,
    }
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain([0]).collect()
}

fn key_exists(key: &str) -> bool {
    subkey_opens(&wide(key))
}

fn subkey_opens(key: &[u16]) -> bool {
    use windows_sys::Win32::System::Registry::{RegCloseKey, RegOpenKeyExW, HKEY, KEY_READ};
    let mut handle: HKEY = std::ptr::null_mut();
    // SAFETY: a NUL-terminated key name and an out-pointer we own.
    let status =
        unsafe { RegOpenKeyExW(HKEY_LOCAL_MACHINE, key.as_ptr(), 0, KEY_READ, &mut handle) };
    if status == ERROR_SUCCESS {
        // SAFETY: the key we opened.
        unsafe { RegCloseKey(handle) };
        true
    } else {
        false
    }
}

fn dword(key: &str, value: &str) -> Option<u32> {
    let (key, value) = (wide(key), wide(value));
    let mut data = 0u32;
    let mut size = 4u32;
    // SAFETY: NUL-terminated names, a 4-byte buffer and its size.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut data as *mut u32).cast(),
            &mut size,
        )
    };
    (status == ERROR_SUCCESS).then_some(data)
}

fn string(key: &str, value: &str) -> Option<String> {
    let (key, value) = (wide(key), wide(value));
    let mut buf = vec![0u16; 1024];
    let mut size = (buf.len() * 2) as u32;
    // SAFETY: NUL-terminated names, a buffer and its size in bytes. The
    // value as stored (RRF_NOEXPAND): shown as the user wrote it, and
    // `expand` resolves its %NAME% references for the writability check.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ | 0x1000_0000, /* RRF_NOEXPAND */
            std::ptr::null_mut(),
            buf.as_mut_ptr().cast(),
            &mut size,
        )
    };
    if status != ERROR_SUCCESS {
        return None;
    }
    let len = (size as usize / 2).min(buf.len());
    let text = String::from_utf16_lossy(&buf[..len]);
    Some(text.trim_end_matches('\0').to_string())
}

/// `%NAME%` references to the environment, expanded.
fn expand(text: &str, options: &DoctorOptions) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('%') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('%') {
            Some(end) => {
                let name = &after[..end];
                match options.var(name) {
                    Some(value) => out.push_str(&value.to_string_lossy()),
                    None => {
                        out.push('%');
                        out.push_str(name);
                        out.push('%');
                    }
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
