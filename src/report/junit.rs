//! JUnit XML, so CI test reporters show one test case per dump: failed when
//! a crash or hang was diagnosed, errored when the dump could not be read.
//! Valid against the Apache Ant JUnit schema (tests/data/junit/JUnit.xsd).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::text;
use crate::model::{Report, Status};

pub fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
    let failures = reports.iter().filter(|r| failed(r)).count();
    let errors = reports.iter().filter(|r| r.status == Status::Error).count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\"",
        reports.len()
    );
    let _ = writeln!(s, "<testsuites>");
    let _ = writeln!(
        s,
        "  <testsuite name=\"dumptriage\" package=\"dumptriage\" id=\"0\" {counts} time=\"0\" \
         timestamp=\"{}\" hostname=\"localhost\">",
        timestamp()
    );
    s.push_str("    <properties/>\n");
    for report in reports {
        let name = attr(&report.path);
        let _ = write!(
            s,
            "    <testcase classname=\"dumptriage\" name=\"{name}\" time=\"0\""
        );
        if report.status == Status::Error {
            let error = attr(report.error.as_deref().unwrap_or("unknown error"));
            let _ = writeln!(
                s,
                ">\n      <error message=\"{error}\" type=\"unreadable dump\"/>\n    </testcase>"
            );
        } else if failed(report) {
            let (message, kind) = match report.diagnoses.first() {
                Some(d) => (format!("{}: {}", d.signature, d.title), d.kind.as_str()),
                None => ("crash matching no known signature".to_string(), "crash"),
            };
            let body = text::render_report(report, text::Paint { enabled: false });
            let _ = writeln!(
                s,
                ">\n      <failure message=\"{}\" type=\"{kind}\">{}</failure>\n    </testcase>",
                attr(&message),
                content(&body)
            );
        } else {
            s.push_str("/>\n");
        }
    }
    s.push_str("    <system-out></system-out>\n    <system-err></system-err>\n  </testsuite>\n</testsuites>\n");
    out.write_all(s.as_bytes())
}

/// A dump fails its test case when a crash or hang was diagnosed.
fn failed(report: &Report) -> bool {
    report.status == Status::Ok && (report.crashed() || !report.diagnoses.is_empty())
}

/// The run's time, as the schema's ISO 8601 pattern wants it (UTC, no zone).
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (the usual days-to-civil conversion).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Characters XML 1.0 cannot carry at all are dropped (a hostile dump may
/// contain them); markup characters are escaped.
fn escape(text: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\n' | '\t' if quotes => out.push_str(&format!("&#{};", c as u32)),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

fn attr(text: &str) -> String {
    escape(&text::clean(text), true)
}

fn content(text: &str) -> String {
    escape(text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_the_document_well_formed() {
        assert_eq!(attr("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
        assert_eq!(content("x\u{1}y\u{fffe}\nz"), "xy\nz");
    }

    #[test]
    fn timestamps_have_the_schema_shape() {
        let t = timestamp();
        assert_eq!(t.len(), 19, "{t}");
        assert_eq!(&t[4..5], "-");
        assert_eq!(&t[10..11], "T");
    }
}
