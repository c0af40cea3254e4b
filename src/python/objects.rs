//! Attributes of Python objects in memory: an instance's attributes (a
//! thread's `threading.Thread._name`, `_daemonic`, `_tstate_lock`), through the instance layouts of
//! CPython 3.10 (a `__dict__` at `tp_dictoffset`), 3.11 (managed dict and
//! values before the object), 3.12 (one tagged dict-or-values pointer
//! before it) and 3.13 (values inline after it), and the dict tables
//! (combined, or split with the class's shared keys).

use super::walk::Walker;

/// Py_TPFLAGS_INLINE_VALUES (3.13) and Py_TPFLAGS_MANAGED_DICT (3.11+).
const INLINE_VALUES: u64 = 1 << 2;
const MANAGED_DICT: u64 = 1 << 4;
/// Bigger dicts are not searched.
const MAX_ENTRIES: u64 = 4096;

impl Walker<'_> {
    /// The `str` value of attribute `name` of the instance `object`.
    pub(super) fn attribute_str(&self, object: u64, name: &str) -> Option<String> {
        self.string_object(self.attribute(object, name)?)
    }

    /// Whether the type of `object` is named `name` (its `tp_name`).
    pub(super) fn is_type_named(&self, object: u64, name: &str) -> bool {
        let layout = self.layout;
        let Some(kind) = layout
            .get("object_type")
            .and_then(|o| self.u64(object.wrapping_add(o)))
        else {
            return false;
        };
        let Some(text) = layout
            .get("type_name")
            .and_then(|o| self.u64(kind.wrapping_add(o)))
        else {
            return false;
        };
        // The name and its NUL: `bool` is not `boolean`.
        self.memory
            .read(text, name.len() + 1)
            .is_some_and(|bytes| bytes[..name.len()] == *name.as_bytes() && bytes[name.len()] == 0)
    }

    /// The value of a `bool` object (True and False are ints whose first
    /// digit is 1 and 0, in every version read).
    pub(super) fn bool_object(&self, object: u64) -> Option<bool> {
        if !self.is_type_named(object, "bool") {
            return None;
        }
        let digit = self.u32(object.wrapping_add(self.layout.get("long_digits")?))?;
        Some(digit != 0)
    }

    /// The object attribute `name` of the instance `object` points to.
    pub(super) fn attribute(&self, object: u64, name: &str) -> Option<u64> {
        let layout = self.layout;
        let kind = self.u64(object.wrapping_add(layout.get("object_type")?))?;
        let flags = self.u64(kind.wrapping_add(layout.get("type_flags")?))?;
        let cached_keys = || self.u64(kind.wrapping_add(layout.get("heaptype_cached_keys")?));
        let value = if layout.version_at_least(3, 13) {
            let inline = if flags & INLINE_VALUES != 0 {
                let basic = self.u64(kind.wrapping_add(layout.get("type_basicsize")?))?;
                let header = object.checked_add(basic)?;
                // PyDictValues: capacity, size, embedded, valid, then values.
                (self.u8(header.wrapping_add(3))? != 0)
                    .then(|| self.split_lookup(cached_keys()?, header.wrapping_add(8), name))
                    .flatten()
            } else {
                None
            };
            inline.or_else(|| self.dict_lookup(self.u64(object.checked_sub(24)?)?, name))
        } else if layout.version_at_least(3, 12) {
            if flags & MANAGED_DICT == 0 {
                return None;
            }
            let tagged = self.u64(object.checked_sub(24)?)?;
            // Values are tagged by pointing one byte before them.
            if tagged & 1 == 1 {
                self.split_lookup(cached_keys()?, tagged.wrapping_add(1), name)
            } else {
                self.dict_lookup(tagged, name)
            }
        } else if layout.version_at_least(3, 11) {
            if flags & MANAGED_DICT == 0 {
                return None;
            }
            let dict = self.u64(object.checked_sub(24)?)?;
            if dict != 0 {
                self.dict_lookup(dict, name)
            } else {
                let values = self.u64(object.checked_sub(32)?)?;
                self.split_lookup(cached_keys()?, values, name)
            }
        } else {
            let offset = self.u64(kind.wrapping_add(layout.get("type_dictoffset")?))? as i64;
            if offset <= 0 {
                return None;
            }
            self.dict_lookup(self.u64(object.checked_add(offset as u64)?)?, name)
        }?;
        Some(value)
    }

    /// The value for the `str` key `name` in the dict object `dict`.
    fn dict_lookup(&self, dict: u64, name: &str) -> Option<u64> {
        if dict == 0 {
            return None;
        }
        let layout = self.layout;
        let keys = self.u64(dict.wrapping_add(layout.get("dict_keys")?))?;
        let values = self.u64(dict.wrapping_add(layout.get("dict_values")?))?;
        if values != 0 {
            // 3.13's PyDictValues has an 8-byte header before the values.
            let start = if layout.version_at_least(3, 13) {
                values.wrapping_add(8)
            } else {
                values
            };
            return self.split_lookup(keys, start, name);
        }
        let (entries, count, size, key_at, value_at) = self.entries(keys)?;
        (0..count).find_map(|i| {
            let entry = entries.wrapping_add(i * size);
            let key = self.u64(entry.wrapping_add(key_at))?;
            (key != 0 && self.string_object(key).as_deref() == Some(name))
                .then(|| self.u64(entry.wrapping_add(value_at)))
                .flatten()
        })
    }

    /// A split table: the shared `keys`, the instance's values array.
    fn split_lookup(&self, keys: u64, values: u64, name: &str) -> Option<u64> {
        let (entries, count, size, key_at, _) = self.entries(keys)?;
        let index = (0..count).find(|i| {
            self.u64(entries.wrapping_add(i * size).wrapping_add(key_at))
                .and_then(|key| self.string_object(key))
                .as_deref()
                == Some(name)
        })?;
        self.u64(values.wrapping_add(index * 8)).filter(|v| *v != 0)
    }

    /// A keys object's entry table: (start, count, entry size, key offset,
    /// value offset).
    fn entries(&self, keys: u64) -> Option<(u64, u64, u64, u64, u64)> {
        let layout = self.layout;
        let indices = keys.wrapping_add(layout.get("dictkeys_indices")?);
        let count = self.u64(keys.wrapping_add(layout.get("dictkeys_nentries")?))?;
        if count > MAX_ENTRIES {
            return None;
        }
        if layout.version_at_least(3, 11) {
            let index_bytes =
                self.u8(keys.wrapping_add(layout.get("dictkeys_log2_index_bytes")?))?;
            if index_bytes > 40 {
                return None;
            }
            let general = self.u8(keys.wrapping_add(layout.get("dictkeys_kind")?))? == 0;
            let start = indices.wrapping_add(1u64 << index_bytes);
            Some(if general {
                (start, count, 24, 8, 16)
            } else {
                (start, count, 16, 0, 8)
            })
        } else {
            let size = self.u64(keys.wrapping_add(layout.get("dictkeys_size")?))?;
            let width = match size {
                0..=0xff => 1,
                0x100..=0xffff => 2,
                0x1_0000..=0xffff_ffff => 4,
                _ => 8,
            };
            Some((
                indices.wrapping_add(size.checked_mul(width)?),
                count,
                24,
                8,
                16,
            ))
        }
    }
}
