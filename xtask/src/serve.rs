//! A small static file server (127.0.0.1) and a logging proxy that refuses everything.
//! Both log every request line to a file, so tests can look for their probe markers.

use crate::root;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;

/// Where files are served from: (URL prefix, folder), tried in order.
pub type Mounts = Vec<(String, PathBuf)>;

#[derive(Clone)]
pub struct Log(Arc<Mutex<std::fs::File>>);

impl Log {
    pub fn create(path: &Path) -> Result<Log, String> {
        crate::fsx::create_parent(path)?;
        let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Log(Arc::new(Mutex::new(f))))
    }
    fn line(&self, s: &str) {
        if let Ok(mut f) = self.0.lock() {
            let _ = writeln!(f, "{s}");
        }
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "zip" => "application/zip",
        "css" => "text/css; charset=utf-8",
        "ts" => "text/plain; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}

fn safe_join(base: &Path, rel: &str) -> Option<PathBuf> {
    let rel = Path::new(rel.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(base.join(rel))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn handle_static(mut stream: TcpStream, mounts: &Mounts, log: &Log, coi: bool) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut line = String::new();
    let mut content_length = 0usize;
    let mut user_agent = String::new();
    while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
            if k.trim().eq_ignore_ascii_case("user-agent") {
                user_agent = v.trim().to_owned();
            }
        }
        line.clear();
    }
    log.line(first.trim_end());
    // `?logua=1`: the request's User-Agent is logged too (what a sandbox's request sent).
    if first.contains("logua=1") {
        log.line(&format!("user-agent of {}: {user_agent}", first.trim_end()));
    }
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let path_part = target.split(['?', '#']).next().unwrap_or("/");
    let mut path = percent_decode(path_part);
    // `/stallable/<key>/<path>` serves `/<path>`, after 30 s once `/api/stall?key=<key>` was
    // asked: lets the tests hold up a den page's second loading (its reopening).
    if let Some((key, rest)) = path
        .strip_prefix("/stallable/")
        .and_then(|r| r.split_once('/'))
    {
        let stalled = stalled_key(key, false);
        path = format!("/{rest}");
        if stalled {
            thread::sleep(std::time::Duration::from_secs(30));
        }
    }
    let mut found: Option<PathBuf> = None;
    for (prefix, dir) in mounts {
        if let Some(rest) = path.strip_prefix(prefix.as_str()) {
            if let Some(mut p) = safe_join(dir, rest) {
                if p.is_dir() {
                    p = p.join("index.html");
                }
                if p.is_file() {
                    found = Some(p);
                    break;
                }
            }
        }
    }
    let mut headers = String::from("Cache-Control: no-store\r\nConnection: close\r\n");
    // `?cors=1`: the answer allows every origin to read it (a den page on another origin, whose
    // host checks it does not redirect).
    let query = target.split_once('?').map_or("", |(_, q)| q);
    if query.split('&').any(|p| p == "cors=1") {
        headers.push_str("Access-Control-Allow-Origin: *\r\n");
    }
    if coi {
        headers.push_str("Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\nCross-Origin-Resource-Policy: cross-origin\r\n");
    }
    // `/redirect-to/<path>` answers 302 to `/<path>`: lets the tests check that a den page
    // behind a redirect is refused.
    if let Some(rest) = path.strip_prefix("/redirect-to/") {
        let _ = stream.write_all(
            format!(
                "HTTP/1.1 302 Found\r\nLocation: /{rest}\r\nContent-Length: 0\r\n{headers}\r\n"
            )
            .as_bytes(),
        );
        return;
    }
    if let Some(rest) = path.strip_prefix("/api/") {
        let mut body = vec![0u8; content_length.min(4 << 20)];
        if reader.read_exact(&mut body).is_err() {
            body.clear();
        }
        api(&mut stream, method, rest, query, &body, &headers);
        return;
    }
    let resp = match (method, found) {
        ("GET" | "HEAD", Some(p)) => match std::fs::read(&p) {
            Ok(body) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n{headers}\r\n",
                    content_type(&p),
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                if method == "GET" {
                    let _ = stream.write_all(&body);
                }
                return;
            }
            Err(_) => "HTTP/1.1 500 Internal Server Error\r\n".to_owned(),
        },
        ("GET" | "HEAD", None) => "HTTP/1.1 404 Not Found\r\n".to_owned(),
        _ => "HTTP/1.1 405 Method Not Allowed\r\n".to_owned(),
    };
    let _ = stream.write_all(format!("{resp}Content-Length: 0\r\n{headers}\r\n").as_bytes());
}

/// The value of `key` in a query string (percent-decoded).
fn query_param(query: &str, key: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| percent_decode(v))
}

/// Endpoints under `/api/` for the network broker's tests (`foxden.fetch`, made by the host page):
/// - `json`: `{"ok": true, "method", "path"}` as JSON;
/// - `echo` (any method): the request body back, as `application/octet-stream`;
/// - `big?n=N`: N bytes with a `Content-Length`; `stream?n=N`: N bytes, chunked, no length
///   (N at most 128 MiB), with `delay=T` T ms before each 16 KiB piece (at most 1 s), and with
///   `g=G` the bytes written counted under group G (`sent?g=G` answers `{"sent": bytes}`);
/// - `stall?key=K`: from now on `/stallable/K/<path>` answers only after 30 s;
/// - `redirect?to=URL`: 302 to URL;
/// - `slow?ms=T`: `{"ok": true}` after T ms (at most 30 s).
fn api(stream: &mut TcpStream, method: &str, rest: &str, query: &str, body: &[u8], headers: &str) {
    let name = rest.split('/').next().unwrap_or("");
    let n = query_param(query, "n")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(128 << 20);
    let send = |stream: &mut TcpStream, status: &str, ctype: &str, extra: &str, data: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}{headers}\r\n",
            data.len()
        );
        let _ = stream.write_all(head.as_bytes());
        if method != "HEAD" {
            let _ = stream.write_all(data);
        }
    };
    match name {
        "json" => {
            let text = format!(
                "{{\"ok\": true, \"method\": {method:?}, \"path\": {:?}}}",
                format!("/api/{rest}")
            );
            send(
                stream,
                "200 OK",
                "application/json",
                "X-Foxden-Test: yes\r\n",
                text.as_bytes(),
            );
        }
        "echo" => send(stream, "200 OK", "application/octet-stream", "", body),
        "big" => send(stream, "200 OK", "text/plain", "", &vec![b'x'; n]),
        "stall" => {
            stalled_key(&query_param(query, "key").unwrap_or_default(), true);
            send(stream, "200 OK", "application/json", "", b"{\"ok\": true}");
        }
        "sent" => {
            let group = query_param(query, "g").unwrap_or_default();
            let text = format!("{{\"sent\": {}}}", sent_count(&group, 0));
            send(stream, "200 OK", "application/json", "", text.as_bytes());
        }
        "stream" => {
            let group = query_param(query, "g");
            let delay = query_param(query, "delay")
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
                .min(1000);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n{headers}\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![b'y'; 16 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(chunk.len());
                if delay > 0 {
                    thread::sleep(std::time::Duration::from_millis(delay));
                }
                if stream
                    .write_all(format!("{k:x}\r\n").as_bytes())
                    .and_then(|_| stream.write_all(&chunk[..k]))
                    .and_then(|_| stream.write_all(b"\r\n"))
                    .is_err()
                {
                    return; // the client stopped reading (cut at its cap)
                }
                if let Some(g) = &group {
                    sent_count(g, k);
                }
                left -= k;
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
        "slow" => {
            // How many `slow` requests of one group (`g=`) are being answered at once (the
            // most seen while this one waited is in the answer): the broker's concurrency
            // limit is checked by it. Requests of other tests, still sleeping, do not count.
            static IN_FLIGHT: Tally = Mutex::new(None);
            let group = query_param(query, "g").unwrap_or_default();
            let count = |delta: isize| tally(&IN_FLIGHT, &group, delta);
            let ms = query_param(query, "ms")
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
                .min(30_000);
            let mut most = count(1);
            let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
            while std::time::Instant::now() < until {
                thread::sleep(std::time::Duration::from_millis(5));
                most = most.max(count(0));
            }
            count(-1);
            let body = format!("{{\"ok\": true, \"concurrent\": {most}}}");
            send(stream, "200 OK", "application/json", "", body.as_bytes());
        }
        "redirect" => {
            let to = query_param(query, "to").unwrap_or_else(|| "/".into());
            let extra = format!("Location: {to}\r\n");
            send(stream, "302 Found", "text/plain", &extra, b"");
        }
        _ => send(
            stream,
            "404 Not Found",
            "text/plain",
            "",
            b"no such endpoint",
        ),
    }
}

/// Whether `/stallable/<key>/` paths are held up (after holding them up, with `stall`).
fn stalled_key(key: &str, stall: bool) -> bool {
    static KEYS: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut keys = KEYS.lock().unwrap_or_else(|e| e.into_inner());
    if stall {
        keys.push(key.to_owned());
    }
    keys.iter().any(|k| k == key)
}

/// Adds `bytes` to what `stream` wrote for `group`; returns the new count.
fn sent_count(group: &str, bytes: usize) -> usize {
    static SENT: Tally = Mutex::new(None);
    tally(&SENT, group, bytes as isize)
}

/// A count per group of the test server's requests.
type Tally = Mutex<Option<std::collections::HashMap<String, usize>>>;

/// Adds `delta` to `group`'s count in `table`; returns the new count.
fn tally(table: &Tally, group: &str, delta: isize) -> usize {
    let mut map = table.lock().unwrap_or_else(|e| e.into_inner());
    let n = map
        .get_or_insert_with(Default::default)
        .entry(group.to_owned())
        .or_default();
    *n = n.saturating_add_signed(delta);
    *n
}

/// Starts the static server on 127.0.0.1:`port` (0: any); returns the port.
pub fn start_static(port: u16, mounts: Mounts, log: Log, coi: bool) -> Result<u16, String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("bind 127.0.0.1:{port}: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let mounts = Arc::new(mounts);
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (m, l) = (mounts.clone(), log.clone());
            thread::spawn(move || handle_static(stream, &m, &l, coi));
        }
    });
    Ok(port)
}

/// Starts the logging proxy: it records each request line (and CONNECT target) and refuses it.
pub fn start_proxy(log: Log) -> Result<u16, String> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let log = log.clone();
            thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).unwrap_or(0);
                let text = String::from_utf8_lossy(&buf[..n]);
                let first = text.lines().next().unwrap_or("").to_owned();
                if !first.is_empty() {
                    log.line(&first);
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        }
    });
    Ok(port)
}

/// The mounts of the demo: the demo page at `/`, the built package beside it.
pub fn demo_mounts() -> Mounts {
    let r = root();
    vec![
        ("/".into(), r.join("demo")),
        ("/".into(), crate::dist_dir()),
    ]
}

pub fn demo(port: u16) -> Result<(), String> {
    let log = Log::create(&root().join("target/serve.log"))?;
    let port = start_static(port, demo_mounts(), log, false)?;
    println!("foxden demo: http://127.0.0.1:{port}/  (Ctrl-C to stop; requests logged to target/serve.log)");
    loop {
        thread::park();
    }
}
