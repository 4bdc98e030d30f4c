//! Lessons: the event router of an element's den, shared environments (`env`: several elements,
//! one den), and the setup and check scripts of an exercise. The decisions (which script is
//! which, who gets a run's events, which setup has run, pass or fail) are `foxden_core::lesson`.

use super::*;
use crate::den::{self, Den, DenEvent, DenOptions, EventSink};
use crate::js::{get, get_str, obj};
use crate::runtime::Progress;
use foxden_core::lesson::{
    CheckResult, LessonScripts, Route, RunRouter, RunTag, ScriptRole, SetupLog,
};
use foxden_core::protocol::{ErrorKind, RunError};
use futures::channel::oneshot;
use std::rc::Weak;
use wasm_bindgen::JsCast;
use web_sys::Element;

/// Sends each event of one den to the element that started the run (setup and check runs are
/// hidden), file changes to every element using the den; keeps the den's setup log.
#[derive(Default)]
pub(crate) struct Router {
    routes: RefCell<RunRouter>,
    members: RefCell<Vec<(u32, Weak<State>)>>,
    pub(crate) setup: RefCell<SetupLog>,
    den: RefCell<Option<Den>>,
}

impl Router {
    /// The den's event sink (it holds the router weakly: a closed element's events go nowhere).
    pub(crate) fn sink(self: &Rc<Self>) -> EventSink {
        let weak = Rc::downgrade(self);
        Rc::new(move |ev: &DenEvent| {
            if let Some(r) = weak.upgrade() {
                r.dispatch(ev);
            }
        })
    }

    /// Load progress, to every element waiting for the den.
    pub(crate) fn progress(self: &Rc<Self>) -> Progress {
        let weak = Rc::downgrade(self);
        Rc::new(move |loaded, total| {
            for (s, _) in weak
                .upgrade()
                .map(|r| r.targets(Route::All))
                .unwrap_or_default()
            {
                s.emit(
                    "progress",
                    &obj(&[("loaded", loaded.into()), ("total", total.into())]).into(),
                );
                if let Some(ui) = s.ui() {
                    ui.show_progress(loaded, total);
                }
            }
        })
    }

    fn join(self: &Rc<Self>, state: &Rc<State>) -> u32 {
        let m = self.routes.borrow_mut().join();
        self.members.borrow_mut().push((m, Rc::downgrade(state)));
        m
    }

    pub(crate) fn attach(&self, den: &Den) {
        *self.den.borrow_mut() = Some(den.share());
    }

    fn targets(&self, route: Route) -> Vec<(Rc<State>, bool)> {
        let members = self.members.borrow();
        let live = |m: &(u32, Weak<State>)| m.1.upgrade();
        match route {
            Route::All => members
                .iter()
                .filter_map(live)
                .map(|s| (s, false))
                .collect(),
            Route::One(t) => members
                .iter()
                .filter(|m| m.0 == t.member)
                .filter_map(live)
                .map(|s| (s, t.hidden))
                .collect(),
            Route::Nobody => Vec::new(),
        }
    }

    /// The setup scripts of every element using the den, in document order (lazy cells join in
    /// the order they are needed: the reader may come to the third first, whose setup uses
    /// what the first one's makes); elements in no common document, in the order they joined.
    fn setup_scripts(&self) -> Vec<String> {
        let members = self.members.borrow();
        let mut hosts: Vec<_> = members
            .iter()
            .filter_map(|m| m.1.upgrade()?.host.borrow().clone())
            .collect();
        drop(members);
        foxden_core::order::sort_by(&mut hosts, &|a, b| {
            let pos = a.compare_document_position(b);
            if pos & web_sys::Node::DOCUMENT_POSITION_DISCONNECTED != 0 {
                std::cmp::Ordering::Equal
            } else if pos & web_sys::Node::DOCUMENT_POSITION_FOLLOWING != 0 {
                std::cmp::Ordering::Less
            } else if pos & web_sys::Node::DOCUMENT_POSITION_PRECEDING != 0 {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        hosts
            .iter()
            .filter_map(|h| lesson_scripts(h).setup)
            .collect()
    }

    fn dispatch(&self, ev: &DenEvent) {
        let route = match ev {
            DenEvent::RunStart { id, .. } => {
                let tag = self.den.borrow().as_ref().map_or(0, Den::run_tag);
                self.routes.borrow_mut().start(*id, tag)
            }
            DenEvent::RunEnd { id, .. } => self.routes.borrow_mut().end(*id),
            // An input() request goes to the element whose run asked (a hidden one: nobody
            // answers, so it is end of input).
            DenEvent::Output { run_id, .. }
            | DenEvent::Display { run_id, .. }
            | DenEvent::Input { run_id, .. }
            | DenEvent::Request { run_id, .. } => self.routes.borrow().route(*run_id),
            DenEvent::FileChange { .. } => Route::All,
        };
        // Collected first: a listener may remove an element (and so change the members).
        for (s, hidden) in self.targets(route) {
            if !hidden {
                on_den_event(&s, ev);
            }
        }
    }
}

/// An element's use of a den's router (and of a shared environment). Dropping it leaves; the
/// last element to leave an environment closes its den.
pub(crate) struct Lease {
    pub(crate) router: Rc<Router>,
    pub(crate) member: u32,
    /// The shared environment joined: its name and that very environment (a later one of the
    /// same name, opened after this one failed, is not this lease's to release).
    pub(crate) env: Option<(String, Rc<Env>)>,
}

impl Lease {
    /// A router of its own, for an element without `env`.
    pub(crate) fn own(state: &Rc<State>) -> Lease {
        let router = Rc::new(Router::default());
        let member = router.join(state);
        Lease {
            router,
            member,
            env: None,
        }
    }

    pub(crate) fn tag(&self, hidden: bool) -> u32 {
        RunTag {
            member: self.member,
            hidden,
        }
        .encode()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.router.routes.borrow_mut().leave(self.member);
        self.router
            .members
            .borrow_mut()
            .retain(|m| m.0 != self.member);
        if let Some((name, env)) = &self.env {
            release(name, env);
        }
    }
}

/// One shared environment: its den (once open), the elements waiting for it, how many use it.
pub(crate) struct Env {
    router: Rc<Router>,
    den: RefCell<Option<Result<Den, JsValue>>>,
    waiters: RefCell<Vec<oneshot::Sender<Result<Den, JsValue>>>>,
    users: Cell<u32>,
    /// Dropping it stops the opening (its last element left before the den was open).
    cancel: RefCell<Option<oneshot::Sender<()>>>,
}

thread_local! {
    /// The open (or opening) environments of the page, by name (a few: a list).
    static ENVS: RefCell<Vec<(String, Rc<Env>)>> = const { RefCell::new(Vec::new()) };
}

fn share(r: &Result<Den, JsValue>) -> Result<Den, JsValue> {
    r.as_ref().map(Den::share).map_err(Clone::clone)
}

/// The shared environment `env` is open or opening (an element of it has joined).
pub(crate) fn env_exists(env: &str) -> bool {
    ENVS.with(|m| m.borrow().iter().any(|x| x.0 == env))
}

/// Joins the environment `env` (opening its den with `opts` if this is the first element):
/// the lease, and the den once it is open.
pub(crate) fn join_env(
    env: &str,
    opts: DenOptions,
    state: &Rc<State>,
) -> (Lease, oneshot::Receiver<Result<Den, JsValue>>) {
    let (tx, rx) = oneshot::channel();
    let (entry, new) = ENVS.with(|m| {
        let mut m = m.borrow_mut();
        match m.iter().find(|x| x.0 == env) {
            Some(e) => (e.1.clone(), false),
            None => {
                let e = Rc::new(Env {
                    router: Rc::new(Router::default()),
                    den: RefCell::new(None),
                    waiters: RefCell::new(Vec::new()),
                    users: Cell::new(0),
                    cancel: RefCell::new(None),
                });
                m.push((env.to_owned(), e.clone()));
                (e, true)
            }
        }
    });
    entry.users.set(entry.users.get() + 1);
    let member = entry.router.join(state);
    match &*entry.den.borrow() {
        Some(r) => {
            let _ = tx.send(share(r));
        }
        None => entry.waiters.borrow_mut().push(tx),
    }
    if new {
        let e = entry.clone();
        let name = env.to_owned();
        // den::open first waits for the close of a previous environment of that name.
        let (cancel, cancelled) = oneshot::channel::<()>();
        *entry.cancel.borrow_mut() = Some(cancel);
        crate::callback::spawn_local(Box::pin(async move {
            let progress = e.router.progress();
            let open = Box::pin(den::open(opts, None, progress, Some(e.router.sink())));
            let result = match futures::future::select(open, cancelled).await {
                futures::future::Either::Left((r, _)) => r,
                // Its last element left: dropping the opening removes its iframe and frees
                // the name (release() forgot the environment).
                futures::future::Either::Right(_) => return,
            };
            e.cancel.borrow_mut().take();
            if let Ok(d) = &result {
                e.router.attach(d);
            }
            let failed = result.is_err();
            for w in e.waiters.borrow_mut().drain(..) {
                let _ = w.send(share(&result));
            }
            *e.den.borrow_mut() = Some(result);
            // Nobody is left (or it failed: the next element tries again): forget it.
            if e.users.get() == 0 || failed {
                forget(&name, &e);
            }
        }));
    }
    (
        Lease {
            router: entry.router.clone(),
            member,
            env: Some((env.to_owned(), entry.clone())),
        },
        rx,
    )
}

/// An element left `e` (named `env`); the last one closes its den (once it is open).
fn release(env: &str, e: &Rc<Env>) {
    e.users.set(e.users.get().saturating_sub(1));
    if e.users.get() > 0 {
        return;
    }
    // Still loading (the opening holds `cancel` until it ends): the loading stops, and the name
    // is free for a new environment.
    e.cancel.borrow_mut().take();
    forget(env, e);
}

fn forget(env: &str, e: &Rc<Env>) {
    ENVS.with(|m| {
        m.borrow_mut()
            .retain(|x| !(x.0 == env && Rc::ptr_eq(&x.1, e)));
    });
    if let Some(Ok(d)) = e.den.borrow_mut().take() {
        let _ = d.close_impl();
    }
    e.router.den.borrow_mut().take();
}

// ---------------------------------------------------------------------------------------------
// Scripts, setup and check

/// The element's Python script children, by role (`setup`, `check`, `solution` attributes).
pub(crate) fn lesson_scripts(host: &Element) -> LessonScripts {
    let Ok(list) = host.query_selector_all(":scope > script") else {
        return LessonScripts::default();
    };
    let scripts = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<Element>().ok())
        .filter_map(|s| {
            let role = ScriptRole::of(s.get_attribute("type").as_deref(), |a| s.has_attribute(a))?;
            Some((role, dedent(&s.text_content().unwrap_or_default())))
        });
    LessonScripts::collect(scripts)
}

/// The element is busy for as long as this lives (a run through it, hidden setup and check
/// included): Stop is on and Run off, as during a run of the reader's code.
/// It counts for the den it started on only (`generation`): leaving that den resets the count.
struct Busy(Weak<State>, u32);

impl Busy {
    fn new(state: &Rc<State>) -> Busy {
        state.lesson_busy.set(state.lesson_busy.get() + 1);
        if let Some(ui) = state.ui() {
            ui.set_busy(true);
        }
        Busy(Rc::downgrade(state), state.generation.get())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let Some(state) = self.0.upgrade() else {
            return;
        };
        if state.generation.get() != self.1 {
            return;
        }
        state
            .lesson_busy
            .set(state.lesson_busy.get().saturating_sub(1));
        if let Some(ui) = state.ui() {
            ui.set_busy(state.busy());
        }
    }
}

/// A hidden run (setup, check) with the status `saying` so. Returns its result and the status
/// shown before; a run that is refused puts that status back.
async fn hidden_run(
    state: &State,
    den: &Den,
    code: String,
    opts: JsValue,
    tag: u32,
    saying: &str,
) -> Result<(JsValue, Option<String>), JsValue> {
    let before = state
        .ui()
        .map(|ui| ui.status.text_content().unwrap_or_default());
    state.ui_status(saying);
    match den.run_tagged(code, opts, tag).await {
        Ok(r) => Ok((r, before)),
        Err(e) => {
            if let Some(before) = &before {
                state.ui_status(before);
            }
            Err(e)
        }
    }
}

/// Says in the status that Stop, `stop()` or the signal ended the run whose result is `r`.
fn show_stopped(state: &State, r: &JsValue, error: Option<&RunError>) {
    let restarted = get(r, "restarted").as_bool() == Some(true);
    let ty = error.map_or("", |e| e.ty.as_str());
    state.ui_status(super::lifecycle::stopped_status(restarted, ty));
}

/// The `error` of a run's result object, as a `RunError`.
fn run_error(result: &JsValue) -> Option<RunError> {
    let e = get(result, "error");
    if !e.is_object() {
        return None;
    }
    Some(RunError {
        kind: get_str(&e, "kind")
            .and_then(|k| ErrorKind::parse(&k))
            .unwrap_or(ErrorKind::Crashed),
        ty: get_str(&e, "type").unwrap_or_default(),
        message: get_str(&e, "message").unwrap_or_default(),
        traceback: get_str(&e, "traceback").unwrap_or_default(),
    })
}

/// A run through the element: the setup script first (once per interpreter, hidden), then
/// `code` (or, when `None`, the element's own code followed by the exercise's check).
///
/// `own` is the element's own code as it was when the run was asked for (the click, the
/// `run()` call): typing while the run waits for its turn or its setup does not change it.
pub(crate) async fn lesson_run(
    state: Rc<State>,
    code: Option<String>,
    own: Option<String>,
    opts: JsValue,
) -> Result<JsValue, JsValue> {
    let den = live_den(state.clone()).await?;
    // The element's den as it is now: if the element leaves it (or it is replaced) while this
    // run waits for its turn, the run does not go ahead on it.
    let generation = state.generation.get();
    let host = state
        .host
        .borrow()
        .clone()
        .ok_or_else(|| closed_error(&state))?;
    let scripts = lesson_scripts(&host);
    let (router, visible, hidden) = {
        let lease = state.lease.borrow();
        let lease = lease.as_ref().ok_or_else(|| closed_error(&state))?;
        (lease.router.clone(), lease.tag(false), lease.tag(true))
    };
    let opts = run_opts(&state, &opts)?;
    // Setup and check are Python whatever the reader's code is, and get end of input (no
    // stdin but an empty one, nobody asked).
    let python_opts = hidden_opts(&opts);
    // Setup, code and check take one turn of the den: no reset, timeout of another run or file
    // operation comes between them, so the setup log speaks of the interpreter the code runs in.
    // A signal that aborts while the run waits for it keeps the run from starting. (A bad
    // `signal` is refused by the run's own options, below.)
    let signal = crate::js::opt(&opts, "signal")
        .ok()
        // (An object made from AbortSignal.prototype is none: its `aborted` getter throws.)
        .filter(|s| js_sys::Reflect::get(s, &"aborted".into()).is_ok())
        .and_then(|s| s.dyn_into::<web_sys::AbortSignal>().ok());
    // Busy (Stop on, Run off) from now on: the wait for the turn (another cell's run may hold
    // it: Stop ends the wait) and the hidden setup and check are part of the run.
    let _busy = Busy::new(&state);
    if den.turn_taken() {
        state.ui_status("Waiting for the run in progress to end…");
    }
    let (stop_tx, stop_rx) = futures::channel::oneshot::channel::<()>();
    state.queued.borrow_mut().push(stop_tx);
    let waiting = Box::pin(den.turn_unless_aborted(signal.as_ref()));
    let _turn = match futures::future::select(waiting, stop_rx).await {
        // (A Stop that came as the turn was handed over still holds: nothing runs.)
        futures::future::Either::Left((turn, mut stop)) => {
            let turn = turn?;
            if let Ok(Some(())) = stop.try_recv() {
                return Err(stopped_before_start());
            }
            turn
        }
        futures::future::Either::Right((Ok(()), _)) => return Err(stopped_before_start()),
        // The element let go of its queue (it is being dropped): the wait goes on.
        futures::future::Either::Right((Err(_), waiting)) => waiting.await?,
    };
    // Its stop sender is of no use now (and the list must not grow with every run).
    state.queued.borrow_mut().retain(|tx| !tx.is_canceled());
    if state.generation.get() != generation {
        return Err(closed_error(&state));
    }
    // Every element's setup in a shared environment: a cell may use what another's setup made.
    for setup in router.setup_scripts() {
        let setup = setup.as_str();
        let interpreter = den.interpreter();
        if router.setup.borrow_mut().claim(setup, interpreter) {
            // A run that is refused (bad options, closed den) did not run the setup either.
            let said = "Running the setup code…";
            let r = match hidden_run(
                &state,
                &den,
                setup.to_owned(),
                python_opts.clone(),
                hidden,
                said,
            )
            .await
            {
                Ok((r, _)) => r,
                Err(e) => {
                    router.setup.borrow_mut().undo(setup);
                    return Err(e);
                }
            };
            if let Some(e) = run_error(&r) {
                router.setup.borrow_mut().undo(setup);
                if den.run_stopped() {
                    // Stopped (Stop, stop(), the signal) while the setup ran: not its failure.
                    show_stopped(&state, &r, Some(&e));
                    return Ok(r);
                }
                state.ui_status(&format!("The setup code failed: {}: {}", e.ty, e.message));
                if let Some(ui) = state.ui() {
                    ui.clear_output();
                    ui.append_output(&e.traceback, "stderr");
                }
                return Ok(r);
            }
            if den.interpreter() != interpreter {
                // It left work running (a task, a timer): the worker was restarted, and what
                // it set up went with it. The code would run without it.
                router.setup.borrow_mut().undo(setup);
                const LEFT: &str = "The setup code left work running when it ended (a task or a timer), so the interpreter was restarted without it: end that work in the setup";
                state.ui_status(LEFT);
                // The caller's code did not run: its result says why (not the setup's success).
                let e = RunError::new(
                    ErrorKind::Python,
                    "SetupError",
                    format!("{LEFT}. The code given to run() did not run."),
                );
                let _ = js_sys::Reflect::set(&r, &"error".into(), &crate::den::error_js(&e));
                return Ok(r);
            }
        }
    }
    let is_own = code.is_none();
    let code = match code {
        Some(c) => c,
        None => own.or_else(|| current_code(&state)).ok_or_else(|| {
            crate::errors::den_error(
                crate::errors::DenErrorCode::BadData,
                "nothing to run: give run() some code, or add a <script type=\"text/x-python\"> (or type=\"text/x-foxden-javascript\") child",
            )
        })?,
    };
    if let Some(ui) = state.ui() {
        ui.show_check(None);
    }
    // The element's own code runs in its script's language; run(code, opts) as opts say.
    let main_opts = if is_own && scripts.main_is_javascript {
        with_lang(&opts, Some("javascript"))
    } else {
        opts.clone()
    };
    let main_opts = with_line_stdin(&state, &main_opts);
    let interpreter = den.interpreter();
    let result = den.run_tagged(code, main_opts, visible).await?;
    let Some(check) = scripts.check.filter(|_| is_own) else {
        return Ok(result);
    };
    // The element left its den (closed, renamed, removed) during the run, or the code was
    // stopped (Stop, stop(), the signal, a `run` listener's preventDefault()): no verdict.
    if state.generation.get() != generation || den.run_stopped() {
        return Ok(result);
    }
    let verdict = match run_error(&result) {
        Some(e) => CheckResult::code_failed(&e),
        // The code ended but left work running (a task, a timer): the interpreter was
        // restarted, and the check would not see what the code made.
        None if den.interpreter() != interpreter => CheckResult::code_left_work(),
        None => {
            let said = "Checking your code…";
            let (c, done) = hidden_run(&state, &den, check, python_opts, hidden, said).await?;
            if state.generation.get() != generation {
                return Ok(result);
            }
            let error = run_error(&c);
            if den.run_stopped() {
                // Stopped (Stop, stop(), the signal) while the check ran: no verdict.
                show_stopped(&state, &c, error.as_ref());
                return Ok(result);
            }
            if let Some(done) = done {
                state.ui_status(&done);
            }
            CheckResult::of_check(error.as_ref())
        }
    };
    if let Some(ui) = state.ui() {
        ui.show_check(Some(&verdict));
    }
    state.emit(
        "check",
        &obj(&[
            ("passed", verdict.passed.into()),
            ("message", verdict.message.as_str().into()),
        ])
        .into(),
    );
    Ok(result)
}

/// Why a run through the element that Stop ended while it waited for the den's turn rejects:
/// an `AbortError`, as for a run whose `signal` aborts before it starts.
fn stopped_before_start() -> JsValue {
    web_sys::DomException::new_with_message_and_name(STOPPED_BEFORE_START, "AbortError")
        .map_or_else(|e| e, JsValue::from)
}

const STOPPED_BEFORE_START: &str =
    "the run was stopped before it started (it waited for the run in progress to end)";

/// Whether `e` is [`stopped_before_start`]'s error.
pub(crate) fn is_stopped_before_start(e: &JsValue) -> bool {
    e.dyn_ref::<web_sys::DomException>()
        .is_some_and(|d| d.name() == "AbortError" && d.message() == STOPPED_BEFORE_START)
}

/// A copy of run options with `lang` set (`None`: removed, Python). Non-object options are
/// returned as they are (the den refuses them).
fn with_lang(opts: &JsValue, lang: Option<&str>) -> JsValue {
    if !opts.is_object() {
        return opts.clone();
    }
    let out = js_sys::Object::assign(&js_sys::Object::new(), opts.unchecked_ref());
    match lang {
        Some(l) => {
            let _ = js_sys::Reflect::set(&out, &"lang".into(), &l.into());
        }
        None => {
            let _ = js_sys::Reflect::delete_property(&out, &"lang".into());
        }
    }
    out.into()
}

/// Options of a hidden setup or check run: Python, with an empty stdin (end of input) in
/// place of the reader's stdin or `onInput`.
fn hidden_opts(opts: &JsValue) -> JsValue {
    let out = with_lang(opts, None);
    if out.is_object() {
        // (`vars` are for the reader's code; so are `onOutput` and `onDisplay`, as the
        // element's events carry nothing of hidden runs; a `signal` stops the setup too.)
        for key in ["onInput", "vars", "onOutput", "onDisplay"] {
            let _ = js_sys::Reflect::delete_property(
                out.unchecked_ref::<js_sys::Object>(),
                &key.into(),
            );
        }
        let _ = js_sys::Reflect::set(&out, &"stdin".into(), &"".into());
    }
    out
}

/// The code the Run button and `run()` without code execute: the editor's text, else the
/// code set through the `code` property, else the script child.
pub(crate) fn current_code(state: &State) -> Option<String> {
    if let Some(text) = state.ui().and_then(|ui| ui.editor_text()) {
        return Some(text);
    }
    if let Some(c) = state.code.borrow().clone() {
        return Some(c);
    }
    let host = state.host.borrow().clone()?;
    lesson_scripts(&host).main
}
