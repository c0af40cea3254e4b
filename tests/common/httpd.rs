//! A symbol server on 127.0.0.1 for the tests: serves the files of a folder
//! by URL path and counts the requests it gets. It can also misbehave the
//! ways real servers do: never answer, stop in the middle of a file, send
//! a file slowly, or send one without saying how long it is.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server answers.
#[derive(Debug, Clone, Copy)]
pub enum Behaviour {
    /// Files with their length, 404 for the rest.
    Serve,
    /// Accepts connections and never answers.
    Silent,
    /// Sends the headers (with the full length) and the first bytes of a
    /// file, then nothing, with the connection held open.
    StallAfter(usize),
    /// Sends a file in chunks of `chunk` bytes with a pause between them.
    Trickle { chunk: usize, pause: Duration },
    /// Sends files without a Content-Length (the end of the connection ends
    /// the file).
    NoLength,
}

pub struct Httpd {
    pub url: String,
    requests: Arc<Mutex<Vec<String>>>,
    hits: Arc<AtomicUsize>,
}

impl Httpd {
    /// Serves `root`. With `silent`, accepts connections and never answers
    /// (a hung server).
    pub fn start(root: PathBuf, silent: bool) -> Httpd {
        let behaviour = if silent {
            Behaviour::Silent
        } else {
            Behaviour::Serve
        };
        Httpd::with(root, behaviour)
    }

    /// Serves `root` the way `behaviour` says.
    pub fn with(root: PathBuf, behaviour: Behaviour) -> Httpd {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let hits = Arc::new(AtomicUsize::new(0));
        let (log, count) = (requests.clone(), hits.clone());
        std::thread::spawn(move || {
            let held = Arc::new(Mutex::new(Vec::new()));
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if let Behaviour::Silent = behaviour {
                    // Connections count as requests: none is read.
                    count.fetch_add(1, Ordering::SeqCst);
                    held.lock().unwrap().push(stream);
                    continue;
                }
                let (root, log, count, held) =
                    (root.clone(), log.clone(), count.clone(), held.clone());
                std::thread::spawn(move || {
                    answer(stream, &root, behaviour, &log, &count, &held);
                });
            }
        });
        Httpd {
            url,
            requests,
            hits,
        }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn answer(
    mut stream: TcpStream,
    root: &std::path::Path,
    behaviour: Behaviour,
    log: &Mutex<Vec<String>>,
    count: &AtomicUsize,
    held: &Mutex<Vec<TcpStream>>,
) {
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&request);
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
    let path = path.split('?').next().unwrap_or("").to_string();
    count.fetch_add(1, Ordering::SeqCst);
    log.lock().unwrap().push(path.clone());
    let file = root.join(path.trim_start_matches('/'));
    let body = match std::fs::read(&file) {
        Ok(body) if file.is_file() => body,
        _ => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
    };
    let head = match behaviour {
        Behaviour::NoLength => "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_string(),
        _ => format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ),
    };
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    match behaviour {
        Behaviour::StallAfter(n) => {
            let _ = stream.write_all(&body[..n.min(body.len())]);
            let _ = stream.flush();
            held.lock().unwrap().push(stream);
        }
        Behaviour::Trickle { chunk, pause } => {
            for part in body.chunks(chunk.max(1)) {
                if stream.write_all(part).is_err() {
                    return;
                }
                let _ = stream.flush();
                std::thread::sleep(pause);
            }
        }
        _ => {
            let _ = stream.write_all(&body);
        }
    }
}
