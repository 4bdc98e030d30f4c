//! The host fetches the Pyodide assets itself (the den page can fetch nothing) and checks them.

use super::*;
use crate::errors::load_error;
use crate::js::{self, get, get_str};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The Pyodide version foxden embeds; the assets must match it exactly.
pub const PYODIDE_VERSION: &str = env!("FOXDEN_PYODIDE_VERSION");
/// `info.python` of Pyodide 314.0.7's pyodide-lock.json.
pub(crate) const PYODIDE_PYTHON: &str = "3.14.2";
/// `info.abi_version` of Pyodide 314.0.7's pyodide-lock.json.
pub(crate) const PYODIDE_ABI: &str = "2026_0";
/// The SHA-256 of the three runtime files of that Pyodide (the repository's `pyodide.sha256`,
/// which `cargo xtask build` checks node_modules/pyodide against): the host refuses others.
pub(crate) const PYODIDE_SHA256: [(&str, &str); 3] = [
    ("pyodide.asm.wasm", env!("FOXDEN_PYODIDE_SHA256_WASM")),
    ("python_stdlib.zip", env!("FOXDEN_PYODIDE_SHA256_STDLIB")),
    ("pyodide-lock.json", env!("FOXDEN_PYODIDE_SHA256_LOCK")),
];

/// Checks the assets against [`PYODIDE_SHA256`], from digests started before their buffers
/// were handed over: a changed, corrupted or other build's file is a `DenLoadError` of stage
/// "assets" naming it (before the den is ready, so no code runs on it).
pub(crate) async fn verify_assets(
    wasm: super::warm::Digest,
    stdlib: super::warm::Digest,
    lock: &str,
    base: &str,
) -> Result<(), JsValue> {
    let (w, z) = futures::future::join(wasm.finish(), stdlib.finish()).await;
    let l = Some(foxden_core::sha256(lock.as_bytes()));
    for ((file, pin), got) in PYODIDE_SHA256.iter().zip([w, z, l]) {
        let got = got.map(|d| foxden_core::hex(&d));
        if got.as_deref() != Some(*pin) {
            return Err(load_error(
                crate::errors::LoadStage::Assets,
                &format!(
                    "{base}{file} is not Pyodide {PYODIDE_VERSION}'s {file}: its SHA-256 is {}, not {pin} (a changed, corrupted or other build's file)",
                    got.as_deref().unwrap_or("unknown (it could not be hashed)")
                ),
            ));
        }
    }
    Ok(())
}

/// Aborts a fetch when dropped unless disarmed: a den whose opening is cancelled (an element
/// removed while loading) stops downloading instead of holding the connections.
pub(crate) struct AbortOnDrop(Option<JsValue>);

impl AbortOnDrop {
    pub(crate) fn new() -> Self {
        let ctor = js_sys::Reflect::get(&js_sys::global(), &"AbortController".into())
            .ok()
            .and_then(|c| c.dyn_into::<js_sys::Function>().ok());
        AbortOnDrop(ctor.and_then(|c| js_sys::Reflect::construct(&c, &Array::new()).ok()))
    }
    /// Keeps the fetch (or run) going when this is dropped.
    pub(crate) fn disarm(&mut self) {
        self.0 = None;
    }
    pub(crate) fn signal(&self) -> JsValue {
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

/// Largest body read into memory: under the 4 GiB a `Uint8Array` length in wasm can name.
const MAX_BODY_BYTES: f64 = (2u64 << 30) as f64;

pub(crate) async fn fetch_bytes(
    url: &str,
    progress: &dyn Fn(f64, f64),
) -> Result<ArrayBuffer, JsValue> {
    fetch_bytes_teed(url, progress, None, MAX_BODY_BYTES, true, &|_| Ok(())).await
}

/// [`fetch_bytes`] of a file that is not Pyodide's (a wheel), refusing a body longer than
/// `max` bytes: by its `Content-Length` before reading, else as soon as that many bytes came
/// (the download is aborted). `take` is told each piece's length as it comes, before it is
/// kept; its error ends (and aborts) the download, and is the fetch's error.
pub(crate) async fn fetch_bytes_capped(
    url: &str,
    max: u64,
    take: &dyn Fn(u32) -> Result<(), JsValue>,
) -> Result<ArrayBuffer, JsValue> {
    fetch_bytes_teed(
        url,
        &|_, _| {},
        None,
        (max as f64).min(MAX_BODY_BYTES),
        false,
        take,
    )
    .await
}

/// [`fetch_bytes`], and with `tee`, a second reading of the body as it downloads (a
/// `ReadableStream` from the body's `tee()`), sent as soon as the response came; dropped
/// unsent when there is no body to split. `pyodide`: one of Pyodide's files (an HTTP error's
/// message then asks whether `pyodideUrl` is right). `take`: see [`fetch_bytes_capped`].
async fn fetch_bytes_teed(
    url: &str,
    progress: &dyn Fn(f64, f64),
    tee: Option<futures::channel::oneshot::Sender<JsValue>>,
    max: f64,
    pyodide: bool,
    take: &dyn Fn(u32) -> Result<(), JsValue>,
) -> Result<ArrayBuffer, JsValue> {
    let too_big = |n: f64| {
        load_error(
            crate::errors::LoadStage::Assets,
            &format!(
                "{url} is larger than {} bytes ({} bytes or more)",
                foxden_core::decimal::show(max),
                foxden_core::decimal::show(n)
            ),
        )
    };
    let window = web_sys::window()
        .ok_or_else(|| load_error(crate::errors::LoadStage::Assets, "no window"))?;
    let mut abort = AbortOnDrop::new();
    let init = web_sys::RequestInit::new();
    let _ = js_sys::Reflect::set(&init, &"signal".into(), &abort.signal());
    let resp: web_sys::Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|e| {
            load_error(
                crate::errors::LoadStage::Assets,
                &format!("GET {url} failed: {}", js::describe(&e)),
            )
        })?
        .unchecked_into();
    if !resp.ok() {
        // The hint is about Pyodide's files (a wheel's URL is the page's own).
        let hint = if pyodide {
            format!(" (is pyodideUrl right, and are the Pyodide {PYODIDE_VERSION} files there?)")
        } else {
            String::new()
        };
        return Err(load_error(
            crate::errors::LoadStage::Assets,
            &format!("GET {url} answered HTTP {}{hint}", resp.status()),
        ));
    }
    let total = resp
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| foxden_core::decimal::parse_f64(s.trim()))
        .unwrap_or(0.0);
    if total > max {
        return Err(too_big(total));
    }
    progress(0.0, total);
    let body = match resp.body() {
        Some(b) => b,
        None => {
            let buf =
                JsFuture::from(resp.array_buffer().map_err(|e| {
                    load_error(crate::errors::LoadStage::Assets, &js::describe(&e))
                })?)
                .await
                .map_err(|e| load_error(crate::errors::LoadStage::Assets, &js::describe(&e)))?;
            let buf: ArrayBuffer = buf.unchecked_into();
            if f64::from(buf.byte_length()) > max {
                return Err(too_big(f64::from(buf.byte_length())));
            }
            take(buf.byte_length())?;
            return Ok(buf);
        }
    };
    let mut body: JsValue = body.into();
    if let Some(tee) = tee {
        let branches = js_sys::Reflect::get(&body, &"tee".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .and_then(|f| f.call0(&body).ok())
            .map(|v| Array::from(&v));
        if let Some(b) = branches.filter(|b| b.length() == 2) {
            body = b.get(0);
            let _ = tee.send(b.get(1));
        }
    }
    let body: web_sys::ReadableStream = body.unchecked_into();
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut chunks: Vec<Uint8Array> = Vec::new();
    let mut loaded = 0.0;
    loop {
        let r = JsFuture::from(reader.read()).await.map_err(|e| {
            load_error(
                crate::errors::LoadStage::Assets,
                &format!("reading {url} failed: {}", js::describe(&e)),
            )
        })?;
        if get(&r, "done").as_bool().unwrap_or(true) {
            break;
        }
        let chunk: Uint8Array = get(&r, "value").unchecked_into();
        loaded += chunk.length() as f64;
        if loaded > max {
            // Dropping `abort` (still armed) aborts the download.
            return Err(too_big(loaded));
        }
        // An error here drops `abort` still armed: the download is aborted.
        take(chunk.length())?;
        progress(loaded, total.max(loaded));
        chunks.push(chunk);
    }
    let out = Uint8Array::new_with_length(loaded as u32);
    let mut off = 0;
    for c in chunks {
        out.set(&c, off);
        off += c.length();
    }
    abort.disarm();
    Ok(out.buffer())
}

pub(crate) async fn fetch_text(url: &str) -> Result<String, JsValue> {
    let buf = fetch_bytes(url, &|_, _| {}).await?;
    let bytes = Uint8Array::new(&buf).to_vec();
    String::from_utf8(bytes).map_err(|_| {
        load_error(
            crate::errors::LoadStage::Assets,
            &format!("{url} is not UTF-8 text"),
        )
    })
}

/// Host-side asset fetches (the den page can fetch nothing), with combined progress.
/// The three Pyodide files, checked. With `wasm_stream`, the wasm's body is also handed out as
/// a stream as soon as its download starts (the den page compiles it while it downloads).
pub(crate) async fn fetch_assets(
    opts: &RuntimeOptions,
    progress: &Progress,
    wasm_stream: Option<futures::channel::oneshot::Sender<JsValue>>,
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
    // The first to fail ends the others (each download is aborted when its future is dropped):
    // a missing lock file does not wait for the 9 MB wasm.
    let (wasm, stdlib, lock) = futures::future::try_join3(
        fetch_bytes_teed(&wasm_url, &r0, wasm_stream, MAX_BODY_BYTES, true, &|_| {
            Ok(())
        }),
        fetch_bytes(&zip_url, &r1),
        async {
            let t = fetch_text(&lock_url).await;
            r2(1.0, 1.0);
            t
        },
    )
    .await?;
    check_assets(&wasm, &stdlib, &lock, &opts.pyodide_url)?;
    Ok((wasm, stdlib, lock))
}

pub(crate) fn check_assets(
    wasm: &ArrayBuffer,
    stdlib: &ArrayBuffer,
    lock: &str,
    base: &str,
) -> Result<(), JsValue> {
    let head =
        Uint8Array::new_with_byte_offset_and_length(wasm, 0, wasm.byte_length().min(4)).to_vec();
    if head != b"\0asm" {
        return Err(load_error(
            crate::errors::LoadStage::Assets,
            &format!(
                "{base}pyodide.asm.wasm is not WebAssembly (wrong file or an HTML error page?)"
            ),
        ));
    }
    let zhead = Uint8Array::new_with_byte_offset_and_length(stdlib, 0, stdlib.byte_length().min(2))
        .to_vec();
    if zhead != b"PK" {
        return Err(load_error(
            crate::errors::LoadStage::Assets,
            &format!("{base}python_stdlib.zip is not a zip file"),
        ));
    }
    let parsed = js_sys::JSON::parse(lock).map_err(|_| {
        load_error(
            crate::errors::LoadStage::Assets,
            &format!("{base}pyodide-lock.json is not JSON"),
        )
    })?;
    // The lock file names the Python and ABI of its Pyodide build; 314.0.7 ships these two.
    let info = get(&parsed, "info");
    let python = get_str(&info, "python").unwrap_or_default();
    let abi = get_str(&info, "abi_version").unwrap_or_default();
    if python != PYODIDE_PYTHON || abi != PYODIDE_ABI {
        return Err(load_error(crate::errors::LoadStage::Assets,
            &format!("the Pyodide files at {base} are for Python {python:?} (ABI {abi:?}), not Pyodide {PYODIDE_VERSION} (Python {PYODIDE_PYTHON}, ABI {PYODIDE_ABI}); foxden embeds the {PYODIDE_VERSION} loader and needs exactly that version"),
        ));
    }
    Ok(())
}
