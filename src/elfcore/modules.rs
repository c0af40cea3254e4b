//! The module list of a core: the ELF files of its NT_FILE mappings, each
//! with the build id read from its own headers (in the core's memory: the
//! kernel keeps the first page of every mapped ELF file by default), or
//! from the file of that path on this machine when the core left the
//! headers out, and the vDSO (not a file, but in the core's memory).

use std::io::Read;

use object::elf::{self, FileHeader64};
use object::read::elf::{NoteIterator, ProgramHeader as _};
use object::LittleEndian;

use super::parse::{program_headers, Core, Memory};

const LE: LittleEndian = LittleEndian;

/// AT_ENTRY: the executable's entry point (which module is the program).
const AT_ENTRY: u64 = 9;
/// AT_SYSINFO_EHDR: the vDSO's ELF header.
const AT_SYSINFO_EHDR: u64 = 33;
/// More mapped files than any real process has: the rest are not listed.
const MAX_MODULES: usize = 4096;
/// How much of an ELF file's start is read for its program headers and
/// build-id note.
const HEAD: usize = 8192;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CoreModule {
    pub base: u64,
    pub size: u64,
    pub path: String,
    pub build_id: Option<Vec<u8>>,
}

/// The core's modules, the executable first.
pub(crate) fn modules(
    core: &Core,
    memory: &Memory<'_>,
    warnings: &mut Vec<String>,
) -> Vec<CoreModule> {
    let entry = auxv(core, AT_ENTRY);
    let mut out: Vec<CoreModule> = Vec::new();
    let mut from_disk = 0usize;
    for (i, map) in core.files.iter().enumerate() {
        if map.file_offset != 0 || out.len() >= MAX_MODULES {
            continue;
        }
        // Mappings of the same file that follow this one make up the
        // module's extent (text, rodata, data).
        let end = core.files[i..]
            .iter()
            .take_while(|m| m.path == map.path)
            .map(|m| m.end)
            .max()
            .unwrap_or(map.end);
        let path = map.path.trim_end_matches(" (deleted)").to_string();
        let in_core = memory.read(map.start, 64).map(<[u8]>::to_vec);
        let id_from_disk = in_core.is_none();
        let head = match in_core {
            Some(head) => Some(head_in_memory(memory, map.start).unwrap_or(head)),
            None => head_on_disk(&path),
        };
        let is_program = entry.is_some_and(|e| e >= map.start && e < end);
        let Some(head) = head.filter(|h| h.starts_with(b"\x7fELF")) else {
            // Data files (fonts, locale archives, /dev/ mappings, GPU
            // driver handles) are no modules; a library the core kept no
            // page of and this machine lacks still is, by its name.
            if is_program || looks_like_library(&path) {
                out.push(CoreModule {
                    base: map.start,
                    size: end - map.start,
                    path,
                    build_id: None,
                });
            }
            continue;
        };
        from_disk += usize::from(id_from_disk);
        let module = CoreModule {
            base: map.start,
            size: end - map.start,
            build_id: build_id(&head, memory, map.start, &path, id_from_disk),
            path,
        };
        if is_program {
            out.insert(0, module);
        } else {
            out.push(module);
        }
    }
    if let Some(vdso) = auxv(core, AT_SYSINFO_EHDR).filter(|a| *a != 0) {
        if let Some(segment) = memory.segment(vdso) {
            let head = head_in_memory(memory, vdso);
            out.push(CoreModule {
                base: vdso,
                size: segment.memsz - (vdso - segment.vaddr),
                path: "linux-vdso.so.1".into(),
                build_id: head.and_then(|h| build_id(&h, memory, vdso, "", false)),
            });
        }
    }
    if from_disk > 0 {
        warnings.push(format!(
            "the core holds no ELF header for {from_disk} mapped file(s): their build ids were \
             read from the files of the same path on this machine, which may not be the \
             files the process ran"
        ));
    }
    out
}

fn auxv(core: &Core, kind: u64) -> Option<u64> {
    core.auxv.iter().find(|(k, _)| *k == kind).map(|(_, v)| *v)
}

fn looks_like_library(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with('/') && (name.ends_with(".so") || name.contains(".so."))
}

/// Up to HEAD bytes of the image at `base`, as far as the core holds them.
fn head_in_memory(memory: &Memory<'_>, base: u64) -> Option<Vec<u8>> {
    let mut len = HEAD;
    while len >= 64 {
        if let Some(bytes) = memory.read(base, len) {
            return Some(bytes.to_vec());
        }
        len /= 2;
    }
    None
}

fn head_on_disk(path: &str) -> Option<Vec<u8>> {
    if !path.starts_with('/') {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::with_capacity(HEAD);
    file.take(HEAD as u64).read_to_end(&mut head).ok()?;
    Some(head)
}

/// The GNU build id of the ELF image whose first bytes are `head`, loaded
/// at `base`: its PT_NOTE segments, read from the core's memory at their
/// load address or, for a file read from disk, at their file offset.
fn build_id(
    head: &[u8],
    memory: &Memory<'_>,
    base: u64,
    path: &str,
    disk: bool,
) -> Option<Vec<u8>> {
    let (headers, _) = program_headers(head).ok()?;
    let headers = &headers[..headers.len().min(256)];
    // The load bias: where the segment at file offset 0 was put.
    let first_load = headers
        .iter()
        .filter(|h| h.p_type(LE) == elf::PT_LOAD)
        .map(|h| h.p_vaddr(LE))
        .min()?;
    let bias = base.wrapping_sub(first_load & !0xfff);
    for h in headers.iter().filter(|h| h.p_type(LE) == elf::PT_NOTE) {
        let (offset, vaddr) = (h.p_offset(LE), h.p_vaddr(LE));
        let size = usize::try_from(h.p_filesz(LE).min(4096)).ok()?;
        let notes = if disk {
            read_at(path, offset, size)
        } else {
            head.get(usize::try_from(offset).ok()?..)
                .and_then(|rest| rest.get(..size))
                .map(<[u8]>::to_vec)
                .or_else(|| {
                    memory
                        .read(vaddr.wrapping_add(bias), size)
                        .map(<[u8]>::to_vec)
                })
        };
        if let Some(id) = notes.and_then(|n| gnu_build_id(&n, h.p_align(LE))) {
            return Some(id);
        }
    }
    None
}

fn read_at(path: &str, offset: u64, len: usize) -> Option<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut out = Vec::with_capacity(len);
    file.take(len as u64).read_to_end(&mut out).ok()?;
    Some(out)
}

/// The NT_GNU_BUILD_ID note among `notes` (a PT_NOTE segment aligned to
/// `align`).
fn gnu_build_id(notes: &[u8], align: u64) -> Option<Vec<u8>> {
    let mut notes = NoteIterator::<FileHeader64<LittleEndian>>::new(LE, align, notes).ok()?;
    while let Some(note) = notes.next().ok()? {
        let id = note.desc();
        if note.n_type(LE) == elf::NT_GNU_BUILD_ID
            && note.name() == elf::ELF_NOTE_GNU
            && !id.is_empty()
        {
            return Some(id.to_vec());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_id_note_is_found_among_others() {
        let mut notes = Vec::new();
        for (name, kind, desc) in [
            (&b"GNU\0"[..], 1u32, &[0u8; 16][..]),
            (b"GNU\0", 3, &[0xab; 20]),
        ] {
            notes.extend((name.len() as u32).to_le_bytes());
            notes.extend((desc.len() as u32).to_le_bytes());
            notes.extend(kind.to_le_bytes());
            notes.extend(name);
            notes.extend(desc);
        }
        assert_eq!(gnu_build_id(&notes, 4), Some(vec![0xab; 20]));
        assert_eq!(gnu_build_id(&notes[..40], 4), None, "cut before the id");
    }

    #[test]
    fn libraries_are_known_by_name_and_data_files_are_not() {
        assert!(looks_like_library("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
        assert!(looks_like_library("/opt/rocm/lib/libamdhip64.so"));
        assert!(!looks_like_library("/dev/nvidia0"));
        assert!(!looks_like_library("/usr/lib/locale/locale-archive"));
    }
}
