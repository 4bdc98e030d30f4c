//! Opening a connection: the sandboxed iframe, the handshake (window messages), the Pyodide
//! assets handed over, and the typed load errors of each stage.

use super::*;
use crate::callback::{with_timeout, Listener};
use crate::errors::load_error;
use crate::errors::LoadStage;
use crate::js::{self, get, get_f64, obj};
use foxden_core::protocol::{DenToHost, HostToDen, PROTOCOL_VERSION};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{HtmlIFrameElement, MessageEvent};

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
    let warm_on = opts.warm_start && warm::available();
    // The entry for exactly these assets (their pinned SHA-256s) and this foxden.
    let key = warm_on.then(warm::key);
    // The warm cache entry's unpacked length, from its headers (before its body is read).
    let hint = std::cell::Cell::new(0u32);
    // An entry was handed over: if the den then never becomes ready, the entry goes too.
    let entry_handed = std::cell::Cell::new(false);
    let work = async {
        // Three things at once: the den page loads and says hello; the host fetches the assets;
        // the warm cache's entry is read and verified.
        let cached = async {
            match &key {
                Some(k) => warm::load(k, &hint).await,
                None => None,
            }
        };
        // The wasm goes to the den page as a stream right after `hello`, so that it compiles
        // while it downloads (Firefox compiles it in full: 400-500 ms); `boot` then has no wasm.
        let (wasm_tx, wasm_rx) = oneshot::channel::<JsValue>();
        let streamed = std::cell::Cell::new(false);
        let handed_over = async {
            let assets = async {
                let (wasm, stdlib, lock) = fetch_assets(opts, &progress, Some(wasm_tx)).await?;
                // The digests the assets are checked by start now: they copy the bytes, which
                // can then be handed over.
                let digests = (
                    warm::Digest::start(&Uint8Array::new(&wasm)),
                    warm::Digest::start(&Uint8Array::new(&stdlib)),
                );
                Ok::<_, JsValue>((wasm, stdlib, lock, digests, js::now_ms() - started))
            };
            let handshake = async {
                let conn = handshake(opts, isolation, hello_seen.clone()).await?;
                // No stream (no body to split, or the fetch failed): `boot` carries the bytes.
                if let Ok(stream) = wasm_rx.await {
                    streamed.set(send_wasm_stream(&conn, &stream));
                }
                Ok((conn, js::now_ms() - started))
            };
            // Whichever fails first is the opening's error, at once: a den page refused (a
            // redirect, isolation, another protocol) does not wait for Pyodide's download, whose
            // fetches are then aborted (and a failed download drops the den page).
            let ((wasm, stdlib, lock, digests, assets_ms), (conn, hello_ms)) =
                futures::future::try_join(assets, handshake).await?;
            // The den page compiles the wasm and starts its first worker while the warm cache
            // is read; that worker boots when `warm` comes.
            let booting = js::now_ms();
            let wasm = (!streamed.get()).then_some(wasm);
            let ready = send_boot(&conn, wasm, stdlib, &lock, opts, hint.get())?;
            Ok::<_, JsValue>((conn, ready, lock, digests, assets_ms, hello_ms, booting))
        };
        let (handed, snapshot) = futures::future::join(handed_over, cached).await;
        let (mut conn, ready, lock, digests, assets_ms, hello_ms, booting) = handed?;
        // The den boots while its assets are checked against Pyodide's pinned SHA-256; a
        // mismatch fails the opening at once, before the den is ready (no code runs on it).
        let verified = verify_assets(digests.0, digests.1, &lock, &opts.pyodide_url);
        let handed = snapshot.is_some();
        entry_handed.set(handed);
        let warm_ms = js::now_ms() - booting;
        let booted = async { Ok(send_warm(&conn, ready, snapshot, key.is_some()).await) };
        let ((), sent) = futures::future::try_join(verified, booted).await?;
        // A snapshot is taken from this den page (after `ready`) only when none was handed over
        // (a miss, or an entry of other assets), or the one handed over was refused (its
        // `ready`, sent before any user code ran, says so): after a hit, nothing it sends can
        // replace the entry. And only once its assets passed the check above.
        conn.shared.borrow_mut().warm_key = key.clone().filter(|_| !handed);
        if handed && sent.is_ok() && conn.warm.get() == "rejected" {
            // Dropped now (the den page may never offer a new one: closed before its maker
            // ends, say), and the new one is taken when it comes.
            if let Some(k) = &key {
                warm::drop_entry(k);
            }
            conn.shared.borrow_mut().warm_key = key.clone();
        }
        // A den whose interpreter failed to start from the entry drops it: the next visit makes
        // a new one. (Other failures, e.g. a load timeout, say nothing about the entry.)
        let boot_failed = |e: &JsValue| den_stage(e) == LoadStage::Pyodide;
        if let (true, Some(k)) = (handed && sent.as_ref().err().is_some_and(boot_failed), &key) {
            warm::drop_entry(k);
        }
        let (den_ms, boot_ms) = sent?;
        conn.stages = LoadStages {
            assets_ms,
            warm_ms,
            hello_ms,
            den_ms,
            boot_ms,
            ready_ms: js::now_ms() - booting,
        };
        Ok(conn)
    };
    let mut conn = match with_timeout(work, deadline).await {
        Some(Ok(conn)) => conn,
        Some(Err(e)) => return Err(e),
        None => {
            // A den page that never became ready from a warm entry may hang on it at every
            // visit: it is dropped (the next visit boots from scratch and makes a new one).
            if let (true, Some(k)) = (entry_handed.get(), &key) {
                warm::drop_entry(k);
            }
            let msg = if !hello_seen.get() {
                diagnose_den_page(&opts.den_url).await
            } else {
                format!(
                    "the den did not become ready within {} ms (loadTimeoutMs)",
                    foxden_core::decimal::show(deadline)
                )
            };
            return Err(load_error(crate::errors::LoadStage::Timeout, &msg));
        }
    };
    conn.load_ms = js::now_ms() - started;
    Ok(conn)
}

/// Creates the iframe and waits for the den page's "hello" (it answers once it has checked its
/// isolation). Under `auto`, an isolation failure of the manifest sandbox page falls back to
/// iframe-sandbox once; every other failure, and any failure of an explicit mode, is final.
pub(super) async fn handshake(
    opts: &RuntimeOptions,
    isolation: Isolation,
    hello_seen: Rc<std::cell::Cell<bool>>,
) -> Result<Connection, JsValue> {
    let conn = create(opts, isolation)?;
    // The iframe loads while the host checks that denUrl does not redirect; the port waits for both.
    refuse_redirect(&opts.den_url).await?;
    conn.gate.allow();
    let Some(hello) = first_word(&conn, &hello_seen).await? else {
        return Ok(conn);
    };
    let fallback = opts.isolation == Isolation::Auto
        && isolation == Isolation::ManifestSandbox
        && js::get_tag(&hello, "t", 16).as_deref() == Some(DenToHost::LoadError.as_str())
        && den_stage(&hello) == LoadStage::Isolation;
    if !fallback {
        return Err(load_error_from(&hello, isolation));
    }
    let first_problem = load_error_message(&hello);
    drop(conn);
    hello_seen.set(false);
    let conn = create(opts, Isolation::IframeSandbox)?;
    conn.gate.allow();
    let Some(hello) = first_word(&conn, &hello_seen).await? else {
        return Ok(conn);
    };
    let second = load_error_message(&hello);
    Err(load_error(
        den_stage(&hello),
        &format!(
            "isolation \"auto\": as a manifest sandbox page, {first_problem}; \
             with the iframe-sandbox fallback, {second}"
        ),
    ))
}

/// Waits for the den page's first message: `None` for a hello of this protocol, or the message
/// it sent instead (a load error, or anything else).
async fn first_word(
    conn: &Connection,
    hello_seen: &std::cell::Cell<bool>,
) -> Result<Option<JsValue>, JsValue> {
    let hello = wait_loader(conn).await;
    reloaded(conn)?;
    hello_seen.set(true);
    if js::get_tag(&hello, "t", 16).as_deref() == Some(DenToHost::Hello.as_str()) {
        check_protocol(&hello)?;
        return Ok(None);
    }
    Ok(Some(hello))
}

/// The den page must speak this build's protocol (a stale cached den.html would not).
pub(super) fn check_protocol(hello: &JsValue) -> Result<(), JsValue> {
    let got = get_f64(hello, "protocol");
    if got == Some(PROTOCOL_VERSION as f64) {
        return Ok(());
    }
    Err(load_error(crate::errors::LoadStage::Protocol,
        &format!(
            "the den page speaks protocol {}, this foxden.js speaks {PROTOCOL_VERSION}: serve the den/ folder of the same foxden build",
            got.map_or("(none)".to_owned(), foxden_core::decimal::show)
        ),
    ))
}

/// Hands the wasm's body to the den page as a stream (`wasm`, transferred); false if it could
/// not be posted (a browser that cannot transfer streams): then `boot` carries the bytes.
fn send_wasm_stream(conn: &Connection, stream: &JsValue) -> bool {
    let msg = obj(&[
        ("t", HostToDen::Wasm.as_str().into()),
        ("wasm", stream.clone()),
    ]);
    conn.link
        .post_message_with_transferable(&msg, &Array::of1(stream))
        .is_ok()
}

/// Hands the assets to the den page (it compiles the wasm at once, unless it came as a stream
/// in `wasm`: then `wasm` is `None`); the receiver gets its `ready` (or `load-error`).
pub(super) fn send_boot(
    conn: &Connection,
    wasm: Option<ArrayBuffer>,
    stdlib: ArrayBuffer,
    lock: &str,
    opts: &RuntimeOptions,
    snapshot_bytes: u32,
) -> Result<oneshot::Receiver<JsValue>, JsValue> {
    let (tx, rx) = oneshot::channel();
    conn.shared.borrow_mut().loader = Some(tx);
    let msg = obj(&[
        ("t", HostToDen::Boot.as_str().into()),
        ("wasm", wasm.clone().map_or(JsValue::NULL, JsValue::from)),
        ("stdlib", stdlib.clone().into()),
        ("lock", lock.into()),
        ("maxMemoryBytes", opts.max_memory_bytes.into()),
        ("standby", opts.standby.into()),
        ("packages", super::packages::to_js(&opts.packages).into()),
        ("snapshotBytes", snapshot_bytes.into()),
    ]);
    conn.link
        .post_message_with_transferable(
            &msg,
            &match &wasm {
                Some(w) => Array::of2(w, &stdlib),
                None => Array::of1(&stdlib),
            }
            .into(),
        )
        .map_err(|e| {
            // A den page reloaded meanwhile says so (not a message that failed).
            if let Err(r) = reloaded(conn) {
                return r;
            }
            load_error(
                crate::errors::LoadStage::Message,
                &format!(
                    "could not hand the assets to the den page: {}",
                    js::describe(&e)
                ),
            )
        })?;
    Ok(rx)
}

/// Hands the warm cache's snapshot (or null) to the den page and waits until Pyodide is ready:
/// (the den page's boot-to-ready ms, the worker's boot ms).
pub(super) async fn send_warm(
    conn: &Connection,
    ready: oneshot::Receiver<JsValue>,
    snapshot: Option<warm::Packed>,
    want_snapshot: bool,
) -> Result<(f64, f64), JsValue> {
    let (bytes, copies, total) = match &snapshot {
        Some(p) => (JsValue::from(&p.bytes), JsValue::from(&p.copies), p.total),
        None => (JsValue::NULL, JsValue::NULL, 0),
    };
    let msg = obj(&[
        ("t", HostToDen::Warm.as_str().into()),
        ("snapshot", bytes),
        ("copies", copies),
        ("snapshotBytes", total.into()),
        ("wantSnapshot", want_snapshot.into()),
    ]);
    let transfer = Array::new();
    if let Some(p) = &snapshot {
        transfer.push(&p.bytes.buffer());
    }
    conn.link
        .post_message_with_transferable(&msg, &transfer)
        .map_err(|e| {
            // A den page reloaded meanwhile says so (not a message that failed).
            if let Err(r) = reloaded(conn) {
                return r;
            }
            load_error(
                crate::errors::LoadStage::Message,
                &format!(
                    "could not hand the snapshot to the den page: {}",
                    js::describe(&e)
                ),
            )
        })?;
    let ready = ready.await.unwrap_or(JsValue::UNDEFINED);
    reloaded(conn)?;
    match js::get_tag(&ready, "t", 16).as_deref() {
        Some(t) if t == DenToHost::Ready.as_str() => {
            conn.interruptible
                .set(get(&ready, "interruptible").as_bool().unwrap_or(false));
            let warm = match js::get_tag(&ready, "warm", 16).as_deref() {
                _ if !want_snapshot => "off",
                Some("hit") => "hit",
                Some("rejected") => "rejected",
                _ => "miss",
            };
            conn.warm.set(warm);
            let ms = |k: &'static str| {
                get_f64(&ready, k)
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .unwrap_or(0.0)
            };
            Ok((ms("denMs"), ms("bootMs")))
        }
        _ => Err(load_error_from(&ready, conn.isolation)),
    }
}

/// The port is posted to whatever page the iframe ends up showing (an opaque origin cannot be
/// named as target), and the den's files go through it: a `denUrl` that redirects could hand
/// them to another page. Asked once before the iframe loads; a redirect is refused.
///
/// A browser refuses a `no-cors` fetch with `redirect: "manual"` to another origin, whatever
/// the answer: a den page on another origin is asked in `cors` mode, and one whose server does
/// not allow that cannot be checked, so it is refused (fail closed).
pub(super) async fn refuse_redirect(den_url: &str) -> Result<(), JsValue> {
    let Some(w) = web_sys::window() else {
        return Ok(());
    };
    let here = w.location().href().unwrap_or_default();
    let same_origin = web_sys::Url::new_with_base(den_url, &here)
        .is_ok_and(|u| w.location().origin().is_ok_and(|o| o == u.origin()));
    let init = web_sys::RequestInit::new();
    init.set_redirect(web_sys::RequestRedirect::Manual);
    init.set_mode(if same_origin {
        web_sys::RequestMode::NoCors
    } else {
        web_sys::RequestMode::Cors
    });
    init.set_credentials(web_sys::RequestCredentials::Omit);
    // Stopped if the opening is (its deadline, a cancel): dropping this future aborts it.
    let abort = super::assets::AbortOnDrop::new();
    init.set_signal(abort.signal().dyn_ref::<web_sys::AbortSignal>());
    let Ok(resp) = JsFuture::from(w.fetch_with_str_and_init(den_url, &init)).await else {
        if same_origin {
            return Ok(()); // the load itself will fail and be diagnosed
        }
        return Err(load_error(crate::errors::LoadStage::DenPage,
            &format!("cannot check that the den page {den_url} does not redirect: it is on another origin, whose server does not allow this page to ask (serve den.html with `Access-Control-Allow-Origin`, or from this page's origin); the host hands the den's files to whatever page loads"),
        ));
    };
    let resp: web_sys::Response = resp.unchecked_into();
    if resp.type_() == web_sys::ResponseType::Opaqueredirect || resp.redirected() {
        return Err(load_error(crate::errors::LoadStage::DenPage,
            &format!("the den page {den_url} redirects; serve den.html at its final URL (the host hands the den's files to whatever page loads)"),
        ));
    }
    Ok(())
}

/// How long the diagnosis of a den page that did not answer may ask its server.
const DIAGNOSE_MS: f64 = 2000.0;

pub(super) async fn diagnose_den_page(den_url: &str) -> String {
    // The iframe's own load cannot tell a 404 apart; ask the server once to explain the failure
    // (for 2 s at most: a server that never answers must not hold the error past the deadline).
    if let Some(w) = web_sys::window() {
        let abort = super::assets::AbortOnDrop::new();
        let init = web_sys::RequestInit::new();
        init.set_signal(abort.signal().dyn_ref::<web_sys::AbortSignal>());
        let asked = JsFuture::from(w.fetch_with_str_and_init(den_url, &init));
        if let Some(Ok(resp)) = crate::callback::with_timeout(asked, DIAGNOSE_MS).await {
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
pub(super) fn is_extension_page() -> bool {
    web_sys::window()
        .and_then(|w| w.location().protocol().ok())
        .map(|p| p.ends_with("-extension:"))
        .unwrap_or(false)
}

/// The stage a den page's `load-error` names (bounded: it may send anything; unknown is `Den`).
fn den_stage(msg: &JsValue) -> LoadStage {
    LoadStage::from_den_page(js::get_tag(msg, "stage", 32).as_deref())
}

pub(super) fn load_error_message(msg: &JsValue) -> String {
    wire::text(&get(msg, "message"), 4096)
        .map(|(s, _)| s)
        .unwrap_or_else(|| "the den page closed".into())
}

pub(super) fn load_error_from(msg: &JsValue, isolation: Isolation) -> JsValue {
    // The den page may send anything: an unknown stage is reported as "den", texts are bounded.
    let stage = den_stage(msg);
    let mut text = load_error_message(msg);
    if stage == crate::errors::LoadStage::Package {
        // The den page names the package its worker refused (bounded: it may send anything).
        let package = wire::text(&get(msg, "package"), 256)
            .map(|(s, _)| s)
            .unwrap_or_else(|| "(unnamed)".into());
        return crate::errors::load_error_for_package(&package, &text);
    }
    if stage == crate::errors::LoadStage::Isolation {
        text = format!("isolation check failed ({}): {text}", isolation.as_str());
    }
    load_error(stage, &text)
}

/// The den page that got `connect` was replaced while the den opened (its iframe moved in the
/// document, and so reloaded): the new page was never connected and answers nothing, so the
/// opening fails at once (not at its load timeout, which would also drop a good warm entry).
fn reloaded(conn: &Connection) -> Result<(), JsValue> {
    if !conn.is_lost() {
        return Ok(());
    }
    Err(load_error(
        crate::errors::LoadStage::Iframe,
        "the den page was reloaded while the den opened (its iframe was moved in the document)",
    ))
}

pub(super) async fn wait_loader(conn: &Connection) -> JsValue {
    let rx = conn.hello_rx.borrow_mut().take();
    match rx {
        Some(rx) => rx.await.unwrap_or(JsValue::UNDEFINED),
        None => JsValue::UNDEFINED,
    }
}

pub(super) fn create(opts: &RuntimeOptions, isolation: Isolation) -> Result<Connection, JsValue> {
    let window = web_sys::window()
        .ok_or_else(|| load_error(crate::errors::LoadStage::Iframe, "no window"))?;
    let document = window
        .document()
        .ok_or_else(|| load_error(crate::errors::LoadStage::Iframe, "no document"))?;
    let iframe: HtmlIFrameElement = document
        .create_element("iframe")
        .map_err(|e| load_error(crate::errors::LoadStage::Iframe, &js::describe(&e)))?
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
    let link = DenLink {
        frame: iframe.clone(),
        lost: Rc::default(),
    };
    let shared = Rc::new(RefCell::new(Shared::default()));
    let (tx, rx) = oneshot::channel();
    shared.borrow_mut().loader = Some(tx);
    shared.borrow_mut().link = Some(link.clone());
    let weak = Rc::downgrade(&shared);
    shared.borrow_mut().watchdog =
        Some(Ticker::new(WATCHDOG_TICK_MS, move || watchdog_tick(&weak)));
    // Every window message of this page reaches this listener; only the den iframe's are read
    // (other frames, and the page's own scripts, may post anything to the window).
    let s2 = shared.clone();
    let l2 = link.clone();
    let on_message = Listener::new(window.as_ref(), "message", move |ev| {
        let Ok(ev) = ev.dyn_into::<MessageEvent>() else {
            return;
        };
        if l2.sent(&ev) {
            on_den_message(&s2, ev);
        }
    });
    let gate = Rc::new(ConnectGate {
        link: link.clone(),
        posted: std::cell::Cell::new(false),
        loaded: std::cell::Cell::new(false),
        allowed: std::cell::Cell::new(false),
    });
    let g = gate.clone();
    let s3 = shared.clone();
    let on_load = Listener::new(iframe.as_ref(), "load", move |_| {
        if g.posted.get() {
            // The page that got `connect` was replaced (the iframe moved in the document, and
            // so reloaded): the new one was never connected and answers nothing. Posts fail from
            // now on, and the runs and resets waiting end at once, so the den opens a fresh
            // page instead of waiting for their timeouts.
            g.link.lost.set(true);
            s3.borrow_mut().cancel_pending();
            return;
        }
        g.loaded.set(true);
        g.try_post();
    });
    iframe.set_src(&opts.den_url);
    let parent: web_sys::Element = match &opts.container {
        Some(c) => c.clone(),
        None => document
            .body()
            .map(Into::into)
            .or_else(|| document.document_element())
            .ok_or_else(|| {
                load_error(
                    crate::errors::LoadStage::Iframe,
                    "the document has no body to hold the den iframe",
                )
            })?,
    };
    parent
        .append_child(&iframe)
        .map_err(|e| load_error(crate::errors::LoadStage::Iframe, &js::describe(&e)))?;
    crate::leak_check::connection_created();
    Ok(Connection {
        iframe,
        link,
        shared,
        _on_message: on_message,
        _on_load: on_load,
        gate,
        next_id: std::cell::Cell::new(0),
        hello_rx: RefCell::new(Some(rx)),
        isolation,
        load_ms: 0.0,
        stages: LoadStages::default(),
        interruptible: std::cell::Cell::new(false),
        warm: std::cell::Cell::new("off"),
    })
}
