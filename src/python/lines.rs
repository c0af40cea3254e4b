//! Line numbers from a code object's line table: the location table of
//! CPython 3.11 and later (PEP 657; Objects/locations.md in CPython), and
//! the PEP 626 table of 3.10. Both map a bytecode offset to a line by
//! walking ranges from the function's first line.

/// The line of the instruction at byte offset `addr` (a 3.11+ location
/// table); `None` for an instruction with no line, or a table that ends
/// before it or is malformed.
pub(crate) fn line_311(table: &[u8], first_line: i64, addr: u64) -> Option<u32> {
    let mut line = first_line;
    let mut start = 0u64;
    let mut at = 0usize;
    while at < table.len() {
        let head = table[at];
        if head & 0x80 == 0 {
            return None;
        }
        at += 1;
        let code = (head >> 3) & 15;
        let end = start.saturating_add((u64::from(head & 7) + 1) * 2);
        let this = match code {
            15 => None,
            14 => {
                line = line.saturating_add(signed_varint(table, &mut at)?);
                for _ in 0..3 {
                    varint(table, &mut at)?;
                }
                Some(line)
            }
            13 => {
                line = line.saturating_add(signed_varint(table, &mut at)?);
                Some(line)
            }
            10..=12 => {
                line = line.saturating_add(i64::from(code) - 10);
                at += 2;
                Some(line)
            }
            _ => {
                at += 1;
                Some(line)
            }
        };
        if addr < end {
            return this.and_then(|l| u32::try_from(l).ok());
        }
        start = end;
    }
    None
}

fn varint(table: &[u8], at: &mut usize) -> Option<u64> {
    let mut byte = *table.get(*at)?;
    *at += 1;
    let mut value = u64::from(byte & 63);
    let mut shift = 0;
    while byte & 64 != 0 {
        byte = *table.get(*at)?;
        *at += 1;
        shift += 6;
        if shift > 60 {
            return None;
        }
        value |= u64::from(byte & 63) << shift;
    }
    Some(value)
}

fn signed_varint(table: &[u8], at: &mut usize) -> Option<i64> {
    let value = varint(table, at)?;
    let magnitude = (value >> 1) as i64;
    Some(if value & 1 != 0 {
        -magnitude
    } else {
        magnitude
    })
}

/// 3.10's table: (bytecode-offset delta, signed line delta) byte pairs; a
/// line delta of -128 is a range with no line.
pub(crate) fn line_310(table: &[u8], first_line: i64, addr: u64) -> Option<u32> {
    let mut line = first_line;
    let mut start = 0u64;
    for pair in table.chunks_exact(2) {
        let delta = pair[1] as i8;
        let end = start.saturating_add(u64::from(pair[0]));
        let this = if delta == -128 {
            None
        } else {
            line = line.saturating_add(i64::from(delta));
            Some(line)
        };
        if addr < end {
            return this.and_then(|l| u32::try_from(l).ok());
        }
        start = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_table_forms() {
        // RESUME on line 10 (short form, 1 unit), then two units one line
        // on (one-line form, code 11), then a long form three lines back,
        // then a range with no location.
        let table = [
            0x80,
            0x00, // short, 1 unit
            0x80 | (11 << 3) | 1,
            4,
            9, // one-line +1, 2 units
            0x80 | (14 << 3),
            0x07,
            0x00,
            0x01,
            0x02,             // long: -3
            0x80 | (15 << 3), // none, 1 unit
        ];
        assert_eq!(line_311(&table, 10, 0), Some(10));
        assert_eq!(line_311(&table, 10, 2), Some(11));
        assert_eq!(line_311(&table, 10, 4), Some(11));
        assert_eq!(line_311(&table, 10, 6), Some(8));
        assert_eq!(line_311(&table, 10, 8), None);
        assert_eq!(line_311(&table, 10, 100), None, "past the table");
        assert_eq!(
            line_311(&[0x80 | (13 << 3), 0x40], 1, 0),
            None,
            "cut varint"
        );
    }

    #[test]
    fn pep_626_table() {
        let table = [6u8, 0, 4, 2, 2, 0x80, 8, 0xff];
        assert_eq!(line_310(&table, 5, 0), Some(5));
        assert_eq!(line_310(&table, 5, 6), Some(7));
        assert_eq!(line_310(&table, 5, 10), None);
        assert_eq!(line_310(&table, 5, 12), Some(6));
    }
}
