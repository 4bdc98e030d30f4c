//! The iframe runtime: creates the sandboxed den page, fetches the Pyodide assets on the host,
//! hands them over through a `MessageChannel`, and relays runs.

use crate::callback::{with_timeout, Listener};
use crate::errors::{load_error, option_error};
use crate::js::{self, get, get_f64, get_str, is_absent, obj};
use crate::wire;
use foxden_core::protocol::{
    run_id, DenToHost, Done, OutputBuffer, ReplyError, ReplyLimits, Watchdog, PROTOCOL_VERSION,
};
use futures::channel::oneshot;
use js_sys::{Array, ArrayBuffer, Uint8Array};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{HtmlIFrameElement, MessageChannel, MessageEvent, MessagePort};

/// The Pyodide version foxden embeds; the assets must match it exactly.
pub const PYODIDE_VERSION: &str = "314.0.7";
/// `info.python` of Pyodide 314.0.7's pyodide-lock.json.
const PYODIDE_PYTHON: &str = "3.14.2";
/// `info.abi_version` of Pyodide 314.0.7's pyodide-lock.json.
const PYODIDE_ABI: &str = "2026_0";

/// Which isolation a den asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// On an extension page, manifest-sandbox, falling back to iframe-sandbox when the den page
    /// reports an isolation failure (no manifest sandbox support, e.g. Firefox ESR 153); on a
    /// website, iframe-sandbox.
    Auto,
    /// The den page is an extension manifest sandbox page.
    ManifestSandbox,
    /// An iframe with `sandbox="allow-scripts"`.
    IframeSandbox,
}

impl Isolation {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Isolation::Auto),
            "manifest-sandbox" => Some(Isolation::ManifestSandbox),
            "iframe-sandbox" => Some(Isolation::IframeSandbox),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Auto => "auto",
            Isolation::ManifestSandbox => "manifest-sandbox",
            Isolation::IframeSandbox => "iframe-sandbox",
        }
    }
}

/// Options of `iframeRuntime`, resolved.
#[derive(Clone)]
pub struct RuntimeOptions {
    pub den_url: String,
    pub pyodide_url: String,
    pub isolation: Isolation,
    pub load_timeout_ms: f64,
    pub container: Option<web_sys::Element>,
    /// Cap on the worker's WebAssembly memory (set from `openDen({ maxMemoryBytes })`).
    pub max_memory_bytes: f64,
    /// Cap on the bytes of one run's reply (set from `openDen({ maxDenBytes })`).
    pub max_den_bytes: f64,
}

thread_local! {
    static MODULE_BASE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Set by foxden.js to `import.meta.url`, so default asset URLs resolve next to the module.
pub fn set_module_base(url: String) {
    MODULE_BASE.with(|b| *b.borrow_mut() = Some(url));
}

fn resolve_url(url: &str) -> Result<String, String> {
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten())
        .unwrap_or_default();
    web_sys::Url::new_with_base(url, &base)
        .map(|u| u.href())
        .map_err(|e| js::describe(&e))
}

fn default_url(rel: &str) -> String {
    let base = MODULE_BASE.with(|b| b.borrow().clone());
    match base {
        Some(base) => web_sys::Url::new_with_base(rel, &base)
            .map(|u| u.href())
            .unwrap_or_else(|_| rel.to_owned()),
        None => resolve_url(rel).unwrap_or_else(|_| rel.to_owned()),
    }
}

impl RuntimeOptions {
    /// Reads the options object given to `iframeRuntime` (or the runtime part of an element).
    pub fn from_js(v: &JsValue) -> Result<Self, JsValue> {
        let url_opt = |key: &str, default: &str| -> Result<String, JsValue> {
            let raw = get(v, key);
            if is_absent(&raw) {
                return Ok(default_url(default));
            }
            let s = raw
                .as_string()
                .ok_or_else(|| option_error(key, &format!("{key} must be a URL string")))?;
            resolve_url(&s)
                .map_err(|e| option_error(key, &format!("{key} {s:?} is not a valid URL: {e}")))
        };
        let den_url = url_opt("denUrl", "./den/den.html")?;
        let mut pyodide_url = url_opt("pyodideUrl", "./pyodide/")?;
        if !pyodide_url.ends_with('/') {
            pyodide_url.push('/');
        }
        let iso_raw = get(v, "isolation");
        let isolation = if is_absent(&iso_raw) {
            Isolation::Auto
        } else {
            iso_raw
                .as_string()
                .as_deref()
                .and_then(Isolation::parse)
                .ok_or_else(|| {
                    option_error(
                        "isolation",
                        "isolation must be \"auto\", \"manifest-sandbox\" or \"iframe-sandbox\"",
                    )
                })?
        };
        let lt = get(v, "loadTimeoutMs");
        let load_timeout_ms = if is_absent(&lt) {
            foxden_core::limits::DEFAULT_LOAD_TIMEOUT_MS as f64
        } else {
            match lt.as_f64() {
                Some(n) if n.is_finite() && n > 0.0 => n,
                _ => {
                    return Err(option_error(
                        "loadTimeoutMs",
                        "loadTimeoutMs must be a positive number of milliseconds",
                    ))
                }
            }
        };
        let c = get(v, "container");
        let container = if is_absent(&c) {
            None
        } else {
            Some(
                c.dyn_into::<web_sys::Element>()
                    .map_err(|_| option_error("container", "container must be a DOM element"))?,
            )
        };
        Ok(RuntimeOptions {
            den_url,
            pyodide_url,
            isolation,
            load_timeout_ms,
            container,
            max_memory_bytes: foxden_core::limits::DEFAULT_MAX_MEMORY_BYTES as f64,
            max_den_bytes: foxden_core::limits::DEFAULT_MAX_DEN_BYTES as f64,
        })
    }

    /// The plain object `iframeRuntime()` returns.
    pub fn to_js(&self) -> JsValue {
        let o = obj(&[
            ("kind", "iframe".into()),
            ("denUrl", self.den_url.as_str().into()),
            ("pyodideUrl", self.pyodide_url.as_str().into()),
            ("isolation", self.isolation.as_str().into()),
            ("loadTimeoutMs", self.load_timeout_ms.into()),
            (
                "container",
                self.container
                    .clone()
                    .map(JsValue::from)
                    .unwrap_or(JsValue::NULL),
            ),
        ]);
        o.into()
    }

    /// The isolation mode this page will use.
    fn effective_isolation(&self) -> Result<Isolation, JsValue> {
        let is_extension_page = is_extension_page();
        match self.isolation {
            Isolation::IframeSandbox => Ok(Isolation::IframeSandbox),
            Isolation::ManifestSandbox if !is_extension_page => Err(load_error(
                "isolation",
                "isolation \"manifest-sandbox\" needs an extension page whose manifest declares the den page in sandbox.pages",
            )),
            Isolation::ManifestSandbox => Ok(Isolation::ManifestSandbox),
            Isolation::Auto if is_extension_page => Ok(Isolation::ManifestSandbox),
            Isolation::Auto => Ok(Isolation::IframeSandbox),
        }
    }
}

/// Progress of asset loading: (loaded bytes, total bytes).
pub type Progress = Rc<dyn Fn(f64, f64)>;

/// Handler for streamed output of a run: (stream, the text the host kept).
pub type OutputHandler = Rc<dyn Fn(&str, &str)>;

struct RunSlot {
    started: Option<oneshot::Sender<()>>,
    done: oneshot::Sender<Result<Done, ReplyError>>,
    output: Rc<RefCell<OutputBuffer>>,
    on_output: OutputHandler,
    limits: ReplyLimits,
}

#[derive(Default)]
struct Shared {
    loader: Option<oneshot::Sender<JsValue>>,
    runs: HashMap<u32, RunSlot>,
    resets: HashMap<u32, oneshot::Sender<JsValue>>,
}

/// How a run ended, as far as the host can tell.
pub enum RunEnd {
    /// The den page answered with a well-formed reply.
    Done(Done),
    /// The den page answered with a reply the host refused.
    Refused(ReplyError),
    /// The den page did not answer in time (`started`: it had said the run started).
    Silent { started: bool },
    /// The connection was closed (`close()`, or the port failed).
    Closed,
}

/// A run to post: the message, its transfer list, and how the host bounds it.
pub struct RunRequest {
    pub msg: js_sys::Object,
    pub transfer: Array,
    pub output: Rc<RefCell<OutputBuffer>>,
    pub on_output: OutputHandler,
    pub limits: ReplyLimits,
    pub watchdog: Watchdog,
}

/// A live den page. Dropping it closes the port and removes the iframe.
pub struct Connection {
    iframe: HtmlIFrameElement,
    port: MessagePort,
    shared: Rc<RefCell<Shared>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_load: Listener,
    next_id: std::cell::Cell<u32>,
    hello_rx: RefCell<Option<oneshot::Receiver<JsValue>>>,
    pub isolation: Isolation,
    pub load_ms: f64,
    /// The den page is cross-origin isolated: a timeout first interrupts Python
    /// (KeyboardInterrupt, variables kept) and kills the worker only if that fails.
    pub interruptible: std::cell::Cell<bool>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.port.set_onmessage(None);
        self.port.close();
        self.iframe.remove();
        crate::leak_check::connection_dropped();
    }
}

impl Connection {
    fn next_id(&self) -> u32 {
        let id = self.next_id.get().wrapping_add(1);
        self.next_id.set(id);
        id
    }

    /// Posts a run and waits for its end, under the host's two-phase watchdog: the den page
    /// must say the run `started` within `watchdog.start_ms` (its worker may be booting), then
    /// answer within `watchdog.run_ms`.
    pub async fn run(&self, req: RunRequest) -> RunEnd {
        let id = self.next_id();
        let _ = js_sys::Reflect::set(&req.msg, &"id".into(), &id.into());
        let (started_tx, started_rx) = oneshot::channel();
        let (tx, rx) = oneshot::channel();
        self.shared.borrow_mut().runs.insert(
            id,
            RunSlot {
                started: Some(started_tx),
                done: tx,
                output: req.output,
                on_output: req.on_output,
                limits: req.limits,
            },
        );
        if self
            .port
            .post_message_with_transferable(&req.msg, &req.transfer)
            .is_err()
        {
            self.shared.borrow_mut().runs.remove(&id);
            return RunEnd::Closed;
        }
        // Phase 1 ends on `started`, or when the slot goes (a `done`, or the connection closed).
        let end = match with_timeout(started_rx, req.watchdog.start_ms).await {
            None => RunEnd::Silent { started: false },
            Some(_) => match with_timeout(rx, req.watchdog.run_ms).await {
                None => RunEnd::Silent { started: true },
                Some(Ok(Ok(done))) => RunEnd::Done(done),
                Some(Ok(Err(e))) => RunEnd::Refused(e),
                Some(Err(_)) => RunEnd::Closed,
            },
        };
        self.shared.borrow_mut().runs.remove(&id);
        end
    }

    /// Ends every pending run and reset at once (their futures see the channel closed).
    pub fn cancel_pending(&self) {
        let mut shared = self.shared.borrow_mut();
        shared.runs.clear();
        shared.resets.clear();
    }

    /// Restarts the interpreter; resolves when the new one is ready, with how it booted:
    /// `("snapshot" | "scratch", boot ms)`.
    pub async fn reset(&self, timeout_ms: f64) -> Result<(&'static str, f64), String> {
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        self.shared.borrow_mut().resets.insert(id, tx);
        let _ = self
            .port
            .post_message(&obj(&[("t", "reset".into()), ("id", id.into())]));
        let out = with_timeout(rx, timeout_ms).await;
        self.shared.borrow_mut().resets.remove(&id);
        match out {
            Some(Ok(msg)) => match wire::text(&get(&msg, "error"), 4096) {
                Some((e, _)) => Err(e),
                None => Ok((
                    if get_str(&msg, "from").as_deref() == Some("snapshot") {
                        "snapshot"
                    } else {
                        "scratch"
                    },
                    get_f64(&msg, "bootMs")
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .unwrap_or(0.0),
                )),
            },
            _ => Err("the den page did not answer the reset".into()),
        }
    }
}

/// The id of a message, if it is a whole number in range.
fn msg_id(msg: &JsValue) -> Option<u32> {
    get_f64(msg, "id").and_then(run_id)
}

/// Every message from the den page goes through here. It may come from hostile code: unknown
/// kinds, wrong types, stale or future ids are ignored; replies are read by `wire` with bounds.
fn on_port_message(shared: &Rc<RefCell<Shared>>, ev: MessageEvent) {
    let msg = ev.data();
    let Some(kind) = get(&msg, "t")
        .as_string()
        .filter(|t| t.len() <= 16)
        .and_then(|t| DenToHost::parse(&t))
    else {
        return;
    };
    match kind {
        DenToHost::Hello | DenToHost::Ready | DenToHost::LoadError => {
            let tx = shared.borrow_mut().loader.take();
            if let Some(tx) = tx {
                let _ = tx.send(msg);
            }
        }
        DenToHost::Started => {
            let Some(id) = msg_id(&msg) else { return };
            let tx = shared
                .borrow_mut()
                .runs
                .get_mut(&id)
                .and_then(|s| s.started.take());
            if let Some(tx) = tx {
                let _ = tx.send(());
            }
        }
        DenToHost::Out => {
            let Some(id) = msg_id(&msg) else { return };
            let slot = shared
                .borrow()
                .runs
                .get(&id)
                .map(|s| (s.output.clone(), s.on_output.clone()));
            let Some((output, handler)) = slot else {
                return;
            };
            let room = output.borrow().room();
            let Some((stream, text, cut)) = wire::out(&msg, room) else {
                return;
            };
            let kept = {
                let mut o = output.borrow_mut();
                let kept = o.push(stream, &text);
                o.truncated |= cut;
                kept
            };
            if !kept.is_empty() {
                handler(stream.as_str(), &kept);
            }
        }
        DenToHost::Done => {
            let Some(id) = msg_id(&msg) else { return };
            let slot = shared.borrow_mut().runs.remove(&id);
            if let Some(slot) = slot {
                let _ = slot.done.send(wire::done(&msg, id, &slot.limits));
            }
        }
        DenToHost::ResetDone => {
            let Some(id) = msg_id(&msg) else { return };
            let tx = shared.borrow_mut().resets.remove(&id);
            if let Some(tx) = tx {
                let _ = tx.send(msg);
            }
        }
    }
}

/// Aborts a fetch when dropped unless disarmed: a den whose opening is cancelled (an element
/// removed while loading) stops downloading instead of holding the connections.
struct AbortOnDrop(Option<JsValue>);

impl AbortOnDrop {
    fn new() -> Self {
        let ctor = js_sys::Reflect::get(&js_sys::global(), &"AbortController".into())
            .ok()
            .and_then(|c| c.dyn_into::<js_sys::Function>().ok());
        AbortOnDrop(ctor.and_then(|c| js_sys::Reflect::construct(&c, &Array::new()).ok()))
    }
    fn signal(&self) -> JsValue {
        self.0
            .as_ref()
            .map_or(JsValue::UNDEFINED, |c| get(c, "signal"))
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            if let Ok(abort) = get(&c, "abort").dyn_into::<js_sys::Function>() {
                let _ = abort.call0(&c);
            }
        }
    }
}

async fn fetch_bytes(url: &str, progress: &dyn Fn(f64, f64)) -> Result<ArrayBuffer, JsValue> {
    let window = web_sys::window().ok_or_else(|| load_error("assets", "no window"))?;
    let mut abort = AbortOnDrop::new();
    let init = web_sys::RequestInit::new();
    let _ = js_sys::Reflect::set(&init, &"signal".into(), &abort.signal());
    let resp: web_sys::Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|e| load_error("assets", &format!("GET {url} failed: {}", js::describe(&e))))?
        .unchecked_into();
    if !resp.ok() {
        return Err(load_error(
            "assets",
            &format!("GET {url} answered HTTP {} (is pyodideUrl right, and are the Pyodide {PYODIDE_VERSION} files there?)", resp.status()),
        ));
    }
    let total = resp
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.0);
    progress(0.0, total);
    let body = match resp.body() {
        Some(b) => b,
        None => {
            let buf = JsFuture::from(
                resp.array_buffer()
                    .map_err(|e| load_error("assets", &js::describe(&e)))?,
            )
            .await
            .map_err(|e| load_error("assets", &js::describe(&e)))?;
            return Ok(buf.unchecked_into());
        }
    };
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut chunks: Vec<Uint8Array> = Vec::new();
    let mut loaded = 0.0;
    loop {
        let r = JsFuture::from(reader.read()).await.map_err(|e| {
            load_error(
                "assets",
                &format!("reading {url} failed: {}", js::describe(&e)),
            )
        })?;
        if get(&r, "done").as_bool().unwrap_or(true) {
            break;
        }
        let chunk: Uint8Array = get(&r, "value").unchecked_into();
        loaded += chunk.length() as f64;
        progress(loaded, total.max(loaded));
        chunks.push(chunk);
    }
    let out = Uint8Array::new_with_length(loaded as u32);
    let mut off = 0;
    for c in chunks {
        out.set(&c, off);
        off += c.length();
    }
    abort.0 = None;
    Ok(out.buffer())
}

async fn fetch_text(url: &str) -> Result<String, JsValue> {
    let buf = fetch_bytes(url, &|_, _| {}).await?;
    let bytes = Uint8Array::new(&buf).to_vec();
    String::from_utf8(bytes).map_err(|_| load_error("assets", &format!("{url} is not UTF-8 text")))
}

/// Starts the runtime: iframe, assets, handshake, boot. Rejects with `DenLoadError`.
///
/// The iframe is created at once and its handshake runs while the host fetches the assets.
/// With `isolation: "auto"` on an extension page the den page is first loaded as a manifest
/// sandbox page (no `sandbox` attribute); if it reports an isolation failure (a browser without
/// manifest sandbox support, such as Firefox ESR 153, serves it as an ordinary extension page),
/// that iframe is removed and the same page is loaded again with `sandbox="allow-scripts"`.
pub async fn start(opts: &RuntimeOptions, progress: Progress) -> Result<Connection, JsValue> {
    let started = js::now_ms();
    let isolation = opts.effective_isolation()?;
    let deadline = opts.load_timeout_ms;
    let hello_seen = Rc::new(std::cell::Cell::new(false));
    let work = async {
        let (assets, conn) = futures::future::join(
            fetch_assets(opts, &progress),
            handshake(opts, isolation, hello_seen.clone()),
        )
        .await;
        let (wasm, stdlib, lock) = assets?;
        let conn = conn?;
        boot(&conn, wasm, stdlib, lock, opts).await?;
        Ok(conn)
    };
    let mut conn = match with_timeout(work, deadline).await {
        Some(Ok(conn)) => conn,
        Some(Err(e)) => return Err(e),
        None => {
            let msg = if !hello_seen.get() {
                diagnose_den_page(&opts.den_url).await
            } else {
                format!("the den did not become ready within {deadline} ms (loadTimeoutMs)")
            };
            return Err(load_error("timeout", &msg));
        }
    };
    conn.load_ms = js::now_ms() - started;
    Ok(conn)
}

/// Host-side asset fetches (the den page can fetch nothing), with combined progress.
async fn fetch_assets(
    opts: &RuntimeOptions,
    progress: &Progress,
) -> Result<(ArrayBuffer, ArrayBuffer, String), JsValue> {
    let sizes: Rc<RefCell<[(f64, f64); 3]>> = Rc::new(RefCell::new([(0.0, 0.0); 3]));
    let report = |i: usize| {
        let sizes = sizes.clone();
        let progress = progress.clone();
        move |loaded: f64, total: f64| {
            sizes.borrow_mut()[i] = (loaded, total);
            let s = sizes.borrow();
            progress(s.iter().map(|x| x.0).sum(), s.iter().map(|x| x.1).sum());
        }
    };
    let (r0, r1, r2) = (report(0), report(1), report(2));
    let wasm_url = format!("{}pyodide.asm.wasm", opts.pyodide_url);
    let zip_url = format!("{}python_stdlib.zip", opts.pyodide_url);
    let lock_url = format!("{}pyodide-lock.json", opts.pyodide_url);
    let (wasm, stdlib, lock) = futures::future::join3(
        fetch_bytes(&wasm_url, &r0),
        fetch_bytes(&zip_url, &r1),
        async {
            let t = fetch_text(&lock_url).await;
            r2(1.0, 1.0);
            t
        },
    )
    .await;
    let (wasm, stdlib, lock) = (wasm?, stdlib?, lock?);
    check_assets(&wasm, &stdlib, &lock, &opts.pyodide_url)?;
    Ok((wasm, stdlib, lock))
}

/// Creates the iframe and waits for the den page's "hello" (it answers once it has checked its
/// isolation). Under `auto`, an isolation failure of the manifest sandbox page falls back to
/// iframe-sandbox once; every other failure, and any failure of an explicit mode, is final.
async fn handshake(
    opts: &RuntimeOptions,
    isolation: Isolation,
    hello_seen: Rc<std::cell::Cell<bool>>,
) -> Result<Connection, JsValue> {
    refuse_redirect(&opts.den_url).await?;
    let conn = create(opts, isolation)?;
    let hello = wait_loader(&conn).await;
    hello_seen.set(true);
    if get_str(&hello, "t").as_deref() == Some("hello") {
        check_protocol(&hello)?;
        return Ok(conn);
    }
    let fallback = opts.isolation == Isolation::Auto
        && isolation == Isolation::ManifestSandbox
        && get_str(&hello, "t").as_deref() == Some("load-error")
        && get_str(&hello, "stage").as_deref() == Some("isolation");
    if !fallback {
        return Err(load_error_from(&hello, isolation));
    }
    let first_problem = get_str(&hello, "message").unwrap_or_default();
    drop(conn);
    hello_seen.set(false);
    let conn = create(opts, Isolation::IframeSandbox)?;
    let hello = wait_loader(&conn).await;
    hello_seen.set(true);
    if get_str(&hello, "t").as_deref() == Some("hello") {
        check_protocol(&hello)?;
        return Ok(conn);
    }
    let second = load_error_message(&hello);
    Err(load_error(
        &get_str(&hello, "stage").unwrap_or_else(|| "den".into()),
        &format!(
            "isolation \"auto\": as a manifest sandbox page, {first_problem}; \
             with the iframe-sandbox fallback, {second}"
        ),
    ))
}

/// The den page must speak this build's protocol (a stale cached den.html would not).
fn check_protocol(hello: &JsValue) -> Result<(), JsValue> {
    let got = get_f64(hello, "protocol");
    if got == Some(PROTOCOL_VERSION as f64) {
        return Ok(());
    }
    Err(load_error(
        "protocol",
        &format!(
            "the den page speaks protocol {}, this foxden.js speaks {PROTOCOL_VERSION}: serve the den/ folder of the same foxden build",
            got.map_or("(none)".to_owned(), |v| v.to_string())
        ),
    ))
}

/// Hands the assets to the den page and waits until Pyodide is ready.
async fn boot(
    conn: &Connection,
    wasm: ArrayBuffer,
    stdlib: ArrayBuffer,
    lock: String,
    opts: &RuntimeOptions,
) -> Result<(), JsValue> {
    let (tx, rx) = oneshot::channel();
    conn.shared.borrow_mut().loader = Some(tx);
    let msg = obj(&[
        ("t", "boot".into()),
        ("wasm", wasm.clone().into()),
        ("stdlib", stdlib.clone().into()),
        ("lock", lock.into()),
        ("maxMemoryBytes", opts.max_memory_bytes.into()),
        ("maxDenBytes", opts.max_den_bytes.into()),
    ]);
    let transfer = Array::of2(&wasm, &stdlib);
    conn.port
        .post_message_with_transferable(&msg, &transfer)
        .map_err(|e| {
            load_error(
                "message",
                &format!(
                    "could not hand the assets to the den page: {}",
                    js::describe(&e)
                ),
            )
        })?;
    let ready = rx.await.unwrap_or(JsValue::UNDEFINED);
    match get_str(&ready, "t").as_deref() {
        Some("ready") => {
            conn.interruptible
                .set(get(&ready, "interruptible").as_bool().unwrap_or(false));
            Ok(())
        }
        _ => Err(load_error_from(&ready, conn.isolation)),
    }
}

/// The port is posted to whatever page the iframe ends up showing (an opaque origin cannot be
/// named as target), and the den's files go through it: a `denUrl` that redirects could hand
/// them to another page. Asked once before the iframe loads; a redirect is refused.
async fn refuse_redirect(den_url: &str) -> Result<(), JsValue> {
    let Some(w) = web_sys::window() else {
        return Ok(());
    };
    let init = web_sys::RequestInit::new();
    init.set_redirect(web_sys::RequestRedirect::Manual);
    init.set_mode(web_sys::RequestMode::NoCors);
    let Ok(resp) = JsFuture::from(w.fetch_with_str_and_init(den_url, &init)).await else {
        return Ok(()); // unreachable: the load itself will fail and be diagnosed
    };
    let resp: web_sys::Response = resp.unchecked_into();
    if resp.type_() == web_sys::ResponseType::Opaqueredirect || resp.redirected() {
        return Err(load_error(
            "den-page",
            &format!("the den page {den_url} redirects; serve den.html at its final URL (the host hands the den's files to whatever page loads)"),
        ));
    }
    Ok(())
}

async fn diagnose_den_page(den_url: &str) -> String {
    // The iframe's own load cannot tell a 404 apart; ask the server once to explain the failure.
    if let Some(w) = web_sys::window() {
        if let Ok(resp) = JsFuture::from(w.fetch_with_str(den_url)).await {
            let resp: web_sys::Response = resp.unchecked_into();
            if !resp.ok() {
                return format!(
                    "the den page {den_url} answered HTTP {} (is denUrl right?)",
                    resp.status()
                );
            }
        }
    }
    if is_extension_page() && !den_url.ends_with("den-ext.html") {
        // den.html's inline script cannot run on an extension page (MV3 extension CSP).
        return format!("the den page {den_url} did not answer: in an extension use den/den-ext.html with den/den.js (extension pages cannot run den.html's inline script), declared in the manifest's sandbox.pages");
    }
    format!("the den page {den_url} did not answer (is it the foxden den.html, and is the iframe allowed to run scripts?)")
}

/// Whether this page is an extension page (`chrome-extension:`, `moz-extension:` …).
fn is_extension_page() -> bool {
    web_sys::window()
        .and_then(|w| w.location().protocol().ok())
        .map(|p| p.ends_with("-extension:"))
        .unwrap_or(false)
}

fn load_error_message(msg: &JsValue) -> String {
    get_str(msg, "message").unwrap_or_else(|| "the den page closed".into())
}

fn load_error_from(msg: &JsValue, isolation: Isolation) -> JsValue {
    let stage = get_str(msg, "stage").unwrap_or_else(|| "den".into());
    let mut text = load_error_message(msg);
    if stage == "isolation" {
        text = format!("isolation check failed ({}): {text}", isolation.as_str());
    }
    load_error(&stage, &text)
}

async fn wait_loader(conn: &Connection) -> JsValue {
    let rx = conn.hello_rx.borrow_mut().take();
    match rx {
        Some(rx) => rx.await.unwrap_or(JsValue::UNDEFINED),
        None => JsValue::UNDEFINED,
    }
}

fn check_assets(
    wasm: &ArrayBuffer,
    stdlib: &ArrayBuffer,
    lock: &str,
    base: &str,
) -> Result<(), JsValue> {
    let head =
        Uint8Array::new_with_byte_offset_and_length(wasm, 0, wasm.byte_length().min(4)).to_vec();
    if head != b"\0asm" {
        return Err(load_error(
            "assets",
            &format!(
                "{base}pyodide.asm.wasm is not WebAssembly (wrong file or an HTML error page?)"
            ),
        ));
    }
    let zhead = Uint8Array::new_with_byte_offset_and_length(stdlib, 0, stdlib.byte_length().min(2))
        .to_vec();
    if zhead != b"PK" {
        return Err(load_error(
            "assets",
            &format!("{base}python_stdlib.zip is not a zip file"),
        ));
    }
    let parsed = js_sys::JSON::parse(lock)
        .map_err(|_| load_error("assets", &format!("{base}pyodide-lock.json is not JSON")))?;
    // The lock file names the Python and ABI of its Pyodide build; 314.0.7 ships these two.
    let info = get(&parsed, "info");
    let python = get_str(&info, "python").unwrap_or_default();
    let abi = get_str(&info, "abi_version").unwrap_or_default();
    if python != PYODIDE_PYTHON || abi != PYODIDE_ABI {
        return Err(load_error(
            "assets",
            &format!("the Pyodide files at {base} are for Python {python:?} (ABI {abi:?}), not Pyodide {PYODIDE_VERSION} (Python {PYODIDE_PYTHON}, ABI {PYODIDE_ABI}); foxden embeds the {PYODIDE_VERSION} loader and needs exactly that version"),
        ));
    }
    Ok(())
}

fn create(opts: &RuntimeOptions, isolation: Isolation) -> Result<Connection, JsValue> {
    let window = web_sys::window().ok_or_else(|| load_error("iframe", "no window"))?;
    let document = window
        .document()
        .ok_or_else(|| load_error("iframe", "no document"))?;
    let iframe: HtmlIFrameElement = document
        .create_element("iframe")
        .map_err(|e| load_error("iframe", &js::describe(&e)))?
        .unchecked_into();
    // Manifest sandbox pages are sandboxed by the browser; iframe-sandbox adds the attribute.
    // allow-scripts only: never allow-same-origin, so the den page's origin is opaque.
    if isolation == Isolation::IframeSandbox {
        let _ = iframe.set_attribute("sandbox", "allow-scripts");
    }
    // Lets the den page be cross-origin isolated when the host page is (COOP + COEP): then a
    // timeout can interrupt Python through a SharedArrayBuffer instead of killing the worker.
    let _ = iframe.set_attribute("allow", "cross-origin-isolated");
    let _ = iframe.set_attribute("title", "foxden sandbox");
    let _ = iframe.set_attribute("aria-hidden", "true");
    let _ = iframe.set_attribute("tabindex", "-1");
    let _ = iframe.set_attribute("data-foxden-den", "");
    let _ = iframe.set_attribute(
        "style",
        "position:absolute;width:0;height:0;border:0;visibility:hidden;",
    );
    let channel = MessageChannel::new().map_err(|e| load_error("iframe", &js::describe(&e)))?;
    let port = channel.port1();
    let shared = Rc::new(RefCell::new(Shared::default()));
    let (tx, rx) = oneshot::channel();
    shared.borrow_mut().loader = Some(tx);
    let s2 = shared.clone();
    let on_message =
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| on_port_message(&s2, ev));
    port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let port2 = channel.port2();
    let frame = iframe.clone();
    let mut sent = false;
    let on_load = Listener::new(iframe.as_ref(), "load", move |_| {
        if sent {
            return;
        }
        if let Some(w) = frame.content_window() {
            let msg = obj(&[("foxden", "connect".into())]);
            // An opaque origin cannot be named as target: "*" with a port only our den page takes once.
            if w.post_message_with_transfer(&msg, "*", &Array::of1(&port2))
                .is_ok()
            {
                sent = true;
            }
        }
    });
    iframe.set_src(&opts.den_url);
    let parent: web_sys::Element = match &opts.container {
        Some(c) => c.clone(),
        None => document
            .body()
            .map(Into::into)
            .or_else(|| document.document_element())
            .ok_or_else(|| {
                load_error("iframe", "the document has no body to hold the den iframe")
            })?,
    };
    parent
        .append_child(&iframe)
        .map_err(|e| load_error("iframe", &js::describe(&e)))?;
    crate::leak_check::connection_created();
    Ok(Connection {
        iframe,
        port,
        shared,
        _on_message: on_message,
        _on_load: on_load,
        next_id: std::cell::Cell::new(0),
        hello_rx: RefCell::new(Some(rx)),
        isolation,
        load_ms: 0.0,
        interruptible: std::cell::Cell::new(false),
    })
}
