//! The type a C++ program threw, from an MSVC C++ exception record.
//!
//! `throw` in MSVC-compiled code raises SEH exception 0xE06D7363 whose
//! parameters are a magic number, the thrown object, the `ThrowInfo` the
//! compiler emitted for its type and, on 64-bit Windows, the image base the
//! `ThrowInfo`'s offsets are relative to. `ThrowInfo` leads through the
//! `CatchableTypeArray` (every type a handler may catch it as, most derived
//! first) to the RTTI `TypeDescriptor`, whose decorated name
//! (`.?AVruntime_error@std@@`) gives the type. The tables are constant data
//! of the throwing module: read from the dump's memory when it holds them,
//! else from the module's binary.

/// The magic numbers in the first parameter (the exception ABI versions).
const MAGICS: [u64; 3] = [0x1993_0520, 0x1993_0521, 0x1993_0522];

/// The C++ exception code, "msc" in ASCII with 0xE0.
pub(crate) const CPP_EXCEPTION: u32 = 0xe06d_7363;

/// Longest type name read; real ones are far shorter.
const NAME_LIMIT: usize = 512;

/// Reads `len` bytes at a virtual address of the crashed process.
pub(crate) type Read<'a> = dyn Fn(u64, usize) -> Option<Vec<u8>> + 'a;

/// The thrown type's name (`std::runtime_error`), or its decorated name when
/// it cannot be undecorated; `None` when the record is not a C++ exception
/// or the tables cannot be read.
pub(crate) fn thrown_type(code: u32, parameters: &[u64], read: &Read<'_>) -> Option<String> {
    if code != CPP_EXCEPTION || parameters.len() < 3 {
        return None;
    }
    if !MAGICS.contains(&parameters[0]) {
        return None;
    }
    let throw_info = parameters[2];
    // x64 and ARM64: 32-bit offsets from the image base in parameter 3;
    // x86: absolute 32-bit addresses, no fourth parameter.
    let (image_base, pointer) = match parameters.get(3) {
        Some(&base) if base != 0 => (base, 8u64),
        _ => (0, 4u64),
    };
    let at = |field: u64| -> Option<u64> {
        let bytes = read(field, 4)?;
        let value = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        if image_base == 0 {
            Some(u64::from(value))
        } else {
            image_base.checked_add(u64::from(value))
        }
    };
    // ThrowInfo { attributes, pmfnUnwind, pForwardCompat, pCatchableTypeArray }
    let array = at(throw_info.checked_add(12)?)?;
    // CatchableTypeArray { nCatchableTypes, arrayOfCatchableTypes[] }
    let count = u32::from_le_bytes(read(array, 4)?.get(..4)?.try_into().ok()?);
    if count == 0 {
        return None;
    }
    let first = at(array.checked_add(4)?)?;
    // CatchableType { properties, pType, ... }
    let descriptor = at(first.checked_add(4)?)?;
    // TypeDescriptor { pVFTable, spare, name[] }
    let name_at = descriptor.checked_add(2 * pointer)?;
    let bytes = read(name_at, NAME_LIMIT).or_else(|| read(name_at, 64))?;
    let end = bytes.iter().position(|&b| b == 0)?;
    let decorated = std::str::from_utf8(&bytes[..end]).ok()?;
    if !decorated.starts_with(".?A") && !decorated.starts_with('.') {
        return None;
    }
    Some(undecorate_type(decorated))
}

/// `.?AVruntime_error@std@@` -> `std::runtime_error`. Class, struct and
/// union names are undecorated through the name of their vftable; other
/// types (`.H`, int) as the parameter of a function; a name that
/// undecorates neither way is returned as it is.
pub(crate) fn undecorate_type(decorated: &str) -> String {
    let flags = msvc_demangler::DemangleFlags::llvm();
    if let Some(rest) = decorated.strip_prefix(".?A") {
        // V class, U struct, T union, W4 enum; then the qualified name.
        let name = rest
            .strip_prefix("W4")
            .or_else(|| rest.get(1..))
            .unwrap_or(rest);
        if let Ok(vftable) = msvc_demangler::demangle(&format!("??_7{name}6B@"), flags) {
            let trimmed = vftable
                .trim_start_matches("const ")
                .trim_end_matches("::`vftable'")
                .trim();
            if !trimmed.is_empty() && trimmed != vftable {
                return trimmed.to_string();
            }
        }
    }
    if let Some(code) = decorated.strip_prefix('.') {
        // Any other type: as the parameter of a function `f(TYPE)`.
        if let Ok(text) = msvc_demangler::demangle(&format!("?f@@YAX{code}@Z"), flags) {
            if let Some(inner) = text
                .split_once("f(")
                .and_then(|(_, rest)| rest.strip_suffix(')'))
            {
                return inner.trim().to_string();
            }
        }
    }
    decorated.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decorated_type_names_undecorate() {
        assert_eq!(
            undecorate_type(".?AVruntime_error@std@@"),
            "std::runtime_error"
        );
        assert_eq!(
            undecorate_type(".?AVOnnxRuntimeException@onnxruntime@@"),
            "onnxruntime::OnnxRuntimeException"
        );
        assert_eq!(undecorate_type(".?AUError@c10@@"), "c10::Error");
        assert_eq!(undecorate_type(".H"), "int");
        assert_eq!(undecorate_type(".garbage"), ".garbage");
    }

    /// A process image laid out as MSVC lays the tables out on x64.
    fn image() -> (u64, Vec<u8>) {
        let base = 0x1_8000_0000u64;
        let mut data = vec![0u8; 0x400];
        let put = |data: &mut Vec<u8>, at: usize, value: u32| {
            data[at..at + 4].copy_from_slice(&value.to_le_bytes())
        };
        // ThrowInfo at 0x100: pCatchableTypeArray = 0x200
        put(&mut data, 0x100 + 12, 0x200);
        // CatchableTypeArray at 0x200: 2 types, first at 0x240
        put(&mut data, 0x200, 2);
        put(&mut data, 0x204, 0x240);
        put(&mut data, 0x208, 0x280);
        // CatchableType at 0x240: pType = 0x300
        put(&mut data, 0x244, 0x300);
        // TypeDescriptor at 0x300: vftable, spare, name
        let name = b".?AVOnnxRuntimeException@onnxruntime@@\0";
        data[0x310..0x310 + name.len()].copy_from_slice(name);
        (base, data)
    }

    #[test]
    fn the_thrown_type_is_read_through_the_tables() {
        let (base, data) = image();
        let read = |address: u64, len: usize| -> Option<Vec<u8>> {
            let start = usize::try_from(address.checked_sub(base)?).ok()?;
            let end = start.checked_add(len)?.min(data.len());
            data.get(start..end).map(<[u8]>::to_vec)
        };
        let params = [0x1993_0520, 0x5000, base + 0x100, base];
        assert_eq!(
            thrown_type(CPP_EXCEPTION, &params, &read).as_deref(),
            Some("onnxruntime::OnnxRuntimeException")
        );
        // Not a C++ exception, a wrong magic, unreadable tables: nothing.
        assert_eq!(thrown_type(0xc000_0005, &params, &read), None);
        assert_eq!(
            thrown_type(CPP_EXCEPTION, &[0x1234, 0, base + 0x100, base], &read),
            None
        );
        assert_eq!(
            thrown_type(CPP_EXCEPTION, &[0x1993_0520, 0, base + 0x9000, base], &read),
            None
        );
    }
}
