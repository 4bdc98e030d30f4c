//! The `<foxden-den>` custom element.
//!
//! `js/element.js` is the class shim the browser needs; it forwards every lifecycle callback,
//! attribute change, property and method to a [`ElementHandle`]. Everything else is here:
//! attribute parsing and validation, opening and closing the den, DOM events, and the optional
//! `controls` UI in a shadow root.
//!
//! Ownership rules that keep a page leak-free:
//! - the handle never holds the element while it is out of the document and has no den: the
//!   shim passes the element in on each lifecycle call, so a removed element and its handle can be
//!   garbage-collected together;
//! - every DOM listener is a [`Listener`] held by the UI, dropped (and so removed) with it;
//! - every blob URL of a download link is an [`ObjectUrl`] that revokes itself on drop;
//! - a disconnection only closes the den after a microtask check, so a move (disconnect then
//!   connect in the same task) keeps the den and its Python variables.

use crate::callback::Listener;
use crate::den::{self, Den, DenOptions, EventSink};
use crate::errors::{den_error, option_error};
use crate::js::{self, get, get_f64, get_str, is_absent, obj};
use crate::runtime::{Progress, RuntimeOptions};
use crate::store::{StoreSpec, DEFAULT_DB};
use foxden_core::limits;
use futures::channel::oneshot;
use futures::future::{select, Either};
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, spawn_local, JsFuture};
use web_sys::{Element, HtmlElement, ShadowRoot};

/// The tag name.
pub const TAG: &str = "foxden-den";

#[wasm_bindgen(module = "/js/element.js")]
extern "C" {
    #[wasm_bindgen(js_name = defineFoxdenElement)]
    fn define_foxden_element(handle_class: &JsValue, spec: &JsValue) -> bool;
}

#[wasm_bindgen]
extern "C" {
    /// The DOM `Blob` (declared here: web-sys's Blob feature is not enabled for this crate).
    #[wasm_bindgen(js_name = Blob)]
    type JsBlob;
    #[wasm_bindgen(constructor, js_class = "Blob")]
    fn new(parts: &Array, options: &JsValue) -> JsBlob;
    #[wasm_bindgen(js_namespace = URL, js_name = createObjectURL)]
    fn create_object_url(blob: &JsBlob) -> String;
    #[wasm_bindgen(js_namespace = URL, js_name = revokeObjectURL)]
    fn revoke_object_url(url: &str);
}

/// How a reflected property maps to its attribute.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Number,
    Flag,
}

/// (attribute, property, kind). Every attribute is observed and reflected as a property.
const ATTRS: &[(&str, &str, Kind)] = &[
    ("name", "name", Kind::Text),
    ("store", "store", Kind::Text),
    ("timeout", "timeout", Kind::Number),
    ("den-url", "denUrl", Kind::Text),
    ("pyodide-url", "pyodideUrl", Kind::Text),
    ("isolation", "isolation", Kind::Text),
    ("max-output-bytes", "maxOutputBytes", Kind::Number),
    ("max-den-bytes", "maxDenBytes", Kind::Number),
    ("load-timeout", "loadTimeout", Kind::Number),
    ("controls", "controls", Kind::Flag),
    ("autorun", "autorun", Kind::Flag),
];

/// Methods the shim forwards (their Rust names are below, under `js_name`).
const METHODS: &[&str] = &[
    "run",
    "sh",
    "writeFile",
    "readFile",
    "readText",
    "deleteFile",
    "list",
    "snapshot",
    "restore",
    "fork",
    "reset",
    "close",
];

/// Defines `<foxden-den>` (once per page). foxden.js passes the handle class.
#[wasm_bindgen(js_name = __defineElement)]
pub fn define_element(handle_class: JsValue) -> bool {
    let attrs: Array = ATTRS.iter().map(|a| JsValue::from_str(a.0)).collect();
    let props: Array = ATTRS.iter().map(|a| JsValue::from_str(a.1)).collect();
    let methods: Array = METHODS.iter().map(|m| JsValue::from_str(m)).collect();
    let spec = obj(&[
        ("tag", TAG.into()),
        ("attributes", attrs.into()),
        ("properties", props.into()),
        ("methods", methods.into()),
    ]);
    define_foxden_element(&handle_class, &spec.into())
}

// ---------------------------------------------------------------------------------------------
// Attributes

/// The element's attributes, parsed and validated.
struct Config {
    /// Everything that needs a new den when it changes.
    key: String,
    den: DenOptions,
    timeout_ms: f64,
    max_output_bytes: f64,
}

/// A `DenError` (code "bad-option") whose `option` and `attribute` name the attribute.
fn attr_error(attr: &str, message: &str) -> JsValue {
    let e = option_error(attr, &format!("<foxden-den> attribute {attr}: {message}"));
    let _ = Reflect::set(&e, &"attribute".into(), &attr.into());
    e
}

/// Parses a whole number attribute in `min..=max`.
fn whole(
    value: Option<String>,
    attr: &str,
    default: f64,
    min: f64,
    max: f64,
) -> Result<f64, JsValue> {
    let Some(raw) = value else {
        return Ok(default);
    };
    let t = raw.trim();
    let n: f64 = t.parse().unwrap_or(f64::NAN);
    if t.is_empty() || !n.is_finite() || n.fract() != 0.0 || n < min || n > max {
        return Err(attr_error(
            attr,
            &format!("{raw:?} is not a whole number from {min} to {max}"),
        ));
    }
    Ok(n)
}

/// Parses `store`: `memory` (default), `idb`, or `idb:<dbName>`.
fn parse_store(value: Option<&str>) -> Result<StoreSpec, String> {
    match value.map(str::trim) {
        None | Some("") | Some("memory") => Ok(StoreSpec::Memory),
        Some("idb") => Ok(StoreSpec::Idb(DEFAULT_DB.into())),
        Some(s) => match s.strip_prefix("idb:") {
            Some(db) if !db.is_empty() => Ok(StoreSpec::Idb(db.into())),
            _ => Err(format!(
                "{s:?} is not a store: use \"memory\", \"idb\" or \"idb:<dbName>\""
            )),
        },
    }
}

/// Removes the common leading whitespace of the code's lines, and blank first/last lines, so
/// code indented to match the surrounding HTML runs as Python.
pub fn dedent(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |i| i + 1);
    let body = &lines[start..end];
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in body {
        // Leading spaces and tabs are one byte each, so cutting at a byte index is safe.
        let lead = l.len() - l.trim_start_matches([' ', '\t']).len();
        out.push_str(&l[indent.min(lead)..]);
        out.push('\n');
    }
    out
}

fn attr(el: &Element, name: &str) -> Option<String> {
    el.get_attribute(name)
}

/// Parses every attribute; on failure, one error per bad attribute (in attribute order).
fn parse_config(el: &Element) -> Result<Config, Vec<JsValue>> {
    let mut errors = Vec::new();
    let mut keep = |r: Result<f64, JsValue>, default: f64| -> f64 {
        r.unwrap_or_else(|e| {
            errors.push(e);
            default
        })
    };
    let name = attr(el, "name").unwrap_or_default();
    let name_error = match attr(el, "name") {
        None => Some(attr_error(
            "name",
            "a name is required: 1-64 ASCII letters, digits, '-' or '_'",
        )),
        Some(n) => limits::validate_den_name(&n)
            .err()
            .map(|e| attr_error("name", &e.to_string())),
    };
    let store = parse_store(attr(el, "store").as_deref());
    let timeout_ms = keep(
        whole(
            attr(el, "timeout"),
            "timeout",
            limits::DEFAULT_TIMEOUT_MS as f64,
            1.0,
            limits::MAX_TIMEOUT_MS as f64,
        ),
        0.0,
    );
    let max_output_bytes = keep(
        whole(
            attr(el, "max-output-bytes"),
            "max-output-bytes",
            limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
            0.0,
            1_073_741_824.0,
        ),
        0.0,
    );
    let max_den_bytes = keep(
        whole(
            attr(el, "max-den-bytes"),
            "max-den-bytes",
            limits::DEFAULT_MAX_DEN_BYTES as f64,
            0.0,
            4_294_967_296.0 * 16.0,
        ),
        0.0,
    );
    let load_timeout = keep(
        whole(
            attr(el, "load-timeout"),
            "load-timeout",
            limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
            1.0,
            3_600_000.0,
        ),
        limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
    );
    errors.extend(name_error);
    let store = store.unwrap_or_else(|m| {
        errors.push(attr_error("store", &m));
        StoreSpec::Memory
    });
    // The runtime options reuse iframeRuntime()'s checks; its errors are renamed to attributes.
    let ro = obj(&[("loadTimeoutMs", load_timeout.into())]);
    let mut runtime = None;
    for (a, key) in [
        ("den-url", "denUrl"),
        ("pyodide-url", "pyodideUrl"),
        ("isolation", "isolation"),
    ] {
        if let Some(v) = attr(el, a) {
            let _ = Reflect::set(&ro, &key.into(), &v.into());
        }
        // Checked one at a time so that each bad one gets its own error.
        let one = obj(&[("loadTimeoutMs", load_timeout.into())]);
        if let Some(v) = attr(el, a) {
            let _ = Reflect::set(&one, &key.into(), &v.into());
        }
        if let Err(e) = RuntimeOptions::from_js(&one) {
            errors.push(attr_error(a, &get_str(&e, "message").unwrap_or_default()));
        }
    }
    if errors.is_empty() {
        runtime = RuntimeOptions::from_js(&ro).ok();
    }
    let Some(runtime) = runtime.filter(|_| errors.is_empty()) else {
        let order = |e: &JsValue| {
            let a = get_str(e, "attribute");
            ATTRS.iter().position(|x| Some(x.0) == a.as_deref())
        };
        errors.sort_by_key(order);
        return Err(errors);
    };
    let key = format!(
        "{name}\n{store:?}\n{}\n{}\n{}\n{max_den_bytes}\n{load_timeout}",
        runtime.den_url,
        runtime.pyodide_url,
        runtime.isolation.as_str()
    );
    Ok(Config {
        key,
        den: DenOptions {
            name,
            runtime,
            store,
            max_den_bytes: max_den_bytes as u64,
            kill_grace_ms: limits::DEFAULT_KILL_GRACE_MS,
        },
        timeout_ms,
        max_output_bytes,
    })
}

/// The property value of a reflected attribute.
fn prop_value(el: &Element, prop: &str) -> JsValue {
    let Some(&(a, _, kind)) = ATTRS.iter().find(|x| x.1 == prop) else {
        return JsValue::UNDEFINED;
    };
    let raw = attr(el, a);
    match kind {
        Kind::Flag => raw.is_some().into(),
        Kind::Number => {
            let default = match a {
                "timeout" => limits::DEFAULT_TIMEOUT_MS as f64,
                "max-output-bytes" => limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
                "max-den-bytes" => limits::DEFAULT_MAX_DEN_BYTES as f64,
                _ => limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
            };
            raw.and_then(|r| r.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite())
                .unwrap_or(default)
                .into()
        }
        Kind::Text => match (a, raw) {
            (_, Some(v)) => v.into(),
            ("store", None) => "memory".into(),
            ("isolation", None) => "auto".into(),
            ("den-url", None) | ("pyodide-url", None) => {
                // The URL the den will use: next to foxden.js.
                RuntimeOptions::from_js(&JsValue::UNDEFINED)
                    .map(|r| {
                        if a == "den-url" {
                            r.den_url
                        } else {
                            r.pyodide_url
                        }
                    })
                    .unwrap_or_default()
                    .into()
            }
            _ => "".into(),
        },
    }
}

fn set_prop_value(el: &Element, prop: &str, v: &JsValue) -> Result<(), JsValue> {
    let Some(&(a, _, kind)) = ATTRS.iter().find(|x| x.1 == prop) else {
        return Ok(());
    };
    if kind == Kind::Flag {
        return el.toggle_attribute_with_force(a, v.is_truthy()).map(|_| ());
    }
    if is_absent(v) {
        return el.remove_attribute(a);
    }
    let s = match v.as_f64() {
        Some(n) => format!("{n}"),
        None => js_sys::JsString::from(v.clone()).into(),
    };
    el.set_attribute(a, &s)
}

// ---------------------------------------------------------------------------------------------
// State

/// The `ready` promise of the current (or next) opening.
struct Ready {
    promise: Promise,
    resolve: Option<Function>,
    reject: Option<Function>,
    rejected: bool,
}

impl Ready {
    fn new() -> Ready {
        let mut resolve = None;
        let mut reject = None;
        let promise = Promise::new(&mut |res, rej| {
            resolve = Some(res);
            reject = Some(rej);
        });
        // Marks the promise handled: a page that never reads `ready` gets no unhandled rejection
        // (the error is also an `error` event). The future's callbacks go away once it settles.
        drop(JsFuture::from(promise.clone()));
        Ready {
            promise,
            resolve,
            reject,
            rejected: false,
        }
    }
    fn settled(&self) -> bool {
        self.resolve.is_none()
    }
    /// Resolves (`ok`) or rejects the promise with `v`, unless it is already settled.
    fn settle(&mut self, ok: bool, v: &JsValue) {
        let (resolve, reject) = (self.resolve.take(), self.reject.take());
        self.rejected |= !ok && resolve.is_some();
        if let Some(f) = if ok {
            resolve
        } else {
            reject.filter(|_| resolve.is_some())
        } {
            let _ = f.call1(&JsValue::UNDEFINED, v);
        }
    }
}

/// The open den and the attributes it was opened with.
struct Live {
    den: Den,
    key: String,
}

/// An opening in progress; dropping it cancels the opening.
struct Opening {
    key: String,
    _cancel: oneshot::Sender<()>,
}

struct State {
    host: RefCell<Option<HtmlElement>>,
    connected: Cell<bool>,
    scheduled: Cell<bool>,
    live: RefCell<Option<Live>>,
    opening: RefCell<Option<Opening>>,
    /// The key of the den `close()` closed: not reopened until the attributes or the
    /// connection change.
    closed_key: RefCell<Option<String>>,
    ready: RefCell<Ready>,
    generation: Cell<u32>,
    run_defaults: Cell<(f64, f64)>,
    ui: RefCell<Option<Rc<Ui>>>,
    runs_active: Cell<u32>,
}

/// The Rust side of one `<foxden-den>` element.
#[wasm_bindgen(js_name = FoxdenElementHandle)]
pub struct ElementHandle {
    state: Rc<State>,
}

impl Default for ElementHandle {
    fn default() -> Self {
        Self::new()
    }
}

fn closed_error(state: &State) -> JsValue {
    let name = state
        .host
        .borrow()
        .as_ref()
        .and_then(|h| h.get_attribute("name"))
        .unwrap_or_default();
    den_error(
        "closed",
        &format!("<foxden-den name={name:?}> has no open den (it is not in the document, was closed, or its attributes are invalid)"),
    )
}

impl State {
    fn emit(&self, kind: &str, detail: &JsValue) {
        let host = self.host.borrow().clone();
        if let Some(h) = host {
            let init = web_sys::CustomEventInit::new();
            init.set_bubbles(true);
            init.set_composed(true);
            init.set_detail(detail);
            if let Ok(ev) = web_sys::CustomEvent::new_with_event_init_dict(kind, &init) {
                let _ = h.dispatch_event(&ev);
            }
        }
    }

    fn emit_error(&self, error: &JsValue) {
        let detail = obj(&[("error", error.clone())]);
        if let Some(a) = get_str(error, "attribute") {
            let _ = Reflect::set(&detail, &"attribute".into(), &a.into());
        }
        self.emit("error", &detail.into());
        self.ui_status(&format!("Error: {}", js::describe(error)));
    }

    fn ui(&self) -> Option<Rc<Ui>> {
        self.ui.borrow().clone()
    }

    fn ui_status(&self, text: &str) {
        if let Some(ui) = self.ui() {
            ui.status.set_text_content(Some(text));
        }
    }

    fn den(&self) -> Option<Den> {
        self.live.borrow().as_ref().map(|l| l.den.share())
    }

    /// Closes the den and cancels an opening.
    fn shut(&self) {
        self.opening.borrow_mut().take();
        let live = self.live.borrow_mut().take();
        if let Some(l) = live {
            l.den.close_impl();
        }
        self.runs_active.set(0);
    }
}

/// Schedules a reconcile in a microtask (one per batch of changes).
fn schedule(state: &Rc<State>) {
    if state.scheduled.replace(true) {
        return;
    }
    // A change after a failed opening gets a fresh `ready` for the next attempt.
    if state.ready.borrow().rejected {
        *state.ready.borrow_mut() = Ready::new();
    }
    let s = state.clone();
    spawn_local(async move {
        s.scheduled.set(false);
        reconcile(&s);
    });
}

/// Brings the den and the UI in line with the element's attributes and connection.
fn reconcile(state: &Rc<State>) {
    if !state.connected.get() {
        // Removed (and not re-inserted in the same task): close, drop the UI and the element.
        state.shut();
        state.ui.borrow_mut().take();
        state.closed_key.borrow_mut().take();
        let err = closed_error(state);
        state.ready.borrow_mut().settle(false, &err);
        state.host.borrow_mut().take();
        return;
    }
    let Some(host) = state.host.borrow().clone() else {
        return;
    };
    sync_ui(state, &host);
    let config = match parse_config(&host) {
        Ok(c) => c,
        Err(errors) => {
            // The den (if any) keeps running with its last valid attributes.
            if state.live.borrow().is_none() && state.opening.borrow().is_none() {
                state.ready.borrow_mut().settle(false, &errors[0]);
            }
            for e in &errors {
                state.emit_error(e);
            }
            return;
        }
    };
    state
        .run_defaults
        .set((config.timeout_ms, config.max_output_bytes));
    let current = state
        .live
        .borrow()
        .as_ref()
        .map(|l| l.key.clone())
        .or_else(|| state.opening.borrow().as_ref().map(|o| o.key.clone()));
    if current.as_deref() == Some(config.key.as_str()) {
        return;
    }
    if state.closed_key.borrow().as_deref() == Some(config.key.as_str()) {
        return;
    }
    state.closed_key.borrow_mut().take();
    start_open(state, config);
}

fn start_open(state: &Rc<State>, config: Config) {
    // A memory den that only changes runtime options keeps its files (not its variables).
    let snapshot = {
        let live = state.live.borrow();
        live.as_ref()
            .filter(|l| {
                l.den.inner.opts.name == config.den.name
                    && l.den.inner.opts.store == StoreSpec::Memory
                    && config.den.store == StoreSpec::Memory
            })
            .and_then(|l| l.den.snapshot_impl().ok())
            .and_then(|b| js::data_to_bytes(&b))
    };
    state.shut();
    if state.ready.borrow().settled() {
        *state.ready.borrow_mut() = Ready::new();
    }
    let generation = state.generation.get().wrapping_add(1);
    state.generation.set(generation);
    let (tx, rx) = oneshot::channel::<()>();
    *state.opening.borrow_mut() = Some(Opening {
        key: config.key.clone(),
        _cancel: tx,
    });
    state.ui_status("Loading Python…");
    if let Some(ui) = state.ui() {
        ui.show_progress(0.0, 0.0);
        ui.set_run_enabled(false);
    }
    let weak = Rc::downgrade(state);
    let progress: Progress = {
        let weak = weak.clone();
        Rc::new(move |loaded, total| {
            if let Some(s) = weak.upgrade().filter(|s| s.generation.get() == generation) {
                s.emit(
                    "progress",
                    &obj(&[("loaded", loaded.into()), ("total", total.into())]).into(),
                );
                if let Some(ui) = s.ui() {
                    ui.show_progress(loaded, total);
                }
            }
        })
    };
    let sink: EventSink = {
        let weak = weak.clone();
        Rc::new(move |kind: &str, detail: JsValue| {
            if let Some(s) = weak.upgrade().filter(|s| s.generation.get() == generation) {
                on_den_event(&s, kind, &detail);
            }
        })
    };
    let name = config.den.name.clone();
    let key = config.key;
    spawn_local(async move {
        let open = Box::pin(den::open(config.den, snapshot, progress, Some(sink)));
        let result = match select(open, rx).await {
            Either::Left((r, _)) => r,
            Either::Right((_, open)) => {
                // Cancelled while loading: dropping the future removes the iframe and port;
                // the name it claimed on its first poll is ours to free.
                drop(open);
                den::forget_name(&name);
                return;
            }
        };
        let Some(s) = weak.upgrade() else {
            if let Ok(d) = result {
                d.close_impl();
            }
            return;
        };
        if s.generation.get() != generation {
            if let Ok(d) = result {
                d.close_impl();
            }
            return;
        }
        s.opening.borrow_mut().take();
        match result {
            Ok(den) => {
                let info = den.info();
                *s.live.borrow_mut() = Some(Live { den, key });
                s.ready.borrow_mut().settle(true, &info);
                s.emit("ready", &obj(&[("info", info.clone())]).into());
                s.ui_status(&format!(
                    "Ready ({})",
                    get_str(&info, "isolation").unwrap_or_default()
                ));
                if let Some(ui) = s.ui() {
                    ui.hide_progress();
                    ui.set_run_enabled(true);
                    refresh_files(&s, &ui);
                }
                let autorun = s
                    .host
                    .borrow()
                    .as_ref()
                    .is_some_and(|h| h.has_attribute("autorun"));
                if autorun {
                    run_script(&s);
                }
            }
            Err(e) => {
                s.ready.borrow_mut().settle(false, &e);
                if let Some(ui) = s.ui() {
                    ui.hide_progress();
                }
                s.emit_error(&e);
            }
        }
    });
}

/// Den events ("run", "output", "file-change") become DOM events and UI updates.
fn on_den_event(state: &Rc<State>, kind: &str, detail: &JsValue) {
    state.emit(kind, detail);
    let Some(ui) = state.ui() else {
        return;
    };
    match kind {
        "output" => {
            let stream = get_str(detail, "stream").unwrap_or_default();
            ui.append_output(&get_str(detail, "text").unwrap_or_default(), &stream);
        }
        "run" => {
            if get_str(detail, "phase").as_deref() == Some("start") {
                state.runs_active.set(state.runs_active.get() + 1);
                ui.output.set_text_content(None);
                ui.set_busy(true);
                state.ui_status("Running…");
            } else {
                state
                    .runs_active
                    .set(state.runs_active.get().saturating_sub(1));
                let r = get(detail, "result");
                let err = get(&r, "error");
                if is_absent(&err) {
                    // Like the Python prompt, a None result is not echoed.
                    if let Some(v) = get_str(&r, "result").filter(|v| v != "None") {
                        ui.append_output(&format!("→ {v}\n"), "result");
                    }
                    let ms = get_f64(&r, "durationMs").unwrap_or(0.0);
                    state.ui_status(&format!("Done in {ms:.0} ms"));
                } else {
                    let tb = get_str(&err, "traceback").unwrap_or_default();
                    let text = if tb.is_empty() {
                        format!(
                            "{}: {}\n",
                            get_str(&err, "type").unwrap_or_default(),
                            get_str(&err, "message").unwrap_or_default()
                        )
                    } else {
                        tb
                    };
                    ui.append_output(&text, "stderr");
                    state.ui_status(&format!(
                        "Failed ({}): {}",
                        get_str(&err, "kind").unwrap_or_default(),
                        get_str(&err, "type").unwrap_or_default()
                    ));
                }
                ui.set_busy(state.runs_active.get() > 0);
            }
        }
        "file-change" => refresh_files(state, &ui),
        _ => {}
    }
}

/// The code of the `<script type="text/x-python">` child, dedented.
fn script_code(host: &Element) -> Option<String> {
    let script = host
        .query_selector(":scope > script[type='text/x-python']")
        .ok()??;
    Some(dedent(&script.text_content().unwrap_or_default()))
}

/// Runs the script child (Run button and `autorun`).
fn run_script(state: &Rc<State>) {
    let Some(host) = state.host.borrow().clone() else {
        return;
    };
    let Some(code) = script_code(&host) else {
        state.ui_status("Nothing to run: add a <script type=\"text/x-python\"> child");
        return;
    };
    let Some(den) = state.den() else {
        return;
    };
    let opts = run_opts(state, &JsValue::UNDEFINED);
    let s = state.clone();
    spawn_local(async move {
        // The outcome reaches the page as the "run" event; a rejection here (a closed den) too.
        if let Err(e) = den.run_impl(code, opts).await {
            s.emit_error(&e);
        }
    });
}

/// Run options with the element's `timeout` and `max-output-bytes` as defaults.
fn run_opts(state: &State, opts: &JsValue) -> JsValue {
    let out = Object::new();
    if opts.is_object() {
        let _ = Object::assign(&out, opts.unchecked_ref());
    } else if !is_absent(opts) {
        return opts.clone();
    }
    let (timeout, max_output) = state.run_defaults.get();
    if is_absent(&get(&out, "timeoutMs")) {
        let _ = Reflect::set(&out, &"timeoutMs".into(), &timeout.into());
    }
    if is_absent(&get(&out, "maxOutputBytes")) {
        let _ = Reflect::set(&out, &"maxOutputBytes".into(), &max_output.into());
    }
    out.into()
}

// ---------------------------------------------------------------------------------------------
// The controls UI

/// A blob URL that revokes itself on drop.
struct ObjectUrl(String);

impl Drop for ObjectUrl {
    fn drop(&mut self) {
        revoke_object_url(&self.0);
    }
}

const UI_HTML: &str = r#"<style>
:host { display: block; font: var(--foxden-font, 14px/1.45 system-ui, sans-serif); color: var(--foxden-fg, #1c1b22); }
:host([hidden]) { display: none; }
.panel { display: grid; gap: .6em; padding: var(--foxden-padding, .8em); background: var(--foxden-bg, #fbfbfe); border: 1px solid var(--foxden-border, #cfcfd8); border-radius: var(--foxden-radius, 8px); }
.bar { display: flex; align-items: center; gap: .75em; flex-wrap: wrap; }
button { font: inherit; padding: .35em 1.1em; border-radius: var(--foxden-radius, 8px); border: 1px solid var(--foxden-accent, #0b57d0); background: var(--foxden-accent, #0b57d0); color: var(--foxden-accent-fg, #fff); cursor: pointer; }
button:disabled, button[aria-disabled="true"] { opacity: .5; cursor: default; }
button:focus-visible, input:focus-visible, a:focus-visible, pre:focus-visible { outline: 3px solid var(--foxden-focus, #f9a825); outline-offset: 2px; }
progress { width: 100%; accent-color: var(--foxden-accent, #0b57d0); }
pre { margin: 0; padding: .6em; overflow: auto; white-space: pre-wrap; font: var(--foxden-mono-font, 13px/1.4 ui-monospace, monospace); border-radius: calc(var(--foxden-radius, 8px) / 2); }
.code { background: var(--foxden-code-bg, #f0f0f4); }
.output { min-height: 3em; max-height: var(--foxden-output-max-height, 20em); background: var(--foxden-output-bg, #1c1b22); color: var(--foxden-output-fg, #f0f0f4); }
.stderr { color: var(--foxden-stderr, #ff8a80); }
.result { color: var(--foxden-result, #a5d6a7); }
.drop { border: 2px dashed var(--foxden-border, #cfcfd8); border-radius: var(--foxden-radius, 8px); padding: .8em; text-align: center; }
.drop.over { border-color: var(--foxden-accent, #0b57d0); background: var(--foxden-drop-bg, #e8f0fe); }
ul { margin: 0; padding-left: 1.2em; }
a { color: var(--foxden-link, #0b57d0); }
</style>
<div class="panel" part="panel">
<div class="bar" part="toolbar"><button type="button" id="run" part="run-button" disabled>Run</button><span id="status" part="status" role="status" aria-live="polite">Loading Python…</span></div>
<progress id="progress" part="progress" max="1" value="0" aria-label="Loading Python"></progress>
<pre id="code" class="code" part="code" aria-label="Python code" tabindex="0"></pre>
<div id="drop" class="drop" part="dropzone"><label part="file-label">Add files to /drop: <input id="file" type="file" multiple part="file-input"></label> <span>or drop them here</span></div>
<pre id="output" class="output" part="output" role="log" aria-live="polite" aria-label="Output" tabindex="0"></pre>
<ul id="files" part="files" aria-label="Files"></ul>
</div>
<slot></slot>"#;

struct Ui {
    root: ShadowRoot,
    run: HtmlElement,
    status: HtmlElement,
    progress: HtmlElement,
    output: HtmlElement,
    files: HtmlElement,
    urls: RefCell<Vec<ObjectUrl>>,
    listeners: RefCell<Vec<Listener>>,
}

impl Drop for Ui {
    fn drop(&mut self) {
        // Listeners and blob URLs go by their own Drop; the shadow root keeps only the slot.
        self.listeners.borrow_mut().clear();
        self.urls.borrow_mut().clear();
        self.root.set_inner_html("<slot></slot>");
    }
}

fn by_id(root: &ShadowRoot, id: &str) -> Option<HtmlElement> {
    root.get_element_by_id(id)?.dyn_into().ok()
}

impl Ui {
    fn build(host: &HtmlElement) -> Option<Ui> {
        let root = match host.shadow_root() {
            Some(r) => r,
            None => host
                .attach_shadow(&web_sys::ShadowRootInit::new(web_sys::ShadowRootMode::Open))
                .ok()?,
        };
        root.set_inner_html(UI_HTML);
        Some(Ui {
            run: by_id(&root, "run")?,
            status: by_id(&root, "status")?,
            progress: by_id(&root, "progress")?,
            output: by_id(&root, "output")?,
            files: by_id(&root, "files")?,
            root,
            urls: RefCell::new(Vec::new()),
            listeners: RefCell::new(Vec::new()),
        })
    }

    /// Disabled while there is no den to run in.
    fn set_run_enabled(&self, on: bool) {
        let _ = self.run.toggle_attribute_with_force("disabled", !on);
    }

    /// While a run goes on the button stays focusable (a disabled button would drop the
    /// keyboard focus) and says it is busy; clicks are ignored.
    fn set_busy(&self, busy: bool) {
        let _ = self
            .run
            .set_attribute("aria-disabled", if busy { "true" } else { "false" });
    }

    fn show_progress(&self, loaded: f64, total: f64) {
        let p = &self.progress;
        p.set_hidden(false);
        let _ = p.set_attribute("max", &format!("{}", total.max(1.0)));
        let _ = p.set_attribute("value", &format!("{}", loaded.min(total.max(1.0))));
        let pct = if total > 0.0 {
            (loaded / total * 100.0).floor()
        } else {
            0.0
        };
        let _ = p.set_attribute(
            "aria-valuetext",
            &format!("{pct}% of the Python runtime loaded"),
        );
    }

    fn hide_progress(&self) {
        self.progress.set_hidden(true);
    }

    fn append_output(&self, text: &str, stream: &str) {
        let Some(doc) = self.root.owner_document() else {
            return;
        };
        if let Ok(span) = doc.create_element("span") {
            span.set_class_name(stream);
            span.set_text_content(Some(text));
            let _ = self.output.append_child(&span);
            self.output.set_scroll_top(self.output.scroll_height());
        }
    }
}

/// Builds or removes the UI to match the `controls` attribute.
fn sync_ui(state: &Rc<State>, host: &HtmlElement) {
    let want = host.has_attribute("controls");
    let have = state.ui.borrow().is_some();
    if want == have {
        if let (true, Some(ui)) = (want, state.ui()) {
            show_code(&ui, host);
        }
        return;
    }
    if !want {
        state.ui.borrow_mut().take();
        return;
    }
    let Some(ui) = Ui::build(host).map(Rc::new) else {
        return;
    };
    show_code(&ui, host);
    let weak = Rc::downgrade(state);
    let mut ls = Vec::new();
    {
        let w = weak.clone();
        ls.push(Listener::new(ui.run.as_ref(), "click", move |_| {
            if let Some(s) = w.upgrade().filter(|s| s.runs_active.get() == 0) {
                run_script(&s);
            }
        }));
    }
    if let Some(input) = by_id(&ui.root, "file") {
        let w = weak.clone();
        let inp = input.clone();
        ls.push(Listener::new(input.as_ref(), "change", move |_| {
            if let Some(s) = w.upgrade() {
                add_files(&s, get(&inp, "files"));
                let _ = Reflect::set(&inp, &"value".into(), &"".into());
            }
        }));
    }
    if let Some(drop_zone) = by_id(&ui.root, "drop") {
        for kind in ["dragenter", "dragover"] {
            let z = drop_zone.clone();
            ls.push(Listener::new(drop_zone.as_ref(), kind, move |e| {
                e.prevent_default();
                let _ = z.class_list().add_1("over");
            }));
        }
        let z = drop_zone.clone();
        ls.push(Listener::new(drop_zone.as_ref(), "dragleave", move |_| {
            let _ = z.class_list().remove_1("over");
        }));
        let z = drop_zone.clone();
        let w = weak.clone();
        ls.push(Listener::new(drop_zone.as_ref(), "drop", move |e| {
            e.prevent_default();
            let _ = z.class_list().remove_1("over");
            if let Some(s) = w.upgrade() {
                add_files(&s, get(&get(&e, "dataTransfer"), "files"));
            }
        }));
    }
    *ui.listeners.borrow_mut() = ls;
    let live = state.live.borrow().is_some();
    ui.set_run_enabled(live);
    ui.set_busy(state.runs_active.get() > 0);
    if live {
        ui.hide_progress();
        ui.status.set_text_content(Some("Ready"));
        refresh_files(state, &ui);
    } else if state.opening.borrow().is_none() {
        ui.hide_progress();
        ui.status.set_text_content(Some("Not loaded"));
    }
    *state.ui.borrow_mut() = Some(ui);
}

fn show_code(ui: &Ui, host: &Element) {
    if let Some(code) = by_id(&ui.root, "code") {
        match script_code(host) {
            Some(c) => {
                code.set_hidden(false);
                code.set_text_content(Some(c.trim_end()));
            }
            None => code.set_hidden(true),
        }
    }
}

/// Writes dropped or picked files to /drop/<name>.
fn add_files(state: &Rc<State>, files: JsValue) {
    let n = get_f64(&files, "length").unwrap_or(0.0) as u32;
    let list: Vec<JsValue> = (0..n)
        .map(|i| Reflect::get_u32(&files, i).unwrap_or(JsValue::UNDEFINED))
        .collect();
    if list.is_empty() {
        return;
    }
    let s = state.clone();
    spawn_local(async move {
        for f in list {
            let name = get_str(&f, "name").unwrap_or_default();
            let buf = match Reflect::get(&f, &"arrayBuffer".into())
                .ok()
                .and_then(|m| m.dyn_into::<Function>().ok())
                .and_then(|m| m.call0(&f).ok())
            {
                Some(p) => JsFuture::from(Promise::from(p)).await,
                None => Err(den_error("bad-data", "not a file")),
            };
            let result = match (buf, s.den()) {
                (Ok(b), Some(den)) => {
                    den.write_impl(format!("/drop/{name}"), Uint8Array::new(&b).into())
                        .await
                }
                (Err(e), _) => Err(e),
                (_, None) => Err(closed_error(&s)),
            };
            match result {
                Ok(_) => s.ui_status(&format!("Added /drop/{name}")),
                Err(e) => s.emit_error(&e),
            }
        }
    });
}

/// Redraws the file list with download links.
fn refresh_files(state: &Rc<State>, ui: &Ui) {
    let Some(den) = state.den() else {
        return;
    };
    let Ok(list) = den.list_impl() else {
        return;
    };
    let Some(doc) = ui.root.owner_document() else {
        return;
    };
    ui.files.set_text_content(None);
    let mut urls = Vec::new();
    for item in Array::from(&list).iter() {
        let path = get_str(&item, "path").unwrap_or_default();
        let size = get_f64(&item, "size").unwrap_or(0.0);
        let Ok(bytes) = den.read_impl(path.clone(), JsValue::UNDEFINED) else {
            continue;
        };
        let blob = JsBlob::new(
            &Array::of1(&bytes),
            &obj(&[("type", "application/octet-stream".into())]).into(),
        );
        let url = ObjectUrl(create_object_url(&blob));
        let (Ok(li), Ok(a)) = (doc.create_element("li"), doc.create_element("a")) else {
            continue;
        };
        let _ = li.set_attribute("part", "file");
        let _ = a.set_attribute("part", "file-link");
        let _ = a.set_attribute("href", &url.0);
        let base = path.rsplit('/').next().unwrap_or("file");
        let _ = a.set_attribute("download", base);
        a.set_text_content(Some(&path));
        let _ = li.append_child(&a);
        let _ = li.append_with_str_1(&format!(" ({size} bytes)"));
        let _ = ui.files.append_child(&li);
        urls.push(url);
    }
    *ui.urls.borrow_mut() = urls;
}

// ---------------------------------------------------------------------------------------------
// The handle

async fn live_den(state: Rc<State>) -> Result<Den, JsValue> {
    if let Some(d) = state.den() {
        return Ok(d);
    }
    if state.opening.borrow().is_some() {
        let p = state.ready.borrow().promise.clone();
        JsFuture::from(p).await?;
        return state.den().ok_or_else(|| closed_error(&state));
    }
    Err(closed_error(&state))
}

#[wasm_bindgen(js_class = FoxdenElementHandle)]
impl ElementHandle {
    #[wasm_bindgen(constructor)]
    pub fn new() -> ElementHandle {
        ElementHandle {
            state: Rc::new(State {
                host: RefCell::new(None),
                connected: Cell::new(false),
                scheduled: Cell::new(false),
                live: RefCell::new(None),
                opening: RefCell::new(None),
                closed_key: RefCell::new(None),
                ready: RefCell::new(Ready::new()),
                generation: Cell::new(0),
                run_defaults: Cell::new((
                    limits::DEFAULT_TIMEOUT_MS as f64,
                    limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
                )),
                ui: RefCell::new(None),
                runs_active: Cell::new(0),
            }),
        }
    }

    /// `connectedCallback`.
    pub fn connected(&self, el: HtmlElement) {
        self.state.connected.set(true);
        *self.state.host.borrow_mut() = Some(el);
        schedule(&self.state);
    }

    /// `disconnectedCallback`: the den closes in a microtask unless the element is back by then.
    pub fn disconnected(&self, _el: HtmlElement) {
        self.state.connected.set(false);
        schedule(&self.state);
    }

    /// `attributeChangedCallback`.
    #[wasm_bindgen(js_name = attributeChanged)]
    pub fn attribute_changed(&self, _el: HtmlElement, _name: String) {
        if self.state.connected.get() {
            schedule(&self.state);
        }
    }

    /// A reflected property's value.
    #[wasm_bindgen(js_name = getProp)]
    pub fn get_prop(&self, el: HtmlElement, prop: &str) -> JsValue {
        prop_value(&el, prop)
    }

    /// Sets a reflected property (that is, its attribute).
    #[wasm_bindgen(js_name = setProp)]
    pub fn set_prop(&self, el: HtmlElement, prop: &str, value: JsValue) -> Result<(), JsValue> {
        set_prop_value(&el, prop, &value)
    }

    /// The `ready` promise.
    pub fn ready(&self) -> Promise {
        self.state.ready.borrow().promise.clone()
    }

    /// `info` of the open den, or null.
    pub fn info(&self) -> JsValue {
        self.state.den().map_or(JsValue::NULL, |d| d.info())
    }

    pub fn run(&self, code: String, opts: JsValue) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move {
            let d = live_den(s.clone()).await?;
            d.run_impl(code, run_opts(&s, &opts)).await
        })
    }

    pub fn sh(&self, command: String) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.sh_impl(command) })
    }

    #[wasm_bindgen(js_name = writeFile)]
    pub fn write_file(&self, path: String, data: JsValue) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.write_impl(path, data).await })
    }

    #[wasm_bindgen(js_name = readFile)]
    pub fn read_file(&self, path: String, opts: JsValue) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.read_impl(path, opts) })
    }

    #[wasm_bindgen(js_name = readText)]
    pub fn read_text(&self, path: String) -> Promise {
        self.read_file(path, "utf-8".into())
    }

    #[wasm_bindgen(js_name = deleteFile)]
    pub fn delete_file(&self, path: String) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.delete_impl(path).await })
    }

    pub fn list(&self) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.list_impl() })
    }

    pub fn snapshot(&self) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.snapshot_impl() })
    }

    pub fn restore(&self, bytes: JsValue) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.restore_impl(bytes).await })
    }

    pub fn fork(&self, opts: JsValue) -> Promise {
        let s = self.state.clone();
        future_to_promise(
            async move { live_den(s).await?.fork_impl(opts).await.map(JsValue::from) },
        )
    }

    pub fn reset(&self) -> Promise {
        let s = self.state.clone();
        future_to_promise(async move { live_den(s).await?.reset_impl().await })
    }

    /// Closes the den; it reopens when the element is re-inserted or a den attribute changes.
    pub fn close(&self) -> Promise {
        let s = &self.state;
        let key = s
            .live
            .borrow()
            .as_ref()
            .map(|l| l.key.clone())
            .or_else(|| s.opening.borrow().as_ref().map(|o| o.key.clone()));
        if key.is_some() {
            *s.closed_key.borrow_mut() = key;
        }
        s.shut();
        let err = closed_error(s);
        s.ready.borrow_mut().settle(false, &err);
        if let Some(ui) = s.ui() {
            ui.set_run_enabled(false);
            ui.hide_progress();
            ui.urls.borrow_mut().clear();
            ui.files.set_text_content(None);
        }
        s.ui_status("Closed");
        Promise::resolve(&JsValue::UNDEFINED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_strips_html_indentation() {
        let code = "\n    import csv\n    for r in rows:\n        print(r)\n  \n";
        assert_eq!(dedent(code), "import csv\nfor r in rows:\n    print(r)\n");
        assert_eq!(dedent(""), "");
        assert_eq!(dedent("x = 1"), "x = 1\n");
    }

    #[test]
    fn store_values() {
        assert_eq!(parse_store(None), Ok(StoreSpec::Memory));
        assert_eq!(parse_store(Some("memory")), Ok(StoreSpec::Memory));
        assert_eq!(
            parse_store(Some("idb")),
            Ok(StoreSpec::Idb(DEFAULT_DB.into()))
        );
        assert_eq!(
            parse_store(Some("idb:notes")),
            Ok(StoreSpec::Idb("notes".into()))
        );
        assert!(parse_store(Some("idb:")).is_err());
        assert!(parse_store(Some("disk")).is_err());
    }
}
