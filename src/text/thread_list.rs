//! A process viewer's thread list (the Threads tab of Process Explorer or
//! Process Hacker: `TID`, `CPU`, `Cycles Delta`, `Start Address` columns)
//! pasted into a log. Each row names one thread and the function it
//! started in, not where it is now: no stack, no crash. Its rows would
//! read as a Visual Studio call stack (`app.exe!wmainCRTStartup` after a
//! tab), one invented thread whose "frames" are other threads' entry
//! points; they are blanked before any format reads the log.

/// Blanks the header and rows of every thread list in `lines` and says how
/// many there were.
pub(super) fn blank(lines: &mut [Option<String>]) -> usize {
    let mut tables = 0;
    let mut in_table = false;
    for line in lines.iter_mut() {
        let Some(text) = line.as_deref() else {
            continue;
        };
        if is_header(text) {
            tables += 1;
            in_table = true;
        } else if !(in_table && is_row(text)) {
            in_table = false;
            continue;
        }
        *line = Some(String::new());
    }
    tables
}

/// `TID  CPU  Cycles Delta  ...  Start Address`: a thread id column first,
/// a start address column after it.
fn is_header(line: &str) -> bool {
    let line = line.trim();
    let Some(rest) = line
        .get(..3)
        .filter(|tid| tid.eq_ignore_ascii_case("tid"))
        .and_then(|_| line.get(3..))
    else {
        return false;
    };
    rest.starts_with([' ', '\t']) && rest.to_ascii_lowercase().contains("start address")
}

/// A row: the thread id (decimal) first, something after it.
fn is_row(line: &str) -> bool {
    let mut cells = line.split_whitespace();
    cells
        .next()
        .is_some_and(|tid| tid.bytes().all(|b| b.is_ascii_digit()))
        && cells.next().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Option<String>> {
        text.lines().map(|l| Some(l.to_string())).collect()
    }

    #[test]
    fn a_thread_list_is_blanked_and_what_follows_is_kept() {
        let mut log = lines(
            "TID\tCPU\tCycles Delta\tStart Address\n\
             7312\t\t\tapp.exe!wmainCRTStartup\n\
             5524\t< 0.01\t1,024,512\tucrtbase.dll!thread_start\n\
             the call stack:\n\
             app.exe!Worker::Run() Line 12\tC++",
        );
        assert_eq!(blank(&mut log), 1);
        let kept: Vec<&str> = log.iter().flatten().map(String::as_str).collect();
        assert_eq!(
            kept,
            [
                "",
                "",
                "",
                "the call stack:",
                "app.exe!Worker::Run() Line 12\tC++"
            ]
        );
    }

    #[test]
    fn lines_that_only_resemble_a_thread_list_stay() {
        // A header without a start address column, and rows without one.
        let text = "TID     Name      State\n\
                    7312    main      waiting\n\
                    7312 app.exe!main";
        let mut log = lines(text);
        assert_eq!(blank(&mut log), 0);
        assert_eq!(log, lines(text));
    }
}
