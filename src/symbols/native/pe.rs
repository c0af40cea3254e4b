//! PE images (.dll, .exe): their identity, the CodeView record that names
//! their PDB, and their export table — read from a file, or from the image
//! as it lay in the process's memory when the dump holds it.

use object::pe::{
    ImageDosHeader, ImageNtHeaders32, ImageNtHeaders64, IMAGE_DIRECTORY_ENTRY_EXCEPTION,
    IMAGE_DIRECTORY_ENTRY_EXPORT, IMAGE_FILE_MACHINE_AMD64,
};
use object::read::pe::{ExportTable, ExportTarget, ImageNtHeaders, ImageOptionalHeader, PeFile};
use object::{LittleEndian as LE, Object as _};

use super::{AddressTable, FunctionExtents};
use crate::model::file_name;
use crate::model::SymbolSource;
use crate::symbols::identity::{debug_id_from_guid, pe_code_id, DebugId};

/// What a PE file says about itself.
#[derive(Debug)]
pub struct PeInfo {
    /// Timestamp + SizeOfImage, spelled as a code id.
    pub code_id: String,
    /// The PDB its CodeView record names: file name and GUID + age.
    pub pdb: Option<(String, DebugId)>,
    pub exports: AddressTable,
}

/// Reads a PE file's identity and exports. `Err` says why it is not one.
pub fn read_file(data: &[u8]) -> Result<PeInfo, String> {
    match object::FileKind::parse(data).map_err(|e| e.to_string())? {
        object::FileKind::Pe32 => read_typed::<ImageNtHeaders32>(data),
        object::FileKind::Pe64 => read_typed::<ImageNtHeaders64>(data),
        other => Err(format!("not a PE image ({other:?})")),
    }
}

fn read_typed<Pe: ImageNtHeaders>(data: &[u8]) -> Result<PeInfo, String> {
    let file = PeFile::<Pe>::parse(data).map_err(|e| e.to_string())?;
    let headers = file.nt_headers();
    let timestamp = headers.file_header().time_date_stamp.get(LE);
    let size_of_image = headers.optional_header().size_of_image();
    let pdb = match file.pdb_info() {
        Ok(Some(cv)) => {
            let path = String::from_utf8_lossy(cv.path()).into_owned();
            Some((
                file_name(&path).to_string(),
                debug_id_from_guid(&cv.guid(), cv.age()),
            ))
        }
        _ => None,
    };
    let exports = match file.export_table() {
        Ok(Some(table)) => export_entries(&table),
        _ => Vec::new(),
    };
    let extents = match file.data_directories().get(IMAGE_DIRECTORY_ENTRY_EXCEPTION) {
        Some(dir) if headers.file_header().machine.get(LE) == IMAGE_FILE_MACHINE_AMD64 => {
            let sections = file.section_table();
            let read = |rva: u64, len: usize| -> Option<Vec<u8>> {
                let bytes = sections.pe_data_at(data, u32::try_from(rva).ok()?)?;
                bytes.get(..len).map(<[u8]>::to_vec)
            };
            function_extents(
                &read,
                u64::from(dir.virtual_address.get(LE)),
                u64::from(dir.size.get(LE)),
            )
        }
        _ => FunctionExtents::default(),
    };
    Ok(PeInfo {
        code_id: pe_code_id(timestamp, size_of_image),
        pdb,
        exports: AddressTable::new(exports, SymbolSource::Exports, u64::from(size_of_image))
            .with_extents(extents),
    })
}

/// Size of an x64 RUNTIME_FUNCTION entry.
const RUNTIME_FUNCTION_SIZE: u64 = 12;
/// UNWIND_INFO flag: the entry continues another one (a function split into
/// parts), whose RUNTIME_FUNCTION follows the unwind codes.
const UNW_FLAG_CHAININFO: u8 = 0x4;
/// Chains are short in practice; a loop in a hostile image must end.
const MAX_CHAIN: usize = 32;

/// The function extents of an x64 image's exception directory, each part
/// of a chained function pointing at the function's primary start.
/// `read(rva, len)` returns the image's bytes at an RVA.
fn function_extents(
    read: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
    rva: u64,
    size: u64,
) -> FunctionExtents {
    // A directory larger than any image is hostile or corrupt.
    if size == 0 || size > 64 << 20 {
        return FunctionExtents::default();
    }
    let Some(table) = read(rva, size as usize) else {
        return FunctionExtents::default();
    };
    let u32_at = |bytes: &[u8], at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            bytes.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    let entry = |bytes: &[u8], at: usize| -> Option<(u64, u64, u64)> {
        Some((
            u32_at(bytes, at)?,
            u32_at(bytes, at + 4)?,
            u32_at(bytes, at + 8)?,
        ))
    };
    // The parent of a chained part: the RUNTIME_FUNCTION after the unwind
    // codes (count rounded up to an even number of 2-byte slots).
    let parent = |unwind: u64| -> Option<(u64, u64, u64)> {
        let header = read(unwind, 4)?;
        if header[0] >> 3 & UNW_FLAG_CHAININFO == 0 {
            return None;
        }
        let codes = u64::from(header[2]).next_multiple_of(2);
        let at = unwind + 4 + codes * 2;
        entry(&read(at, RUNTIME_FUNCTION_SIZE as usize)?, 0)
    };
    let entries = table
        .chunks_exact(RUNTIME_FUNCTION_SIZE as usize)
        .filter_map(|chunk| entry(chunk, 0))
        .map(|(begin, end, unwind)| {
            let mut start = begin;
            let mut unwind = unwind;
            for _ in 0..MAX_CHAIN {
                match parent(unwind) {
                    Some((parent_begin, _, parent_unwind)) => {
                        start = parent_begin;
                        unwind = parent_unwind;
                    }
                    None => break,
                }
            }
            (begin, end, start)
        })
        .collect();
    FunctionExtents::new(entries)
}

fn export_entries(table: &ExportTable<'_>) -> Vec<(u64, Option<u64>, String)> {
    let Ok(exports) = table.exports() else {
        return Vec::new();
    };
    exports
        .into_iter()
        .filter_map(|export| {
            let ExportTarget::Address(rva) = export.target else {
                return None; // forwarded to another DLL: no code here
            };
            if rva == 0 {
                // An unused slot of the ordinal table (linkers leave them
                // for gaps, and lld for ordinal 0): no export at all.
                return None;
            }
            let name = match export.name {
                Some(name) => super::demangle(&String::from_utf8_lossy(name)),
                None => format!("#{}", export.ordinal),
            };
            Some((u64::from(rva), None, name))
        })
        .collect()
}

/// Reads the export table of a PE image as it was mapped in memory (so
/// addresses in it are RVAs), with `read(rva, len)` returning the bytes the
/// dump holds there. Returns the code id the headers carry too, so the
/// caller can check the image is the module's.
pub(crate) fn read_image(
    read: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
    image_size: u64,
) -> Option<(String, AddressTable)> {
    let headers = read(0, 0x1000)?;
    let dos = ImageDosHeader::parse(&headers[..]).ok()?;
    let mut offset = u64::from(dos.nt_headers_offset());
    let magic = object::read::pe::optional_header_magic(&headers[..]).ok()?;
    if magic == object::pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC {
        image_typed::<ImageNtHeaders64>(read, &headers, &mut offset, image_size)
    } else {
        image_typed::<ImageNtHeaders32>(read, &headers, &mut offset, image_size)
    }
}

fn image_typed<Pe: ImageNtHeaders>(
    read: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
    headers: &[u8],
    offset: &mut u64,
    image_size: u64,
) -> Option<(String, AddressTable)> {
    let (nt, directories) = Pe::parse(headers, offset).ok()?;
    let code_id = pe_code_id(
        nt.file_header().time_date_stamp.get(LE),
        nt.optional_header().size_of_image(),
    );
    let directory = directories.get(IMAGE_DIRECTORY_ENTRY_EXPORT)?;
    let (rva, size) = (directory.virtual_address.get(LE), directory.size.get(LE));
    if size == 0 || u64::from(rva) + u64::from(size) > image_size {
        return Some((
            code_id,
            AddressTable::new(Vec::new(), SymbolSource::Exports, image_size),
        ));
    }
    let data = read(u64::from(rva), size as usize)?;
    let table = ExportTable::parse(&data, rva).ok()?;
    let extents = match directories.get(IMAGE_DIRECTORY_ENTRY_EXCEPTION) {
        Some(dir) if nt.file_header().machine.get(LE) == IMAGE_FILE_MACHINE_AMD64 => {
            function_extents(
                read,
                u64::from(dir.virtual_address.get(LE)),
                u64::from(dir.size.get(LE)),
            )
        }
        _ => FunctionExtents::default(),
    };
    Some((
        code_id,
        AddressTable::new(export_entries(&table), SymbolSource::Exports, image_size)
            .with_extents(extents),
    ))
}
