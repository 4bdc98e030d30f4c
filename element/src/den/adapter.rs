//! Runtime adapters: `openDen({ runtime: { start, run, close, reset? } })`, the product sheet's
//! "runtime accepts an adapter with start(), run(request), and close()". The host keeps what it
//! keeps with `iframeRuntime()` (files, store, snapshots, forks, limits, events); the adapter runs
//! the code, wherever it likes (a worker of its own, a server, a test double). What it answers is
//! read like a den page's reply: bounded, typed, never trusted.
//!
//! A run hands the adapter every file of the den (copies) and takes back only what it names as
//! changed; the run's `timeoutMs` is the adapter's to keep, and the host ends a run that is not
//! answered within `timeoutMs` + [`limits::HOST_WATCHDOG_GRACE_MS`].

use super::*;
use crate::errors::load_error;
use crate::js::{self, get, is_absent};
use crate::runtime::InputHandler;
use foxden_core::codes::LoadStage;
use foxden_core::input::{self, RunClock};
use foxden_core::protocol::Watchdog;
use foxden_core::protocol::{clip, ErrorKind, RunError, Stream};

/// A runtime adapter's functions, called with the adapter object as `this`.
pub struct Adapter {
    this: JsValue,
    start: Function,
    run: Function,
    close: Function,
    reset: Option<Function>,
}

impl Adapter {
    /// The adapter in `runtime` (`None`: it is not one, i.e. it has no `run` function).
    pub(crate) fn from_js(runtime: &JsValue) -> Result<Option<Rc<Self>>, JsValue> {
        let f =
            |k: &'static str| Ok::<_, JsValue>(js::opt(runtime, k)?.dyn_into::<Function>().ok());
        let Some(run) = f("run")? else {
            return Ok(None);
        };
        match (f("start")?, f("close")?) {
            (Some(start), Some(close)) => Ok(Some(Rc::new(Adapter {
                this: runtime.clone(),
                start,
                run,
                close,
                reset: f("reset")?,
            }))),
            _ => Err(option_error(
                "runtime",
                "a runtime adapter needs start(), run(request) and close() functions",
            )),
        }
    }

    /// Calls `f(arg)` and waits for what it returns (a value or a promise) until `clock` runs
    /// out (it stops while a run's `input()` waits): `None` when it did not settle in time.
    async fn call(
        &self,
        f: &Function,
        arg: &JsValue,
        clock: &CallClock,
    ) -> Option<Result<JsValue, JsValue>> {
        use futures::future::{select, Either};
        let settled = match f.call1(&self.this, arg) {
            Ok(v) => js::adopt(&v),
            Err(e) => return Some(Err(e)),
        };
        let mut settled = std::pin::pin!(settled);
        loop {
            // While an answer is awaited the clock stands: looked at again every 250 ms at the
            // most often (the deadline may then pass by that much).
            let nap = match clock.remaining() {
                Some(left) if left <= 0.0 => return None,
                Some(left) => left,
                None => 250.0,
            };
            match select(settled.as_mut(), crate::callback::sleep(nap)).await {
                Either::Left((v, _)) => return Some(v),
                Either::Right(_) => continue,
            }
        }
    }

    /// `start({ den })`, when the den `den` opens (one adapter may serve several dens: a fork
    /// opens another); a failure is the opening's `DenLoadError`.
    pub(crate) async fn start(&self, den: &str, timeout_ms: f64) -> Result<(), JsValue> {
        match self
            .call(&self.start, &named(den), &CallClock::new(timeout_ms))
            .await
        {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(load_error(
                LoadStage::Runtime,
                &format!(
                    "the runtime adapter's start() failed: {}",
                    js::describe_bounded(&e)
                ),
            )),
            None => Err(load_error(
                LoadStage::Timeout,
                &format!(
                    "the runtime adapter's start() did not settle within {} ms (loadTimeoutMs)",
                    foxden_core::decimal::show(timeout_ms)
                ),
            )),
        }
    }

    /// `reset({ den })`, if the adapter has one.
    /// The adapter has a `reset()`.
    pub(crate) fn can_reset(&self) -> bool {
        self.reset.is_some()
    }

    pub(crate) async fn reset(&self, den: &str, timeout_ms: f64) -> Result<JsValue, JsValue> {
        let Some(reset) = &self.reset else {
            return Err(den_error(
                crate::errors::DenErrorCode::Reset,
                "this den's runtime adapter has no reset()",
            ));
        };
        match self
            .call(reset, &named(den), &CallClock::new(timeout_ms))
            .await
        {
            Some(Ok(_)) => Ok(obj(&[("from", "adapter".into()), ("bootMs", 0.into())]).into()),
            Some(Err(e)) => Err(den_error(
                crate::errors::DenErrorCode::Reset,
                &format!(
                    "the runtime adapter's reset() failed: {}",
                    js::describe_bounded(&e)
                ),
            )),
            None => Err(den_error(
                crate::errors::DenErrorCode::Reset,
                &format!(
                    "the runtime adapter's reset() did not settle within {} ms (loadTimeoutMs)",
                    foxden_core::decimal::show(timeout_ms)
                ),
            )),
        }
    }

    /// `close({ den })`, when the den closes or its opening fails after `start` was called
    /// (what it returns or throws is not waited for).
    pub(crate) fn close(&self, den: &str) {
        if let Ok(p) = self.close.call1(&self.this, &named(den)) {
            // Awaited only so that a rejection is handled (it would surface on the page).
            crate::callback::spawn_local(Box::pin(async move {
                let _ = js::adopt(&p).await;
            }));
        }
    }
}

/// Calls the adapter's `close` for a den whose opening got as far as `start`, unless the den
/// opened (then `den.close()` calls it): an opening that fails or is dropped later still ends
/// what `start` began.
pub(crate) struct Started(Option<(Rc<Adapter>, String)>);

impl Started {
    pub(crate) fn new(adapter: &Rc<Adapter>, den: &str) -> Self {
        Started(Some((adapter.clone(), den.to_owned())))
    }

    /// The den opened: its own close() calls the adapter's.
    pub(crate) fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some((a, den)) = self.0.take() {
            a.close(&den);
        }
    }
}

/// `{ den }`, the argument of start, close and reset.
fn named(den: &str) -> JsValue {
    obj(&[("den", den.into())]).into()
}

/// `den.info` of an adapter den (frozen, as an iframe den's).
pub(crate) fn info(load_ms: f64) -> JsValue {
    let o = obj(&[
        ("kind", "adapter".into()),
        ("isolation", "adapter".into()),
        ("loadMs", load_ms.into()),
        ("interruptible", false.into()),
        ("warmStart", "off".into()),
        ("stages", JsValue::NULL),
    ]);
    Object::freeze(&o).into()
}

/// How an adapter's run ended.
enum Answer {
    Replied(JsValue),
    Threw(JsValue),
    /// Not settled within the run's timeout and the host's grace.
    Silent,
    /// `close()` came first.
    Closed,
    /// `stop()` (or the run's `signal`) came first.
    Stopped,
}

/// What ends an adapter's call before it settles.
pub(crate) enum Interrupt {
    /// `close()`: a run or a reset.
    Closed,
    /// `stop()` or the run's `signal`: a run.
    Stopped,
}

/// At most this many notes about files not kept, per run (then their number).
const MAX_NOTES: usize = 64;

impl Den {
    /// A run on an adapter den (in the den's turn): every file goes to `adapter.run(request)`;
    /// its answer's output, result, error and changed files come back through the host's checks.
    pub(super) async fn run_adapter(
        &self,
        adapter: &Adapter,
        code: String,
        ro: RunOptions,
    ) -> Result<JsValue, JsValue> {
        let inner = &self.inner;
        // The signal stops the run from its `run` event on (see `Inner::posted`).
        let _stop_on_abort = super::run::stop_on_abort(inner, &ro);
        let seq = inner.start_run(&code, ro.tag);
        let files = Object::new();
        for (path, e) in inner.files.borrow().iter() {
            let _ = js_sys::Reflect::set(&files, &path.into(), &bytes_to_js(&e.data));
        }
        // Aborted when the run ends by the host's watchdog or close() (dropped armed): the
        // adapter may stop.
        let mut abort = crate::runtime::AbortOnDrop::new();
        let signal = abort.signal();
        let cap = ro.max_output_bytes as usize;
        // The run's output: what `output()` streams while it runs, then the answer's texts.
        let output = Rc::new(RefCell::new(OutputBuffer::new(cap)));
        let stream = stream_output(&self.inner, &output, seq, ro.on_output.clone());
        // Its displays: what `display()` shows while it runs.
        let displays = Rc::new(RefCell::new(Displays::default()));
        let show = show_displays(&self.inner, &displays, seq, ro.on_display.clone());
        // Its input(): answered by onInput as a den page's run is; the host's watchdog (the
        // timeout + its grace) stops while it waits.
        let grace = ro.timeout_ms + f64::from(limits::HOST_WATCHDOG_GRACE_MS);
        let clock = Rc::new(CallClock::new(grace));
        let ask = ask_input(self.input_handler(seq, &ro), ro.stdin.is_some(), &clock);
        let request = obj(&[
            ("id", seq.into()),
            ("den", inner.opts.name.as_str().into()),
            ("code", code.as_str().into()),
            ("lang", ro.lang().into()),
            ("timeoutMs", ro.timeout_ms.into()),
            ("maxOutputBytes", ro.max_output_bytes.into()),
            ("stdin", ro.stdin_js()),
            // A fresh copy of the run's vars, parsed from the JSON checked when the run began.
            (
                "vars",
                ro.vars
                    .as_deref()
                    .and_then(|j| js_sys::JSON::parse(j).ok())
                    .unwrap_or(JsValue::NULL),
            ),
            ("files", files.into()),
            ("signal", signal),
            ("output", stream.func.clone()),
        ]);
        // Added since: not enumerable, so that an adapter that spreads or clones the request
        // without its functions (`const { signal, output, ...rest } = request`) still can.
        for (name, func) in [("display", &show.func), ("input", &ask.func)] {
            let descriptor = obj(&[("value", func.clone())]);
            let _ = js_sys::Reflect::define_property(&request, &name.into(), &descriptor);
        }
        let started = js::now_ms();
        let stop = inner.posted();
        let answer = if inner.closed.get() {
            Answer::Closed
        } else if stop {
            // Stopped by a `run` listener: the adapter is not called.
            Answer::Stopped
        } else {
            let request: JsValue = request.into();
            inner.adapter_running.set(true);
            let answer = match inner
                .unless_interrupted(adapter.call(&adapter.run, &request, &clock))
                .await
            {
                Ok(Some(Ok(v))) => Answer::Replied(v),
                Ok(Some(Err(e))) => Answer::Threw(e),
                Ok(None) => Answer::Silent,
                Err(Interrupt::Closed) => Answer::Closed,
                Err(Interrupt::Stopped) => Answer::Stopped,
            };
            inner.adapter_running.set(false);
            answer
        };
        if matches!(answer, Answer::Replied(_) | Answer::Threw(_)) {
            abort.disarm();
        }
        // The run is over: output(), display() and input() throw from now on.
        drop(stream);
        drop(show);
        drop(ask);
        // A den closed meanwhile keeps nothing of the answer.
        let answer = if inner.closed.get() {
            Answer::Closed
        } else {
            answer
        };
        let mut out = RunOutcome {
            duration_ms: js::now_ms() - started,
            ..Default::default()
        };
        let mut ops = Vec::new();
        let mut notes = Vec::new();
        let mut refused = None;
        match answer {
            Answer::Closed => {
                out.error = Some(lost_den_error(LostDen::Closed, ro.timeout_ms, ""));
            }
            Answer::Silent => {
                out.error = Some(RunError::new(
                    ErrorKind::Timeout,
                    "TimeoutError",
                    format!(
                        "the runtime adapter did not answer within {} ms (timeoutMs + {} ms); its signal was aborted",
                        foxden_core::decimal::show(grace),
                        limits::HOST_WATCHDOG_GRACE_MS
                    ),
                ));
            }
            Answer::Stopped => {
                out.error = Some(RunError::new(
                    ErrorKind::Crashed,
                    "Stopped",
                    "the run was stopped; the runtime adapter's signal was aborted (an answer it gives later is not kept)".to_owned(),
                ));
            }
            Answer::Threw(e) => {
                out.error = Some(RunError::new(
                    ErrorKind::Crashed,
                    "AdapterError",
                    format!(
                        "the runtime adapter's run() failed: {}",
                        js::describe_bounded(&e)
                    ),
                ));
            }
            Answer::Replied(reply) => {
                match read_reply(&reply, cap, inner, &mut ops, &mut notes, &mut refused) {
                    Ok(answer) => {
                        for (stream, text) in [
                            (Stream::Stdout, answer.stdout),
                            (Stream::Stderr, answer.stderr),
                        ] {
                            let kept = output.borrow_mut().push(stream, &text);
                            send_output(inner, ro.on_output.as_ref(), seq, stream, &kept);
                        }
                        out.result = answer.result;
                        out.error = answer.error;
                        out.truncated |= answer.error_cut;
                    }
                    Err(why) => {
                        ops.clear();
                        notes.clear();
                        refused = None;
                        out.error = Some(RunError::new(
                            ErrorKind::Crashed,
                            "ProtocolError",
                            format!("the runtime adapter's answer was refused: {why}; nothing of it was kept"),
                        ));
                    }
                }
            }
        }
        {
            let mut output = output.borrow_mut();
            out.truncated |= output.truncated;
            out.stdout = std::mem::take(&mut output.stdout);
            out.stderr = std::mem::take(&mut output.stderr);
            let mut displays = displays.borrow_mut();
            out.truncated |= displays.dropped;
            out.displays = std::mem::take(&mut displays.list);
        }
        for note in &notes {
            out.note(note, cap);
        }
        if let Some(r) = &mut out.result {
            out.truncated |= clip(r, cap);
        }
        if let Some(why) = refused {
            out.changes_not_kept(&why, cap);
        } else if !ops.is_empty() && inner.closed.get() {
            closed_before_commit(&mut out, ro.timeout_ms, cap);
        } else if !ops.is_empty() {
            match inner.commit(ops, "run").await {
                Ok(c) => out.files = c,
                Err(e) => out.changes_not_kept(&e.message(), cap),
            }
        }
        Ok(inner.end_run(seq, &code, &out))
    }
}

impl Inner {
    /// Waits for an adapter's call (a run, a reset) unless `close()` (or, for a run, `stop()`)
    /// comes first: then at once, with which (they send on `adapter_call`; one call at a time
    /// holds it, in the den's turn).
    pub(super) async fn unless_interrupted<F: std::future::Future>(
        &self,
        call: F,
    ) -> Result<F::Output, Interrupt> {
        let (tx, interrupted) = futures::channel::oneshot::channel::<Interrupt>();
        debug_assert!(self.adapter_call.borrow().is_none());
        *self.adapter_call.borrow_mut() = Some(tx);
        let call = std::pin::pin!(call);
        let out = match futures::future::select(call, interrupted).await {
            futures::future::Either::Left((v, _)) => Ok(v),
            futures::future::Either::Right((Ok(why), _)) => Err(why),
            // The sender went without a word (never: it is only taken to send): the call goes on.
            futures::future::Either::Right((Err(_), call)) => Ok(call.await),
        };
        self.adapter_call.borrow_mut().take();
        out
    }
}

/// Text kept from a run's output goes to the run's `onOutput` and the den's `output` event.
fn send_output(inner: &Inner, on_output: Option<&Function>, seq: u32, stream: Stream, kept: &str) {
    if kept.is_empty() {
        return;
    }
    if let Some(f) = on_output {
        let _ = f.call1(
            &JsValue::UNDEFINED,
            &output_chunk(seq, stream.as_str(), kept),
        );
    }
    inner.emit(&DenEvent::Output {
        run_id: seq,
        stream: stream.as_str(),
        text: kept,
    });
}

/// `request.output(stream, text)`: the adapter streams output while its run goes on. Each call
/// is kept up to the run's `maxOutputBytes` (read bounded, like the answer's texts) and reaches
/// `onOutput` and the `output` event at once; a stream other than "stdout" or "stderr", a text
/// that is not a string, or a call once the run has ended throws a TypeError to the adapter.
/// The adapter may keep the function (this one, or `display`) past the run, so it is the garbage
/// collector's to free; this guard's `Drop` (when the run ends) makes it inert.
struct RunCallback {
    ended: Rc<Cell<bool>>,
    func: JsValue,
}

impl Drop for RunCallback {
    fn drop(&mut self) {
        self.ended.set(true);
    }
}

fn stream_output(
    inner: &Rc<Inner>,
    output: &Rc<RefCell<OutputBuffer>>,
    seq: u32,
    on_output: Option<Function>,
) -> RunCallback {
    let inner = Rc::downgrade(inner);
    let output = output.clone();
    let ended = Rc::new(Cell::new(false));
    let is_ended = ended.clone();
    let type_error = |m: &str| -> JsValue { js_sys::TypeError::new(m).into() };
    // `Fn`, not `FnMut`: an onOutput handler may call output() again (no borrow is held then).
    let func = Closure::<dyn Fn(JsValue, JsValue) -> Result<(), JsValue>>::new(
        move |stream: JsValue, text: JsValue| {
            if is_ended.get() {
                return Err(type_error("output(stream, text): the run has ended"));
            }
            let stream = match stream.as_string().as_deref() {
                Some("stdout") => Stream::Stdout,
                Some("stderr") => Stream::Stderr,
                _ => {
                    return Err(type_error(
                        "output(stream, text): stream must be \"stdout\" or \"stderr\"",
                    ))
                }
            };
            let room = output.borrow().room();
            let Some((text, _)) = crate::wire::text(&text, room.saturating_add(4)) else {
                return Err(type_error("output(stream, text): text must be a string"));
            };
            let Some(inner) = inner.upgrade().filter(|i| !i.closed.get()) else {
                return Ok(());
            };
            // Kept first, then the handlers (which may close the den), with no borrow held.
            let kept = output.borrow_mut().push(stream, &text);
            send_output(&inner, on_output.as_ref(), seq, stream, &kept);
            Ok(())
        },
    )
    .into_js_value();
    RunCallback { ended, func }
}

/// `request.display(bundle)`: the adapter shows a display while its run goes on, a MIME bundle
/// as `onDisplay` gets them (`{ "image/png": bytes, "text/plain": "…" }`, the MIME types of
/// Python's `foxden.display`; bytes for images, strings for the rest). Each is checked as a den
/// page's display is, kept in the run's `displays` (at most 1 000 and 16 MiB per run) and
/// reaches `onDisplay` at once. A bundle that is not one throws a
/// TypeError, and one past the run's caps a RangeError (it is not shown; the run is then
/// `truncated`), as does a call once the run has ended (a TypeError).
fn show_displays(
    inner: &Rc<Inner>,
    displays: &Rc<RefCell<Displays>>,
    seq: u32,
    on_display: Option<Function>,
) -> RunCallback {
    let inner = Rc::downgrade(inner);
    let displays = displays.clone();
    let ended = Rc::new(Cell::new(false));
    let is_ended = ended.clone();
    let func = Closure::<dyn Fn(JsValue) -> Result<(), JsValue>>::new(move |bundle: JsValue| {
        if is_ended.get() {
            return Err(js_sys::TypeError::new("display(bundle): the run has ended").into());
        }
        let msg = display_message(&bundle)
            .map_err(|why| JsValue::from(js_sys::TypeError::new(&format!("display(bundle): {why}"))))?;
        let Some(inner) = inner.upgrade().filter(|i| !i.closed.get()) else {
            return Ok(());
        };
        // Kept first, then the handlers (which may close the den), with no borrow held.
        let kept = crate::runtime::Displays::keep(&displays, |room| crate::wire::display(&msg, room));
        let Some(display) = kept else {
            return Err(js_sys::RangeError::new(&format!(
                "display(bundle): not shown: a run shows at most {} displays and {} MiB in all (the run is truncated)",
                foxden_core::outcome::MAX_DISPLAYS_PER_RUN,
                foxden_core::outcome::MAX_DISPLAY_BYTES >> 20
            ))
            .into());
        };
        super::run::send_display(Some(&inner), on_display.as_ref(), seq, &display);
        Ok(())
    })
    .into_js_value();
    RunCallback { ended, func }
}

/// The den page's form of a display (`{ bundle: [{ mime, text | bytes }] }`) for a MIME bundle an
/// adapter gives, or why it is not one. Its size is checked when it is kept.
fn display_message(bundle: &JsValue) -> Result<JsValue, String> {
    let shape = "it must be an object of MIME types to data, e.g. { \"text/plain\": \"hi\" }";
    let array = js::is_array(bundle)
        .map_err(|e| format!("it could not be read ({})", js::describe_bounded(&e)))?;
    if !bundle.is_object() || array || bundle.is_function() {
        return Err(shape.to_owned());
    }
    let keys = js_sys::Reflect::own_keys(bundle.unchecked_ref())
        .map_err(|e| format!("its keys could not be read ({})", js::describe_bounded(&e)))?;
    // Counted before any is copied, and each read bounded (a MIME type is short).
    let max = foxden_core::outcome::MAX_DISPLAY_ITEMS;
    if keys.length() == 0 || keys.length() as usize > max {
        return Err(format!("{shape}, with 1 to {max} MIME types"));
    }
    let mut names = Vec::new();
    for k in keys.iter() {
        if k.is_string() {
            let (name, _) = crate::wire::text(&k, 65).unwrap_or_default();
            names.push(name);
        }
    }
    if names.is_empty() {
        return Err(shape.to_owned()); // only symbol keys
    }
    let items = Array::new();
    for mime in &names {
        let Some(binary) = foxden_core::outcome::display_mime(mime) else {
            let known: Vec<&str> = foxden_core::outcome::DISPLAY_MIMES
                .iter()
                .map(|(m, _)| *m)
                .collect();
            let shown: String = mime.chars().take(64).collect();
            return Err(format!(
                "{shown:?} is not a MIME type foxden shows ({})",
                known.join(", ")
            ));
        };
        let value = js_sys::Reflect::get(bundle, &mime.as_str().into())
            .map_err(|e| format!("{mime} could not be read ({})", js::describe_bounded(&e)))?;
        let item = if binary {
            let Some(bytes) = js::byte_view(&value) else {
                return Err(format!(
                    "{mime} must be bytes (a Uint8Array or an ArrayBuffer)"
                ));
            };
            obj(&[("mime", mime.as_str().into()), ("bytes", bytes.into())])
        } else {
            if !value.is_string() {
                return Err(format!("{mime} must be a string"));
            }
            obj(&[("mime", mime.as_str().into()), ("text", value)])
        };
        items.push(&item);
    }
    // As a den page's displays: text/plain is always there (for an image, its MIME type).
    if !names.iter().any(|m| m == "text/plain") {
        let plain = format!("<{}>", names.first().map_or("display", String::as_str));
        items.push(&obj(&[
            ("mime", "text/plain".into()),
            ("text", plain.into()),
        ]));
    }
    Ok(obj(&[("bundle", items.into())]).into())
}

/// The clock of an adapter call: the run clock the iframe runtime's watchdog uses, stopped while
/// any of the run's `input()` answers is awaited (an adapter may ask more than once at a time).
struct CallClock {
    clock: Cell<RunClock>,
    /// Answers awaited now.
    pending: Cell<u32>,
}

impl CallClock {
    /// A clock of `ms`, running from now.
    fn new(ms: f64) -> Self {
        let budget = Watchdog {
            start_ms: 0.0,
            run_ms: ms,
        };
        CallClock {
            clock: Cell::new(RunClock::start(&budget, js::now_ms())),
            pending: Cell::new(0),
        }
    }

    fn begin(&self) {
        self.pending.set(self.pending.get() + 1);
        self.with(|c| c.pause(js::now_ms()));
    }

    fn end(&self) {
        self.pending.set(self.pending.get().saturating_sub(1));
        if self.pending.get() == 0 {
            self.with(|c| c.resume(js::now_ms()));
        }
    }

    /// Milliseconds left; `None` while an answer is awaited.
    fn remaining(&self) -> Option<f64> {
        self.clock.get().remaining(js::now_ms())
    }

    fn with(&self, f: impl FnOnce(&mut RunClock)) {
        let mut c = self.clock.get();
        f(&mut c);
        self.clock.set(c);
    }
}

/// `request.input(prompt)`: the adapter's code reads a line (Python's `input()`). A promise of the
/// answer: a string, or `null` at the end of input (also for a run given `stdin`, which the
/// adapter reads itself); it rejects with the reason when the answer failed (an `onInput` that
/// threw, or gave something other than a string) or nobody answers (no `onInput`: the message
/// says how to give one). While it
/// waits, the run's watchdog stops counting. The prompt is cut as a den page's is; one that is
/// not a string, or a call once the run has ended, throws a TypeError.
fn ask_input(handler: Option<InputHandler>, scripted: bool, clock: &Rc<CallClock>) -> RunCallback {
    let clock = clock.clone();
    let ended = Rc::new(Cell::new(false));
    let is_ended = ended.clone();
    let func =
        Closure::<dyn Fn(JsValue) -> Result<Promise, JsValue>>::new(move |prompt: JsValue| {
            if is_ended.get() {
                return Err(js_sys::TypeError::new("input(prompt): the run has ended").into());
            }
            let prompt = if prompt.is_undefined() {
                String::new()
            } else {
                // Cut to what a den page's prompt may be, as its are.
                match crate::wire::text(&prompt, input::MAX_PROMPT_CHARS * 3) {
                    Some((p, _)) => p.chars().take(input::MAX_PROMPT_CHARS).collect(),
                    None => {
                        return Err(js_sys::TypeError::new(
                            "input(prompt): prompt must be a string",
                        )
                        .into())
                    }
                }
            };
            let Some(handler) = handler.clone() else {
                // A run with stdin: the adapter reads it itself, and this is the end of input.
                // Nobody to answer: the iframe runtime's EOFError message, saying how to.
                return Ok(if scripted {
                    Promise::resolve(&JsValue::NULL)
                } else {
                    Promise::reject(&js_sys::Error::new(input::NO_HANDLER).into())
                });
            };
            let clock = clock.clone();
            clock.begin();
            let answer = handler(&prompt);
            Ok(js::promise(async move {
                let answer = answer.await;
                clock.end();
                match answer {
                    input::Answer::Text(s) => Ok(s.into()),
                    input::Answer::Eof => Ok(JsValue::NULL),
                    input::Answer::Failed(why) => Err(js_sys::Error::new(&why).into()),
                }
            }))
        })
        .into_js_value();
    RunCallback { ended, func }
}

/// Output, result and error.
#[derive(Default)]
struct Reply {
    stdout: String,
    stderr: String,
    result: Option<String>,
    error: Option<RunError>,
    /// The error's message or traceback was cut at the cap.
    error_cut: bool,
}

/// Reads an adapter's answer `{ stdout?, stderr?, result?, error?, files? }`; `files` maps
/// paths to new contents (bytes or a string) or `null` (deleted). Paths that break the rules
/// are not kept (a note in `notes`, at most [`MAX_NOTES`]); changes over `maxFileBytes` or
/// `maxDenBytes` refuse them all (`refused`), before they are copied; a wrong type is an error
/// naming the field.
fn read_reply(
    reply: &JsValue,
    cap: usize,
    inner: &Inner,
    ops: &mut Vec<Op>,
    notes: &mut Vec<String>,
    refused: &mut Option<String>,
) -> Result<Reply, String> {
    if !reply.is_object() {
        return Err(
            "run() must resolve to an object { stdout, stderr, result, error, files }".into(),
        );
    }
    // A getter that throws refuses the answer (as a field of the wrong type does): read as
    // absent, it would drop what the field held without a word.
    let field = |k: &'static str| -> Result<JsValue, String> {
        js_sys::Reflect::get(reply, &js::key(k))
            .map_err(|e| format!("reading {k} threw: {}", js::describe_bounded(&e)))
    };
    let text = |k: &'static str| -> Result<Option<String>, String> {
        let v = field(k)?;
        if is_absent(&v) {
            return Ok(None);
        }
        // Bounded before it is copied into wasm: the cap, and a little more to see the cut.
        crate::wire::text(&v, cap.saturating_add(4))
            .map(|(s, _)| Some(s))
            .ok_or_else(|| format!("{k} must be a string"))
    };
    let (error, error_cut) =
        crate::wire::error(&field("error")?, cap).map_err(|e| e.to_string())?;
    let answer = Reply {
        stdout: text("stdout")?.unwrap_or_default(),
        stderr: text("stderr")?.unwrap_or_default(),
        result: text("result")?,
        error,
        error_cut,
    };
    let files = field("files")?;
    if is_absent(&files) {
        return Ok(answer);
    }
    if !files.is_object() {
        return Err("files must be an object { path: Uint8Array | string | null }".into());
    }
    // Object.keys through Reflect.apply: a Proxy's trap that throws is an answer, not a
    // lost task (which would keep the den's turn forever).
    // (`js::get` reads objects only; `Object` is a function.)
    let keys = get(&js_sys::global(), "Object")
        .dyn_into::<Function>()
        .ok()
        .and_then(|o| js_sys::Reflect::get(&o, &"keys".into()).ok())
        .and_then(|k| k.dyn_into::<Function>().ok())
        .and_then(|k| js_sys::Reflect::apply(&k, &JsValue::UNDEFINED, &Array::of1(&files)).ok())
        .and_then(|k| k.dyn_into::<Array>().ok())
        .ok_or("files could not be listed (Object.keys threw)")?;
    let max = inner.opts.max_files.max(limits::DEFAULT_MAX_FILES) as u32;
    if keys.length() > max {
        return Err(format!(
            "files names {} files, more than {max}",
            keys.length()
        ));
    }
    let max_file = inner.opts.max_file_bytes;
    // Bytes of the new contents, against maxDenBytes.
    let mut total = 0f64;
    // The size each path was given, so that two keys naming one file (`/work/a`, `/work//a`:
    // the last one is kept) count it once.
    let mut sizes: foxden_core::vecmap::VecMap<String, f64> = Default::default();
    let mut unkept = 0usize;
    for key in keys.iter() {
        let Some(js_key) = key.dyn_ref::<js_sys::JsString>() else {
            continue;
        };
        // A path is at most MAX_PATH_BYTES of UTF-8, never fewer UTF-16 units: a longer key is
        // not even copied.
        let path = if js_key.length() as usize > foxden_core::paths::MAX_PATH_BYTES {
            Err(format!(
                "a changed file was not kept: its path is {} UTF-16 units long, longer than any path",
                js_key.length()
            ))
        } else {
            let raw = String::from(js_key);
            // A lone surrogate became U+FFFD in `raw`: two keys could name one file.
            let checked = match js_key.is_valid_utf16() {
                true => normalize_file_path(&raw),
                false => Err(foxden_core::paths::PathError {
                    path: raw.clone(),
                    rule: foxden_core::paths::PathRule::Unicode,
                }),
            };
            checked.map_err(|e| {
                let shown: String = foxden_core::paths::visible_path(&raw)
                    .chars()
                    .take(120)
                    .collect();
                format!("{shown:?} was not kept: {e}")
            })
        };
        let path = match path {
            Ok(p) => p,
            Err(why) => {
                if notes.len() < MAX_NOTES {
                    notes.push(format!("foxden: {why}\n"));
                } else {
                    unkept += 1;
                }
                continue;
            }
        };
        let v = js_sys::Reflect::get(&files, &key).unwrap_or(JsValue::UNDEFINED);
        // A read-only path is the den's to change, not the code's (foxden_core::readonly): a
        // change to it is noted and not kept; the same content, or deleting what the den does
        // not have, is no change and says nothing.
        // (A new file where a folder holding a read-only path is counts as a change to it.)
        let read_only = match v.is_null() {
            true => inner.opts.read_only.covers(&path),
            false => inner.opts.read_only.guards_file(&path),
        };
        let guarded = |notes: &mut Vec<String>, unkept: &mut usize| {
            if notes.len() < MAX_NOTES {
                let why = inner.opts.read_only.why_guarded(&path);
                notes.push(format!("foxden: {path:?} was not kept: {why}\n"));
            } else {
                *unkept += 1;
            }
        };
        if read_only && v.is_null() {
            if inner.files.borrow().get(&path).is_some() {
                guarded(notes, &mut unkept);
            }
            continue;
        }
        if read_only {
            // Compared with the den's file without counting against the caps: it is not kept.
            let held = inner
                .files
                .borrow()
                .get(&path)
                .map(|e| (e.data.len() as u64, e.sha256));
            let same = match (held, js::sized_view(&v, max_file)) {
                (Some((size, sha)), Ok((view, n))) if n as u64 == size => {
                    js::shared_bytes(&view).is_ok_and(|b| foxden_core::sha256(&b) == sha)
                }
                _ => false,
            };
            if !same {
                guarded(notes, &mut unkept);
            }
            continue;
        }
        if v.is_null() {
            let written = sizes.remove(&path);
            total -= written.unwrap_or(0.0);
            // (Also when an earlier key of this answer wrote the file: the last one is kept.)
            if written.is_some() || inner.files.borrow().get(&path).is_some() {
                ops.push(Op::Delete { path });
            }
            continue;
        }
        // Sizes are checked before the bytes are copied, as writeFile's are; one file over a cap
        // refuses all the changes (as the commit refuses a batch whole), and no more is copied.
        let mut refuse = |why: String| {
            *refused = Some(why);
            ops.clear();
        };
        let view = match js::sized_view(&v, max_file) {
            Ok((view, size)) => {
                total += size - sizes.insert(path.clone(), size).unwrap_or(0.0);
                if total > inner.opts.max_den_bytes as f64 {
                    refuse(format!(
                        "the changed files are over {} bytes, the den's cap (maxDenBytes)",
                        inner.opts.max_den_bytes
                    ));
                    return Ok(answer);
                }
                view
            }
            Err(js::NotSized::TooBig(size)) => {
                refuse(
                    StorageError::FileTooBig {
                        path,
                        size: size as u64,
                        max: max_file,
                    }
                    .to_string(),
                );
                return Ok(answer);
            }
            Err(js::NotSized::Encode(_)) => {
                return Err(format!("files[{path:?}] could not be encoded"))
            }
            Err(js::NotSized::NotData) => {
                return Err(format!(
                    "files[{path:?}] must be a Uint8Array, an ArrayBuffer, a string or null"
                ))
            }
        };
        let bytes = js::shared_bytes(&view).map_err(|e| e.to_string())?;
        // A file given back as the den has it (an adapter that answers every file) is no
        // change: not a write (maxWritesPerMinute, IndexedDB), and its mtime stays, as with the
        // iframe runtime. (An earlier key of this answer for the same path is undone too.)
        let unchanged = inner
            .files
            .borrow()
            .get(&path)
            .is_some_and(|e| e.data[..] == bytes[..]);
        if unchanged {
            total -= sizes.remove(&path).unwrap_or(0.0);
            ops.retain(
                |op| !matches!(op, Op::Put { path: p, .. } | Op::Delete { path: p } if *p == path),
            );
            continue;
        }
        ops.push(Op::Put {
            path,
            entry: FileEntry::new(bytes, js::wall_ms()),
        });
    }
    if unkept > 0 {
        notes.push(format!(
            "foxden: {unkept} more changed files were not kept (bad or read-only paths)\n"
        ));
    }
    Ok(answer)
}
