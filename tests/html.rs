//! `--format html` (issue 40) through the real binary and a real headless
//! browser (Debian's chromium, installed by scripts/ci-setup-linux.sh):
//! the page of every sample dump renders, its script runs, it logs no
//! console error (a request the page's policy forbids would be one), it
//! loads nothing from anywhere, and a page of 250 dumps does the same.
//! Hostile names stay text.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn has_chromium() -> bool {
    Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What chromium made of a page: its DOM after the scripts ran (or the
/// screenshot, when `screenshot` is given) and the console messages it
/// logged.
struct Rendered {
    dom: String,
    console: Vec<String>,
}

fn chromium(page: &Path, screenshot: Option<&Path>) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let mut command = Command::new("chromium");
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    match screenshot {
        Some(png) => command.arg(format!("--screenshot={}", png.display())),
        None => command.arg("--dump-dom"),
    };
    let mut child = command
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A browser that never returns must not hang the suite.
    let id = child.id();
    let (done, waited) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if waited.recv_timeout(Duration::from_secs(180)).is_err() {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
        }
    });
    let mut out = String::new();
    let mut err = String::new();
    use std::io::Read;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = stderr.read_to_string(&mut err);
        err
    });
    let _ = stdout.read_to_string(&mut out);
    err.push_str(&reader.join().unwrap());
    let status = child.wait().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    assert!(status.success(), "chromium failed: {status}\n{err}");
    Rendered {
        dom: out,
        console: err
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-dumps")
}

/// The page refers to nothing outside itself: no script, style, font or
/// image source, every link an anchor in the page or an http(s) link a
/// person may follow.
fn self_contained(html: &str) {
    for needle in [
        "<script src",
        "<link rel=\"stylesheet",
        "@import",
        "@font-face",
        "<img",
        "<iframe",
    ] {
        assert!(!html.contains(needle), "{needle}");
    }
    for (at, _) in html.match_indices("url(") {
        assert!(
            html[at..].starts_with("url(#arrow"),
            "{}",
            &html[at..at + 40]
        );
    }
    for (at, _) in html.match_indices("href=\"") {
        let target = &html[at + 6..];
        assert!(
            target.starts_with('#')
                || target.starts_with("data:,\"")
                || target.starts_with("https://")
                || target.starts_with("http://"),
            "{}",
            &target[..40.min(target.len())]
        );
    }
    // A `src=` inside a tag (text that merely says `src=` is escaped and
    // outside any tag).
    for (at, _) in html.match_indices(" src=") {
        let open = html[..at].rfind('<');
        let close = html[..at].rfind('>');
        assert!(open <= close, "a source: {}", &html[at..at + 40]);
    }
}

#[test]
fn the_samples_page_renders_without_console_errors() {
    if !has_chromium() {
        common::skip::skip(
            "html::chromium",
            "chromium is not installed (scripts/ci-setup-linux.sh installs Debian's chromium)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.toml");
    std::fs::write(
        &baseline,
        "crash_signature_version = 2\n[[failure]]\nsignature = \"[mutex wait] | flush_all\"\n\
         issue = \"https://github.com/example/app/issues/11\"\nnote = \"lock order at exit\"\n",
    )
    .unwrap();
    // A dump named like markup, and an unreadable one.
    let hostile = dir
        .path()
        .join("<img src=x onerror=alert(1)><script>alert(2)<\\script>.dmp");
    std::fs::copy(
        samples().join("linux/abort-during-exit-linux.dmp"),
        &hostile,
    )
    .unwrap();
    let junk = dir.path().join("junk.dmp");
    std::fs::write(&junk, b"MDMP").unwrap();
    let page = dir.path().join("report.html");
    let out = common::bin()
        .args(["analyze", "--format", "html", "-o"])
        .arg(&page)
        .arg("--baseline")
        .arg(&baseline)
        .arg(samples())
        .arg(&hostile)
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the junk input");
    let html = std::fs::read_to_string(&page).unwrap();
    self_contained(&html);
    let json = common::bin()
        .args(["analyze", "--format", "json"])
        .arg(samples())
        .arg(&hostile)
        .arg(&junk)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap();

    let rendered = chromium(&page, None);
    assert!(rendered.console.is_empty(), "{:#?}", rendered.console);
    let dom = &rendered.dom;
    // The script ran: it counted the dumps.
    let n = reports.len();
    assert!(
        dom.contains(&format!("<span id=\"shown\">{n} of {n} shown</span>")),
        "the script did not run"
    );
    assert_eq!(dom.matches("<article class=\"dump").count(), n);
    // Groups with counts; every thread collapsible; a wait graph for each
    // dump whose blamed thread waits for another.
    let groups = doc["summary"]["groups"].as_array().unwrap().len();
    assert_eq!(
        dom.split("<tbody>").nth(1).unwrap().matches("<tr").count(),
        groups
    );
    let threads: usize = reports
        .iter()
        .map(|r| r["threads"].as_array().unwrap().len())
        .sum();
    assert_eq!(dom.matches("<details class=\"thread\"").count(), threads);
    let chains = reports
        .iter()
        .filter(|r| {
            let about = r["diagnoses"][0]["thread_id"]
                .as_u64()
                .or_else(|| r["exit_phase"]["blamed_thread"].as_u64());
            let waits_on_another =
                r["threads"].as_array().unwrap().iter().any(|t| {
                    Some(t["id"].as_u64().unwrap()) == about && t["wait"]["holder"].is_u64()
                });
            waits_on_another || !r["exit_phase"]["deadlock"].is_null()
        })
        .count();
    assert!(chains >= 2, "{chains}");
    assert_eq!(dom.matches("<svg class=\"graph\"").count(), chains);
    // The deadlock dump: both threads in the graph, the cycle closed, the
    // baseline's issue linked.
    let deadlock = dom
        .split("<article")
        .find(|a| a.contains("lock-order-deadlock-at-exit-linux.dmp"))
        .unwrap();
    assert!(deadlock.contains("Wait chain (deadlock)"));
    assert!(deadlock.contains("href=\"https://github.com/example/app/issues/11\""));
    assert!(deadlock.contains("<span class=\"tag blamed\">blamed</span>"));
    // The hostile name is text, nothing else.
    assert!(!dom.contains("<img"));
    assert_eq!(dom.matches("<script").count(), 1);
    assert!(dom.contains("&lt;img src=x onerror=alert(1)&gt;"));

    let png = dir.path().join("report.png");
    let shot = chromium(&page, Some(&png));
    assert!(shot.console.is_empty(), "{:#?}", shot.console);
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(bytes.len() > 20_000, "a blank page: {} bytes", bytes.len());
}

/// 250 dumps (the samples' reports many times over, merged as shards): one
/// page that opens with every dump collapsed, with no console error.
#[test]
fn a_page_of_250_dumps() {
    if !has_chromium() {
        common::skip::skip(
            "html::chromium_250",
            "chromium is not installed (scripts/ci-setup-linux.sh installs Debian's chromium)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = common::bin()
        .args(["analyze", "--format", "json"])
        .arg(samples())
        .output()
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = doc["reports"].as_array().unwrap().clone();
    let many: Vec<serde_json::Value> = (0..250)
        .map(|i| {
            let mut r = reports[i % reports.len()].clone();
            let name = Path::new(r["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            r["path"] = format!("dumps/{i:03}-{name}").into();
            r
        })
        .collect();
    doc["reports"] = many.into();
    let shard = dir.path().join("shard.json");
    std::fs::write(&shard, serde_json::to_vec(&doc).unwrap()).unwrap();
    let page = dir.path().join("many.html");
    let out = common::bin()
        .args(["merge", "--format", "html", "-o"])
        .arg(&page)
        .arg(&shard)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let html = std::fs::read_to_string(&page).unwrap();
    self_contained(&html);
    // Collapsed dumps: only the blamed threads inside them are open.
    assert_eq!(html.matches("<details>").count(), 250);
    assert!(
        html.len() < 20 << 20,
        "{} MB for 250 dumps",
        html.len() >> 20
    );
    let rendered = chromium(&page, None);
    assert!(rendered.console.is_empty(), "{:#?}", rendered.console);
    assert!(rendered
        .dom
        .contains("<span id=\"shown\">250 of 250 shown</span>"));
}
