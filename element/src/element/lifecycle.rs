//! Opening and closing the den as the element is connected, changed and removed; den events
//! become DOM events.

use super::*;
use crate::den::{self, Den, DenEvent, EventSink};
use crate::errors::den_error;
use crate::js::{self, get, get_str, is_absent, obj};
use crate::store::StoreSpec;
use foxden_core::phase::{self, Phase, PhaseName, Step};
use futures::channel::oneshot;
use futures::future::{select, Either};
use js_sys::{Function, Object, Promise, Reflect};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

// ---------------------------------------------------------------------------------------------
// State

/// The `ready` promise of the current (or next) opening.
pub(crate) struct Ready {
    pub(crate) promise: Promise,
    pub(crate) resolve: Option<Function>,
    pub(crate) reject: Option<Function>,
    pub(crate) rejected: bool,
}

impl Ready {
    pub(crate) fn new() -> Ready {
        let mut resolve = None;
        let mut reject = None;
        let promise = Promise::new(&mut |res, rej| {
            resolve = Some(res);
            reject = Some(rej);
        });
        // Marks the promise handled: a page that never reads `ready` gets no unhandled rejection
        // (the error is also an `error` event). One handler for every element's promises, kept
        // for the page's life: a promise that never settles (an element never connected) holds
        // nothing of its own.
        thread_local! {
            static IGNORE: wasm_bindgen::closure::Closure<dyn FnMut(JsValue)> =
                wasm_bindgen::closure::Closure::new(|_: JsValue| {});
        }
        IGNORE.with(|f| {
            let _ = promise.catch(f);
        });
        Ready {
            promise,
            resolve,
            reject,
            rejected: false,
        }
    }
    pub(crate) fn settled(&self) -> bool {
        self.resolve.is_none()
    }
    /// The den is gone (closed, or the element removed): `ready` rejects with `v`, a new promise
    /// if it had resolved (an `await el.ready` after `close()` must not see the old den).
    pub(crate) fn gone(&mut self, v: &JsValue) {
        if self.settled() && !self.rejected {
            *self = Ready::new();
        }
        self.settle(false, v);
    }
    /// Resolves (`ok`) or rejects the promise with `v`, unless it is already settled.
    pub(crate) fn settle(&mut self, ok: bool, v: &JsValue) {
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

/// An opening in progress; dropping it cancels the opening.
pub(crate) type Opening = oneshot::Sender<()>;

/// The element's phase: detached, invalid, failed, opening, live or closed (see
/// `foxden_core::phase`, where the decisions are made and tested).
pub(crate) type ElementPhase = Phase<Opening, Den>;

pub(crate) struct State {
    pub(crate) host: RefCell<Option<HtmlElement>>,
    /// The `name` attribute, as `attributeChangedCallback` reports it (also before the element
    /// was first connected, and after it left), for error messages.
    pub(crate) name_seen: RefCell<String>,
    pub(crate) connected: Cell<bool>,
    pub(crate) scheduled: Cell<bool>,
    pub(crate) phase: RefCell<ElementPhase>,
    pub(crate) ready: RefCell<Ready>,
    pub(crate) generation: Cell<u32>,
    pub(crate) run_defaults: Cell<(f64, f64)>,
    pub(crate) ui: RefCell<Option<Rc<Ui>>>,
    pub(crate) runs_active: Cell<u32>,
    /// Runs through the element (`lesson_run`) under way, hidden setup and check included.
    pub(crate) lesson_busy: Cell<u32>,
    /// The Run button's (or Ctrl-Enter's) run is under way, hidden setup and check included:
    /// the element's `generation` when it started (a run of an earlier den blocks nothing).
    pub(crate) script_running: Cell<Option<u32>>,
    /// Runs through the element still waiting for the den's turn (another cell's run holds
    /// it): Stop ends them at once ([`super::stop_run`]).
    pub(crate) queued: RefCell<Vec<futures::channel::oneshot::Sender<()>>>,
    /// The attribute errors last reported (as `error` events), while the attributes are bad.
    pub(crate) reported: RefCell<Option<Vec<String>>>,
    /// Why the last opening failed (while the phase is `Failed`).
    pub(crate) failure: RefCell<Option<JsValue>>,
    /// A memory den's files (and its name) on their way to the den that replaces it, until
    /// one opens with them: an opening that fails or is replaced by another does not lose them.
    pub(crate) carried: RefCell<Option<(String, foxden_core::FileMap)>>,
    pub(crate) input: super::input::InputDesk,
    /// The element's use of its den's event router (and of its `env`), while it has a den.
    pub(crate) lease: RefCell<Option<super::lesson::Lease>>,
    /// Code set through the `code` property while no editor shows it.
    pub(crate) code: RefCell<Option<String>>,
    /// What closing the previous den returned, for the element's `close()` (an IndexedDB den
    /// frees its name and lock once a write in flight ended; the next opening waits for that
    /// in `den::open`).
    pub(crate) closing: RefCell<Option<Promise>>,
    /// Something asked for the den (the viewport, a method, the Run button) or one was opened:
    /// `loading="lazy"` no longer waits.
    pub(crate) woken: Cell<bool>,
    /// An attribute changed while the element was out of the document: its next insertion
    /// gets a fresh `ready` (for what the change brings).
    pub(crate) changed_away: Cell<bool>,
    /// The viewport watch of a lazy element while it waits (phase `Waiting`).
    pub(crate) watch: RefCell<Option<super::lazy::Watch>>,
}

pub(crate) fn closed_error(state: &State) -> JsValue {
    let name = state.name_seen.borrow().clone();
    den_error(crate::errors::DenErrorCode::Closed,
        &format!("<foxden-den name={name:?}> has no open den (it is not in the document, was closed, or its attributes are invalid)"),
    )
}

impl State {
    pub(crate) fn emit(&self, kind: &str, detail: &JsValue) {
        self.dispatch(kind, detail, false);
    }

    /// Dispatches a DOM event; returns whether a listener called `preventDefault()`.
    pub(crate) fn dispatch(&self, kind: &str, detail: &JsValue, cancelable: bool) -> bool {
        let host = self.host.borrow().clone();
        if let Some(h) = host {
            let init = web_sys::CustomEventInit::new();
            init.set_bubbles(true);
            init.set_composed(true);
            init.set_cancelable(cancelable);
            init.set_detail(detail);
            if let Ok(ev) = web_sys::CustomEvent::new_with_event_init_dict(kind, &init) {
                let _ = h.dispatch_event(&ev);
                return ev.default_prevented();
            }
        }
        false
    }

    pub(crate) fn emit_error(&self, error: &JsValue) {
        let detail = obj(&[("error", error.clone())]);
        if let Some(a) = get_str(error, "attribute") {
            let _ = Reflect::set(&detail, &"attribute".into(), &a.into());
        }
        self.emit("error", &detail.into());
        self.ui_status(&format!("Error: {}", js::describe(error)));
    }

    pub(crate) fn ui(&self) -> Option<Rc<Ui>> {
        self.ui.borrow().clone()
    }

    /// A run of the element's is under way (Stop on, Run off).
    pub(crate) fn busy(&self) -> bool {
        self.runs_active.get() > 0 || self.lesson_busy.get() > 0
    }

    pub(crate) fn ui_status(&self, text: &str) {
        if let Some(ui) = self.ui() {
            ui.status.set_text_content(Some(text));
        }
    }

    pub(crate) fn den(&self) -> Option<Den> {
        self.phase.borrow().den().map(Den::share)
    }

    /// Moves to `next`, closing the den (if one was open) and cancelling an opening (if one
    /// was in progress: dropping it cancels it).
    pub(crate) fn shut(&self, next: ElementPhase) {
        let old = self.phase.replace(next);
        // An opening still in flight (its task may already be queued) must not go live now.
        self.generation.set(self.generation.get().wrapping_add(1));
        // A shared environment's den is closed by its last element (dropping the lease).
        let shared = self
            .lease
            .borrow()
            .as_ref()
            .is_some_and(|l| l.env.is_some());
        if let Phase::Live { den, .. } = old {
            if !shared {
                *self.closing.borrow_mut() = Some(den.close_impl());
            }
        }
        // A request this element was to answer (its listeners or its input line) gets end of
        // input: nobody here can answer it now.
        self.input
            .cancel(false, "the element that was to answer input() left the den");
        if let Some(ui) = self.ui() {
            ui.stop_asking();
        }
        self.lease.borrow_mut().take();
        // The den's run events end with it: nothing is running any more (a run through the
        // element still going on the den it left does not make the next one busy).
        self.runs_active.set(0);
        self.lesson_busy.set(0);
        if let Some(ui) = self.ui() {
            ui.set_busy(false);
        }
    }
}

/// Schedules a reconcile in a microtask (one per batch of changes). An attribute change gets
/// a fresh `ready` at once if the last one settled, for what the change brings (a move does
/// not: the element stays as it was): `el.name = "b"; await el.ready` waits for den `b`, and
/// a change that keeps the den open resolves it with that den's info in the reconcile.
pub(crate) fn schedule(state: &Rc<State>, attribute: bool) {
    if attribute && state.ready.borrow().settled() {
        *state.ready.borrow_mut() = Ready::new();
    }
    if state.scheduled.replace(true) {
        return;
    }
    let s = state.clone();
    crate::callback::spawn_local(Box::pin(async move {
        s.scheduled.set(false);
        reconcile(&s);
    }));
}

/// Brings the den and the UI in line with the element's attributes and connection; what to do
/// is decided by `foxden_core::phase::reconcile`. A `ready` renewed by a change that kept the
/// open den resolves with it.
pub(crate) fn reconcile(state: &Rc<State>) {
    reconcile_phase(state);
    if !state.ready.borrow().settled() {
        if let Some(den) = state.den() {
            state.ready.borrow_mut().settle(true, &den.info());
        }
    }
}

fn reconcile_phase(state: &Rc<State>) {
    let host = state.host.borrow().clone();
    let connected = state.connected.get() && host.is_some();
    let config = match host.as_ref().filter(|_| connected) {
        Some(h) => {
            sync_ui(state, h);
            Some(parse_config(h))
        }
        None => None,
    };
    let key = match &config {
        Some(Ok(c)) => Some(c.key.as_str()),
        _ => None,
    };
    // A lazy element waits, unless something asked for its den already, or its shared
    // environment is open (or opening): then it joins at once, with its setup code.
    let wait = match &config {
        Some(Ok(c)) => {
            c.lazy && !state.woken.get() && !c.env.as_deref().is_some_and(super::lesson::env_exists)
        }
        _ => false,
    };
    let step = phase::reconcile(&state.phase.borrow(), connected, key, wait);
    reconcile_step(state, step, host, config);
    // The viewport is watched only while the element waits (dropped here, in a microtask, never
    // from the observer's own callback).
    if state.phase.borrow().name() != PhaseName::Waiting {
        state.watch.borrow_mut().take();
    }
}

fn reconcile_step(
    state: &Rc<State>,
    step: Step,
    host: Option<HtmlElement>,
    config: Option<Result<Config, Vec<JsValue>>>,
) {
    match step {
        Step::Detach => {
            // Removed (and not re-inserted in the same task): close, drop the UI and the element.
            state.shut(Phase::Detached);
            state.carried.borrow_mut().take();
            // The reader's edits stay the code (`code`, and the editor if it is put back).
            let text = state.ui().and_then(|ui| ui.editor_text());
            if let Some(h) = state.host.borrow().clone() {
                super::editor::keep_edited_text(state, &h, text);
            }
            state.ui.borrow_mut().take();
            let err = closed_error(state);
            state.ready.borrow_mut().gone(&err);
            state.host.borrow_mut().take();
            state.reported.borrow_mut().take();
        }
        Step::Invalid {
            reject_ready,
            to_invalid,
        } => {
            let Some(Err(errors)) = config else { return };
            if to_invalid {
                *state.phase.borrow_mut() = Phase::Invalid;
                // (A waiting lazy element had them enabled: there is nothing to run now.)
                if let Some(ui) = state.ui() {
                    ui.set_run_enabled(false);
                    ui.hide_progress();
                }
            }
            // The same errors again (a move, a change of another attribute): reported already;
            // a `ready` renewed by the change rejects with them again.
            let said: Vec<String> = errors.iter().map(crate::js::describe).collect();
            if state.reported.borrow().as_ref() == Some(&said) {
                if reject_ready {
                    state.ready.borrow_mut().settle(false, &errors[0]);
                }
                return;
            }
            *state.reported.borrow_mut() = Some(said);
            if reject_ready {
                // A new error gets a new `ready` (the last one may have rejected already).
                if state.ready.borrow().settled() {
                    *state.ready.borrow_mut() = Ready::new();
                }
                state.ready.borrow_mut().settle(false, &errors[0]);
            }
            for e in &errors {
                state.emit_error(e);
            }
        }
        Step::Keep | Step::Open => {
            let Some(Ok(config)) = config else { return };
            state.reported.borrow_mut().take();
            // A closed element keeps its den closed: a `ready` renewed by a change since says so.
            if step == Step::Keep && matches!(*state.phase.borrow(), Phase::Closed { .. }) {
                let err = closed_error(state);
                state.ready.borrow_mut().settle(false, &err);
            }
            // A failed opening is not tried again for a move or another attribute: a `ready`
            // renewed by the change rejects with its error again.
            if step == Step::Keep && matches!(*state.phase.borrow(), Phase::Failed { .. }) {
                let failure = state.failure.borrow().clone();
                if let Some(err) = failure {
                    state.ready.borrow_mut().settle(false, &err);
                }
            }
            state
                .run_defaults
                .set((config.timeout_ms, config.max_output_bytes));
            if step == Step::Open {
                start_open(state, config);
            }
        }
        Step::Wait => {
            let Some(Ok(config)) = config else { return };
            state.reported.borrow_mut().take();
            state
                .run_defaults
                .set((config.timeout_ms, config.max_output_bytes));
            // A den of earlier attributes (if any) closes; `ready` waits for the den to open.
            state.shut(Phase::Waiting { key: config.key });
            if state.ready.borrow().settled() {
                *state.ready.borrow_mut() = Ready::new();
            }
            if state.watch.borrow().is_none() {
                if let Some(h) = &host {
                    *state.watch.borrow_mut() = super::lazy::watch(state, h);
                }
            }
            if let Some(env) = &config.env {
                super::lazy::wait_in_env(env, state);
            }
            show_waiting(state);
        }
    }
}

/// The UI of a lazy element that waits: Run is enabled (it opens the den, then runs).
pub(crate) fn show_waiting(state: &State) {
    if let Some(ui) = state.ui() {
        ui.hide_progress();
        ui.set_run_enabled(true);
        ui.status
            .set_text_content(Some("Python loads when this is shown or run"));
    }
}

pub(crate) fn start_open(state: &Rc<State>, config: Config) {
    // Once a den opened, a lazy element behaves as an eager one.
    state.woken.set(true);
    // A memory den that only changes runtime options keeps its files (not its variables).
    let env = config.env.clone();
    let memory = env.is_none() && config.den.store == StoreSpec::Memory;
    let live = {
        let phase = state.phase.borrow();
        phase
            .den()
            .filter(|d| {
                memory
                    && d.inner.opts.name == config.den.name
                    && d.inner.opts.store == StoreSpec::Memory
            })
            .and_then(|d| d.files_now())
    };
    // Or those of an opening that failed or was replaced (carried until one succeeds).
    let carried = state.carried.borrow_mut().take();
    let files = live.or_else(|| {
        carried
            .filter(|(name, _)| memory && *name == config.den.name)
            .map(|(_, files)| files)
    });
    *state.carried.borrow_mut() = files.as_ref().map(|f| (config.den.name.clone(), f.clone()));
    let (tx, rx) = oneshot::channel::<()>();
    state.shut(Phase::Opening {
        key: config.key.clone(),
        opening: tx,
    });
    if state.ready.borrow().settled() {
        *state.ready.borrow_mut() = Ready::new();
    }
    let generation = state.generation.get().wrapping_add(1);
    state.generation.set(generation);
    state.ui_status("Loading Python…");
    if let Some(ui) = state.ui() {
        ui.show_progress(0.0, 0.0);
        ui.set_run_enabled(false);
    }
    let weak = Rc::downgrade(state);
    let key = config.key;
    if let Some(env) = env {
        // Lazy elements of this environment that wait join it now.
        super::lazy::wake_env(&env);
        // A shared environment: the first element opens the den, the others wait for it.
        let (lease, wait) = super::lesson::join_env(&env, config.den, state);
        *state.lease.borrow_mut() = Some(lease);
        crate::callback::spawn_local(Box::pin(async move {
            let result = match select(wait, rx).await {
                Either::Left((r, _)) => r.unwrap_or_else(|_| {
                    Err(den_error(
                        crate::errors::DenErrorCode::Closed,
                        "the shared environment closed before it opened",
                    ))
                }),
                // Cancelled: the lease went with the phase.
                Either::Right(_) => return,
            };
            if let Some(s) = weak.upgrade().filter(|s| s.generation.get() == generation) {
                opened(&s, key, result);
            }
        }));
        return;
    }
    let lease = super::lesson::Lease::own(state);
    let progress = lease.router.progress();
    let sink: EventSink = lease.router.sink();
    let router = lease.router.clone();
    *state.lease.borrow_mut() = Some(lease);
    // den::open first waits for a close of the same name still settling (the previous den's).
    crate::callback::spawn_local(Box::pin(async move {
        let open = Box::pin(den::open(config.den, files, progress, Some(sink)));
        let result = match select(open, rx).await {
            Either::Left((r, _)) => r,
            // Cancelled while loading: dropping the future removes the iframe and port, and
            // frees the name if it claimed it.
            Either::Right(_) => return,
        };
        let Some(s) = weak.upgrade() else {
            if let Ok(d) = result {
                let _ = d.close_impl();
            }
            return;
        };
        if s.generation.get() != generation {
            if let Ok(d) = result {
                let _ = d.close_impl();
            }
            return;
        }
        if let Ok(d) = &result {
            router.attach(d);
        }
        opened(&s, key, result);
    }));
}

/// The den opened (or did not): the element goes live (or failed).
fn opened(s: &Rc<State>, key: String, result: Result<Den, JsValue>) {
    {
        match result {
            Ok(den) => {
                let info = den.info();
                s.carried.borrow_mut().take();
                *s.phase.borrow_mut() = Phase::Live { key, den };
                s.ready.borrow_mut().settle(true, &info);
                let generation = s.generation.get();
                s.emit("ready", &obj(&[("info", info.clone())]).into());
                // A listener closed (or removed) the element: its UI says so already.
                if s.generation.get() != generation {
                    return;
                }
                s.ui_status(&format!(
                    "Ready ({})",
                    get_str(&info, "isolation").unwrap_or_default()
                ));
                if let Some(ui) = s.ui() {
                    ui.hide_progress();
                    ui.set_run_enabled(true);
                    refresh_files(s, &ui);
                }
                let autorun = s
                    .host
                    .borrow()
                    .as_ref()
                    .is_some_and(|h| h.has_attribute("autorun"));
                if autorun {
                    run_script(s);
                }
            }
            Err(e) => {
                *s.phase.borrow_mut() = Phase::Failed { key };
                *s.failure.borrow_mut() = Some(e.clone());
                s.ready.borrow_mut().settle(false, &e);
                if let Some(ui) = s.ui() {
                    ui.hide_progress();
                }
                s.emit_error(&e);
            }
        }
    }
}

/// Den events ("run", "output", "file-change") become DOM events and UI updates.
pub(crate) fn on_den_event(state: &Rc<State>, event: &DenEvent) {
    if let DenEvent::Input {
        reply,
        prompt,
        run_id,
    } = event
    {
        // Cancelable: preventDefault() promises an answer later through detail.respond.
        let detail = event.detail();
        let _ = Reflect::set(
            &detail,
            &"respond".into(),
            &state.input.take(reply, *run_id),
        );
        if state.dispatch(event.kind(), &detail, true) {
            reply.defer();
        } else if let (false, Some(ui)) = (reply.answered(), state.ui()) {
            // Nobody on the page answered: the controls ask the reader in the input line.
            reply.defer();
            state.input.ask_in_line();
            ui.ask_input(prompt);
        }
        return;
    }
    if let DenEvent::RunEnd { id, .. } = event {
        // A request of this run can no longer be answered: the input line stops asking.
        if let Some(ui) = state.ui() {
            ui.stop_asking();
        }
        state.input.run_ended(*id);
    }
    let generation = state.generation.get();
    if let DenEvent::RunStart { .. } = event {
        // Cancelable: preventDefault() keeps the code from running. The run is posted stopped,
        // and ends as a run stopped before it started (its files delivered, variables kept).
        // The den is taken first: a listener may also close the element (a shared den stays open
        // for the others, and the run must still not start).
        let den = state.den();
        if state.dispatch(event.kind(), &event.detail(), true) {
            if let Some(den) = den {
                den.stop_impl();
            }
        }
    } else {
        state.emit(event.kind(), &event.detail());
    }
    // A listener closed (or removed) the element: it counts no run and its UI says "Closed".
    if state.generation.get() != generation {
        return;
    }
    // Counted with or without controls (they may come back during the run).
    match event {
        DenEvent::RunStart { .. } => state.runs_active.set(state.runs_active.get() + 1),
        DenEvent::RunEnd { .. } => state
            .runs_active
            .set(state.runs_active.get().saturating_sub(1)),
        _ => {}
    }
    let Some(ui) = state.ui() else {
        return;
    };
    match event {
        DenEvent::Output { stream, text, .. } => ui.append_output(text, stream),
        DenEvent::Display { display, .. } => ui.append_display(display),
        DenEvent::Input { .. } => {}
        DenEvent::RunStart { .. } => {
            ui.clear_output();
            ui.set_busy(true);
            state.ui_status("Running…");
        }
        DenEvent::RunEnd { outcome, .. } => {
            match &outcome.error {
                None => {
                    // Like the Python prompt, a None result is not echoed.
                    if let Some(v) = outcome.result.as_deref().filter(|v| *v != "None") {
                        ui.append_output(&format!("→ {v}\n"), "result");
                    }
                    state.ui_status(&format!(
                        "Done in {} ms",
                        foxden_core::decimal::show(outcome.duration_ms.round())
                    ));
                }
                Some(err) => {
                    let text = if err.traceback.is_empty() {
                        format!("{}: {}\n", err.ty, err.message)
                    } else {
                        err.traceback.clone()
                    };
                    ui.append_output(&text, "stderr");
                    // Stopped by Stop, `stop()` or the run's signal (this run of the den's).
                    if state.den().is_some_and(|d| d.run_stopped()) {
                        state.ui_status(stopped_status(outcome.restarted, &err.ty));
                    } else {
                        state.ui_status(&format!("Failed ({}): {}", err.kind.as_str(), err.ty));
                    }
                }
            }
            ui.set_busy(state.busy());
        }
        DenEvent::FileChange { .. } => refresh_files(state, &ui),
        // Reported as the `request` event only; the output shows what Python prints of it.
        DenEvent::Request { .. } => {}
    }
}

/// The status line of a run that Stop, `stop()` or its signal ended: the worker restarted,
/// Python interrupted, or (type `Stopped` without a restart) the run never started.
pub(crate) fn stopped_status(restarted: bool, ty: &str) -> &'static str {
    if restarted {
        "Stopped: the interpreter was restarted, so Python variables were lost (files are kept)"
    } else if ty == "Stopped" {
        "Stopped before it started: none of its code ran; variables are kept"
    } else {
        "Stopped: Python was interrupted (KeyboardInterrupt); variables are kept"
    }
}

/// The code of the `<script type="text/x-python">` child (the one without `setup`, `check` or
/// `solution`), dedented.
pub(crate) fn script_code(host: &Element) -> Option<String> {
    super::lesson::lesson_scripts(host).main
}

/// Runs the element's code (Run button, Ctrl-Enter and `autorun`): setup first, then the
/// check if it is an exercise.
pub(crate) fn run_script(state: &Rc<State>) {
    // The code as it is now: typing while the run waits for its turn does not change it.
    let Some(own) = super::lesson::current_code(state) else {
        state.ui_status("Nothing to run: add a <script type=\"text/x-python\"> (or type=\"text/x-foxden-javascript\") child");
        return;
    };
    // A lazy element that waits opens its den for this run (lesson_run asks for it); with
    // `autorun`, opening runs the code, so waking it is all.
    let waiting = state.phase.borrow().name() == PhaseName::Waiting;
    if state.den().is_none() && !waiting {
        return;
    }
    let autorun = state
        .host
        .borrow()
        .as_ref()
        .is_some_and(|h| h.has_attribute("autorun"));
    if waiting && autorun {
        super::lazy::wake(state);
        return;
    }
    let generation = state.generation.get();
    if state.script_running.replace(Some(generation)) == Some(generation) {
        return;
    }
    let s = state.clone();
    crate::callback::spawn_local(Box::pin(async move {
        // The outcome reaches the page as the "run" event; a rejection here (a closed den) too.
        let r = super::lesson::lesson_run(s.clone(), None, Some(own), JsValue::UNDEFINED).await;
        if s.script_running.get() == Some(generation) {
            s.script_running.set(None);
        }
        match r {
            // Stop while it waited for another cell's run: nothing ran, nothing is wrong.
            Err(e) if super::lesson::is_stopped_before_start(&e) => {
                s.ui_status("Stopped before it started: files and variables kept")
            }
            Err(e) => s.emit_error(&e),
            Ok(_) => {}
        }
    }));
}

/// Run options with the element's `timeout` and `max-output-bytes` as defaults: a plain copy
/// (what a getter or a Proxy of the caller's throws while it is copied is the run's error).
pub(crate) fn run_opts(state: &State, opts: &JsValue) -> Result<JsValue, JsValue> {
    let out = Object::new();
    if opts.is_object() {
        Object::try_assign(&out, opts.unchecked_ref())?;
    } else if !is_absent(opts) {
        return Ok(opts.clone());
    }
    let (timeout, max_output) = state.run_defaults.get();
    if is_absent(&get(&out, "timeoutMs")) {
        let _ = Reflect::set(&out, &"timeoutMs".into(), &timeout.into());
    }
    if is_absent(&get(&out, "maxOutputBytes")) {
        let _ = Reflect::set(&out, &"maxOutputBytes".into(), &max_output.into());
    }
    Ok(out.into())
}

/// `opts` with the input line's text (controls) as stdin, for a Python run that gives neither
/// `stdin` nor `onInput` (a JavaScript run takes no stdin; `onInput` answers for itself).
pub(crate) fn with_line_stdin(state: &State, opts: &JsValue) -> JsValue {
    if !opts.is_object()
        || !is_absent(&get(opts, "stdin"))
        || !is_absent(&get(opts, "onInput"))
        || get_str(opts, "lang").as_deref() == Some("javascript")
    {
        return opts.clone();
    }
    let Some(line) = state.ui().and_then(|ui| ui.stdin_text()) else {
        return opts.clone();
    };
    let out = Object::assign(&Object::new(), opts.unchecked_ref());
    let _ = Reflect::set(&out, &"stdin".into(), &line.into());
    out.into()
}
