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
//!
//! The module is split by concern: [`config`] parses and reflects attributes, [`lifecycle`]
//! opens and closes the den as the element is connected, changed and removed, [`ui`] is the
//! `controls` shadow-root UI, [`editor`] its code editor and lesson buttons, [`lesson`] shared
//! environments, setup and check scripts, and this file forwards the element's methods to the
//! den.

mod config;
mod editor;
mod input;
mod lazy;
mod lesson;
mod lifecycle;
mod ui;

use crate::den::Den;
use crate::js;
use crate::js::promise;
use config::*;
use foxden_core::limits;
use js_sys::{Array, Promise};
use lifecycle::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use ui::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::HtmlElement;

/// The tag name.
pub const TAG: &str = "foxden-den";

#[wasm_bindgen(module = "/js/element.js")]
extern "C" {
    #[wasm_bindgen(js_name = defineFoxdenElement)]
    pub(crate) fn define_foxden_element(handle_class: &JsValue, spec: &JsValue) -> bool;
    /// The element's `runtime` property, `[adapter or null, its id]` (the id is the same for the
    /// same object, 0 for none). Kept on the JavaScript side, so Rust holds no reference to it.
    #[wasm_bindgen(js_name = runtimeOf)]
    pub(crate) fn runtime_of(el: &web_sys::Element) -> Array;
}

#[wasm_bindgen]
extern "C" {
    /// The DOM `Blob` (declared here: web-sys's Blob feature is not enabled for this crate).
    #[wasm_bindgen(js_name = Blob)]
    pub(crate) type JsBlob;
    #[wasm_bindgen(constructor, js_class = "Blob")]
    pub(crate) fn new(parts: &Array, options: &JsValue) -> JsBlob;
    #[wasm_bindgen(js_namespace = URL, js_name = createObjectURL)]
    pub(crate) fn create_object_url(blob: &JsBlob) -> String;
    #[wasm_bindgen(js_namespace = URL, js_name = revokeObjectURL)]
    pub(crate) fn revoke_object_url(url: &str);
}

// ---------------------------------------------------------------------------------------------
// The handle

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

/// Stops the element's run in flight (the Stop button, `stop()`): true if there was one (its
/// end then says it was stopped). In a shared environment the den may be running another
/// element's code: that is not this element's to stop.
pub(crate) fn stop_run(state: &State) -> bool {
    // Its runs still waiting for the den's turn (behind another cell's run) end at once.
    let queued = std::mem::take(&mut *state.queued.borrow_mut());
    let mut stopped = false;
    for tx in queued {
        stopped |= tx.send(()).is_ok();
    }
    let Some(den) = state.den() else {
        return stopped;
    };
    let member = state.lease.borrow().as_ref().map(|l| l.member);
    let running = foxden_core::lesson::RunTag::decode(den.run_tag()).map(|t| t.member);
    (member.is_some() && running == member && den.stop_impl()) || stopped
}

pub(crate) async fn live_den(state: Rc<State>) -> Result<Den, JsValue> {
    // The den is needed now: a lazy element that waits (or may, after the reconcile already
    // scheduled) opens it, in the reconcile this schedules, which the branches below wait for.
    let waiting = state.phase.borrow().name() == foxden_core::phase::PhaseName::Waiting;
    if state.connected.get() && (waiting || state.scheduled.get()) {
        lazy::wake(&state);
    }
    // Attributes changed in this task and not reconciled yet (`el.name = "b"; el.run(…)`): the
    // call is for what they bring, a new den or the same one.
    if state.scheduled.get() && !state.ready.borrow().settled() {
        let p = state.ready.borrow().promise.clone();
        JsFuture::from(p).await?;
        return state.den().ok_or_else(|| closed_error(&state));
    }
    if let Some(d) = state.den() {
        return Ok(d);
    }
    let phase = state.phase.borrow().name();
    if matches!(
        phase,
        foxden_core::phase::PhaseName::Opening | foxden_core::phase::PhaseName::Waiting
    ) {
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
                name_seen: RefCell::new(String::new()),
                connected: Cell::new(false),
                scheduled: Cell::new(false),
                phase: RefCell::new(ElementPhase::default()),
                ready: RefCell::new(Ready::new()),
                generation: Cell::new(0),
                run_defaults: Cell::new((
                    limits::DEFAULT_TIMEOUT_MS as f64,
                    limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
                )),
                ui: RefCell::new(None),
                runs_active: Cell::new(0),
                lesson_busy: Cell::new(0),
                script_running: Cell::new(None),
                queued: RefCell::new(Vec::new()),
                reported: RefCell::new(None),
                failure: RefCell::new(None),
                carried: RefCell::new(None),
                input: Default::default(),
                lease: RefCell::new(None),
                code: RefCell::new(None),
                closing: RefCell::new(None),
                woken: Cell::new(false),
                changed_away: Cell::new(false),
                watch: RefCell::new(None),
            }),
        }
    }

    /// `connectedCallback`.
    pub fn connected(&self, el: HtmlElement) {
        self.state.connected.set(true);
        *self.state.host.borrow_mut() = Some(el);
        // Inserted again after its den closed (a removal that was not a move), or changed while
        // away: a fresh `ready` at once (if the last one settled), for the den this opens.
        let detached = self.state.phase.borrow().name() == foxden_core::phase::PhaseName::Detached;
        let renew = self.state.changed_away.take() || detached;
        schedule(&self.state, renew);
    }

    /// `disconnectedCallback`: the den closes in a microtask unless the element is back by then.
    pub fn disconnected(&self, _el: HtmlElement) {
        self.state.connected.set(false);
        schedule(&self.state, false);
    }

    /// `attributeChangedCallback`.
    #[wasm_bindgen(js_name = attributeChanged)]
    pub fn attribute_changed(&self, el: HtmlElement, name: String) {
        if name == "name" {
            *self.state.name_seen.borrow_mut() = el.get_attribute("name").unwrap_or_default();
        }
        if self.state.connected.get() {
            schedule(&self.state, true);
        } else {
            self.state.changed_away.set(true);
        }
    }

    /// Checks a value for the `runtime` property: an adapter (`{ start, run, close, reset? }`,
    /// as `openDen({ runtime })` takes) or null; throws for anything else. element.js keeps it.
    #[wasm_bindgen(js_name = checkRuntime)]
    pub fn check_runtime(&self, value: JsValue) -> Result<(), JsValue> {
        if js::is_absent(&value) || crate::den::adapter::Adapter::from_js(&value)?.is_some() {
            return Ok(());
        }
        Err(js_sys::TypeError::new(
            "runtime must be an adapter with start(), run(request) and close(), or null: the element's iframe runtime is set by its attributes (den-url, pyodide-url, isolation, …)",
        )
        .into())
    }

    /// The `runtime` property changed: a different adapter (or none) reopens the den on it.
    #[wasm_bindgen(js_name = runtimeChanged)]
    pub fn runtime_changed(&self) {
        if self.state.connected.get() {
            schedule(&self.state, true);
        } else {
            self.state.changed_away.set(true);
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

    /// `run(code, opts)`; without code (undefined or null), the element's own code, then the
    /// exercise's check. Setup code runs first, once per interpreter.
    pub fn run(&self, code: JsValue, opts: JsValue) -> Promise {
        let s = self.state.clone();
        // The element's own code as it is at the call (not when the run gets its turn).
        let own = js::is_absent(&code)
            .then(|| lesson::current_code(&s))
            .flatten();
        promise(async move {
            let code = if js::is_absent(&code) {
                None
            } else {
                Some(code.as_string().ok_or_else(|| {
                    crate::errors::option_error("code", "run(code): code must be a string")
                })?)
            };
            lesson::lesson_run(s, code, own, opts).await
        })
    }

    /// The `code` property: what the Run button and `run()` without code execute.
    pub fn code(&self) -> JsValue {
        editor::get_code(&self.state)
    }

    #[wasm_bindgen(js_name = setCode)]
    pub fn set_code(&self, code: JsValue) {
        editor::set_code(&self.state, &code)
    }

    pub fn sh(&self, command: JsValue) -> Promise {
        let s = self.state.clone();
        let command = crate::js::string_arg(&command, "command");
        promise(async move { live_den(s).await?.sh_impl(command?) })
    }

    #[wasm_bindgen(js_name = writeFile)]
    pub fn write_file(&self, path: JsValue, data: JsValue) -> Promise {
        let s = self.state.clone();
        let path = crate::js::path_arg(&path, "path");
        // The bytes as they are now (the den may still be opening).
        let data = crate::js::copy_now(&data);
        promise(async move { live_den(s).await?.write_impl(path?, data).await })
    }

    #[wasm_bindgen(js_name = readFile)]
    pub fn read_file(&self, path: JsValue, opts: JsValue) -> Promise {
        let s = self.state.clone();
        let path = crate::js::path_arg(&path, "path");
        promise(async move { live_den(s).await?.read_impl(path?, opts) })
    }

    #[wasm_bindgen(js_name = readText)]
    pub fn read_text(&self, path: JsValue) -> Promise {
        self.read_file(path, "utf-8".into())
    }

    #[wasm_bindgen(js_name = deleteFile)]
    pub fn delete_file(&self, path: JsValue) -> Promise {
        let s = self.state.clone();
        let path = crate::js::path_arg(&path, "path");
        promise(async move { live_den(s).await?.delete_impl(path?).await })
    }

    pub fn list(&self, path: JsValue) -> Promise {
        let s = self.state.clone();
        promise(async move { live_den(s).await?.list_impl(&path) })
    }

    pub fn snapshot(&self) -> Promise {
        let s = self.state.clone();
        promise(async move { live_den(s).await?.snapshot_impl() })
    }

    pub fn restore(&self, bytes: JsValue) -> Promise {
        let s = self.state.clone();
        let bytes = crate::js::copy_now(&bytes);
        promise(async move { live_den(s).await?.restore_impl(bytes).await })
    }

    pub fn fork(&self, opts: JsValue) -> Promise {
        let s = self.state.clone();
        promise(async move { live_den(s).await?.fork_impl(opts).await.map(JsValue::from) })
    }

    pub fn reset(&self) -> Promise {
        let s = self.state.clone();
        // The setup scripts run again before the next run: the setup log sees the new
        // interpreter (Den::interpreter).
        promise(async move { live_den(s).await?.reset_impl().await })
    }

    /// Stops the run in flight, as the Stop button does. Resolves true if a run was in flight.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn stop(&self) -> Promise {
        Promise::resolve(&JsValue::from(stop_run(&self.state)))
    }

    /// Closes the den; it reopens when the element is re-inserted or a den attribute changes.
    /// Resolves once its name is free again.
    pub fn close(&self) -> Promise {
        let s = &self.state;
        // A den that was open or opening is remembered as closed: the same attributes do not
        // reopen it. Other phases stay as they are. With a reconcile still to come (an
        // insertion or a change in this task), what it would open is what is closed: the
        // element stays closed until a later change.
        // (Only a key the reconcile would open: for the same key it keeps the phase, which
        // `closed()` then decides, e.g. a failed opening stays failed.)
        let host = s.host.borrow().clone();
        let pending = match (s.scheduled.get() && s.connected.get(), host) {
            (true, Some(h)) => parse_config(&h).ok().map(|c| c.key),
            _ => None,
        };
        let current = s.phase.borrow().key().map(str::to_owned);
        let next = match pending {
            Some(key) if current.as_deref() != Some(key.as_str()) => {
                Some(foxden_core::phase::Phase::Closed { key })
            }
            _ => s.phase.borrow().closed(),
        };
        match next {
            Some(closed) => s.shut(closed),
            None => {
                let same = std::mem::take(&mut *s.phase.borrow_mut());
                s.shut(same);
            }
        }
        s.carried.borrow_mut().take();
        s.watch.borrow_mut().take();
        let err = closed_error(s);
        s.ready.borrow_mut().gone(&err);
        if let Some(ui) = s.ui() {
            ui.set_run_enabled(false);
            ui.hide_progress();
            ui.urls.borrow_mut().clear();
            ui.files.set_text_content(None);
        }
        s.ui_status("Closed");
        // Settles once the den's name (and an IndexedDB den's lock) is free.
        let closing = s.closing.borrow().clone();
        closing.unwrap_or_else(|| Promise::resolve(&JsValue::UNDEFINED))
    }
}
