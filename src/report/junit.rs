//! JUnit XML, so CI test reporters show one test case per dump: failed when
//! a crash or hang was diagnosed, errored when the dump could not be read.
//! Valid against the Apache Ant JUnit schema (JUnit.xsd in ../shared/data/junit/ beside the checkout).
//!
//! Written with quick-xml's writer, element by element. Two things XML
//! escaping alone does not cover are done here: characters XML 1.0 cannot
//! carry at all are dropped (a hostile dump may hold them), and line breaks
//! and tabs in attribute values are written as character references, which
//! a parser would otherwise turn into spaces.

use std::borrow::Cow;
use std::io::{self, Write};

use quick_xml::escape::partial_escape;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::name::QName;
use quick_xml::Writer;

use super::text;
use crate::model::{Report, Status};

pub(super) fn render(reports: &[Report], out: &mut dyn Write) -> io::Result<()> {
    let failures = reports.iter().filter(|r| failed(r) && !known(r)).count();
    let skipped = reports.iter().filter(|r| failed(r) && known(r)).count();
    let errors = reports.iter().filter(|r| r.status == Status::Error).count();
    let mut xml = Writer::new(out);
    xml.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    newline(&mut xml, 0)?;
    xml.write_event(Event::Start(BytesStart::new("testsuites")))?;
    newline(&mut xml, 2)?;
    let tests = reports.len().to_string();
    let (failures, errors, skipped) = (
        failures.to_string(),
        errors.to_string(),
        skipped.to_string(),
    );
    let timestamp = timestamp();
    xml.write_event(Event::Start(element(
        "testsuite",
        &[
            ("name", "dumptriage"),
            ("package", "dumptriage"),
            ("id", "0"),
            ("tests", &tests),
            ("failures", &failures),
            ("errors", &errors),
            ("skipped", &skipped),
            ("time", "0"),
            ("timestamp", &timestamp),
            ("hostname", "localhost"),
        ],
    )))?;
    newline(&mut xml, 4)?;
    xml.write_event(Event::Empty(BytesStart::new("properties")))?;
    for report in reports {
        write_case(&mut xml, report)?;
    }
    for stream in ["system-out", "system-err"] {
        newline(&mut xml, 4)?;
        xml.write_event(Event::Start(BytesStart::new(stream)))?;
        xml.write_event(Event::End(BytesEnd::new(stream)))?;
    }
    newline(&mut xml, 2)?;
    xml.write_event(Event::End(BytesEnd::new("testsuite")))?;
    newline(&mut xml, 0)?;
    xml.write_event(Event::End(BytesEnd::new("testsuites")))?;
    newline(&mut xml, 0)?;
    Ok(())
}
/// One `<testcase>`: empty when nothing failed, else with its error,
/// skipped or failure element.
fn write_case<W: Write>(xml: &mut Writer<W>, report: &Report) -> io::Result<()> {
    newline(xml, 4)?;
    let case = element(
        "testcase",
        &[
            ("classname", "dumptriage"),
            ("name", &report.path),
            ("time", "0"),
        ],
    );
    let Some((detail, body)) = outcome(report) else {
        return xml.write_event(Event::Empty(case));
    };
    xml.write_event(Event::Start(case))?;
    newline(xml, 6)?;
    match body {
        Some(body) => {
            let name = detail.name().as_ref().to_vec();
            xml.write_event(Event::Start(detail))?;
            let content = partial_escape(xml_chars(&body).into_owned()).into_owned();
            xml.write_event(Event::Text(BytesText::from_escaped(content)))?;
            xml.write_event(Event::End(BytesEnd::new(String::from_utf8_lossy(&name))))?;
        }
        None => xml.write_event(Event::Empty(detail))?,
    }
    newline(xml, 4)?;
    xml.write_event(Event::End(BytesEnd::new("testcase")))
}

/// The element a test case holds (`error`, `skipped` or `failure`) and the
/// failure's text body, or nothing for a dump in which nothing failed.
fn outcome(report: &Report) -> Option<(BytesStart<'static>, Option<String>)> {
    if report.status == Status::Error {
        let error = report.error.as_deref().unwrap_or("unknown error");
        Some((
            element("error", &[("message", error), ("type", "unreadable dump")]),
            None,
        ))
    } else if failed(report) && known(report) {
        Some((
            element("skipped", &[("message", &known_message(report))]),
            None,
        ))
    } else if failed(report) {
        let (message, kind) = failure_message(report);
        let body = text::render_report(report, text::Paint { enabled: false });
        Some((
            element("failure", &[("message", &message), ("type", kind)]),
            Some(body),
        ))
    } else {
        None
    }
}

/// A failure the baseline knows: reported, with its issue, as a skipped
/// case, so that it does not fail the suite.
fn known_message(report: &Report) -> String {
    let b = report.baseline.as_ref();
    let mut message = match report.diagnoses.first() {
        Some(d) => format!("known failure {}: {}", d.name(), d.title),
        None => "known failure: crash matching no known signature".to_string(),
    };
    if let Some(issue) = b.and_then(|b| b.issue.as_deref()) {
        message.push_str(&format!(", tracked at {issue}"));
    }
    if let Some(note) = b.and_then(|b| b.note.as_deref()) {
        message.push_str(&format!(": {note}"));
    }
    message
}

/// A failure's message and type: the diagnosis and its kind, or a crash no
/// signature explains.
fn failure_message(report: &Report) -> (String, &'static str) {
    let (message, kind) = match report.diagnoses.first() {
        Some(d) => {
            let mut message = format!("{}: {}", d.name(), d.title);
            if let Some(why) = d.not_established() {
                message.push_str(&format!(" ({why})"));
            }
            (message, d.kind.as_str())
        }
        None => ("crash matching no known signature".to_string(), "crash"),
    };
    let message = match &report.baseline {
        Some(_) => format!("{message} (new: its crash signature is not in the baseline)"),
        None => message,
    };
    (message, kind)
}

/// A line break and the next line's indentation.
fn newline<W: Write>(xml: &mut Writer<W>, indent: usize) -> io::Result<()> {
    let text = format!("\n{}", " ".repeat(indent));
    xml.write_event(Event::Text(BytesText::from_escaped(text)))
}

/// An element start tag with its attributes, in the order given.
fn element<'a>(name: &'a str, attributes: &[(&'a str, &str)]) -> BytesStart<'a> {
    let mut start = BytesStart::new(name);
    for &(key, value) in attributes {
        start.push_attribute(Attribute {
            key: QName(key.as_bytes()),
            value: Cow::Owned(attribute_value(value).into_bytes()),
        });
    }
    start
}

/// An attribute value, escaped: one printable line of the text.
fn attribute_value(value: &str) -> String {
    partial_escape(xml_chars(&crate::printable::clean(value)).into_owned())
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
}

/// The text without the characters XML 1.0 cannot carry (most control
/// characters, U+FFFE, U+FFFF).
fn xml_chars(text: &str) -> Cow<'_, str> {
    let invalid = |c: char| {
        (c < '\u{20}' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{fffe}' || c == '\u{ffff}'
    };
    if text.chars().any(invalid) {
        Cow::Owned(text.chars().filter(|&c| !invalid(c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// A failure the baseline has.
fn known(report: &Report) -> bool {
    report.baseline.as_ref().is_some_and(|b| b.known)
}

/// A dump fails its test case when a crash or hang was diagnosed.
fn failed(report: &Report) -> bool {
    report.status == Status::Ok && (report.crashed() || !report.diagnoses.is_empty())
}

/// The run's time, as the schema's ISO 8601 pattern wants it (UTC, no zone).
fn timestamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_the_document_well_formed() {
        assert_eq!(
            attribute_value("a<b>&\"c\""),
            "a&lt;b&gt;&amp;&quot;c&quot;"
        );
        assert_eq!(xml_chars("x\u{1}y\u{fffe}\nz"), "xy\nz");
    }

    #[test]
    fn timestamps_have_the_schema_shape() {
        let t = timestamp();
        assert_eq!(t.len(), 19, "{t}");
        assert_eq!(&t[4..5], "-");
        assert_eq!(&t[10..11], "T");
    }
}
