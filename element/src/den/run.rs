//! A run, host side: ship the files the worker lacks, stream its output and displays, wait for
//! the reply (or the watchdog), commit the files it returned, and resolve with its outcome.

use super::*;
use crate::callback::Listener;
use crate::runtime::InputHandler;
use events::InputReply;
use foxden_core::input::Answer;
use std::future::Future;

/// Settles when `signal` aborts (its listener goes with the future).
async fn aborted(signal: &web_sys::AbortSignal) {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let mut tx = Some(tx);
    let _listener = Listener::new(signal.as_ref(), "abort", move |_| {
        if let Some(tx) = tx.take() {
            let _ = tx.send(());
        }
    });
    if !signal.aborted() {
        let _ = rx.await;
    }
}

/// A run whose signal has aborted does not start: it rejects with the signal's reason.
fn not_aborted(ro: &RunOptions) -> Result<(), JsValue> {
    match ro.signal.as_ref().filter(|s| s.aborted()) {
        Some(s) => Err(s.reason()),
        None => Ok(()),
    }
}

/// While the returned listener lives, the run's signal stops the den's run in flight.
pub(super) fn stop_on_abort(inner: &Rc<Inner>, ro: &RunOptions) -> Option<Listener> {
    let weak = Rc::downgrade(inner);
    ro.signal.as_ref().map(|s| {
        Listener::new(s.as_ref(), "abort", move |_| {
            if let Some(inner) = weak.upgrade() {
                inner.stop_run();
            }
        })
    })
}

impl Den {
    /// Runs `code`: ships the files the worker lacks, waits for the reply (or the watchdog),
    /// commits the files the run returned and resolves with the `RunResult` object.
    pub(super) async fn run_outcome(
        &self,
        code: String,
        ro: RunOptions,
    ) -> Result<JsValue, JsValue> {
        let _turn = self.turn_unless_aborted(ro.signal.as_ref()).await?;
        self.run_in_turn(code, ro).await
    }

    /// [`Self::turn`], unless `signal` aborts first: then the reason, and the place in line is
    /// passed on (a run whose signal aborts while it waits never starts).
    pub(crate) async fn turn_unless_aborted(
        &self,
        signal: Option<&web_sys::AbortSignal>,
    ) -> Result<Exclusive<'_>, JsValue> {
        let Some(signal) = signal else {
            return self.turn().await;
        };
        if signal.aborted() {
            return Err(signal.reason());
        }
        let mut turn = std::pin::pin!(self.turn());
        let mut abort = std::pin::pin!(aborted(signal));
        std::future::poll_fn(|cx| {
            if let std::task::Poll::Ready(turn) = turn.as_mut().poll(cx) {
                return std::task::Poll::Ready(turn);
            }
            abort.as_mut().poll(cx).map(|()| Err(signal.reason()))
        })
        .await
    }

    /// Takes the den's turn: no other run or file operation starts until it is dropped. Within
    /// it, [`Self::interpreter`] stays what it is until a run of the turn restarts the worker.
    pub(crate) async fn turn(&self) -> Result<Exclusive<'_>, JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        let turn = inner.exclusive().await;
        inner.check_open()?;
        if inner.opts.adapter.is_none() {
            inner.ensure_connection().await?;
        }
        Ok(turn)
    }

    /// Which interpreter the den's worker runs: another number after each restart (a timeout,
    /// `reset()`, a den page that was replaced).
    pub(crate) fn interpreter(&self) -> u64 {
        self.inner.sync.borrow().interpreter()
    }

    /// [`Self::run_outcome`] in a turn already taken.
    pub(crate) async fn run_in_turn(
        &self,
        code: String,
        ro: RunOptions,
    ) -> Result<JsValue, JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        if let Some(a) = inner.opts.adapter.clone() {
            not_aborted(&ro)?;
            return self.run_adapter(&a, code, ro).await;
        }
        // Connected first: a run that cannot start (the den page did not reopen) rejects
        // before its `run` event, so that no `run` event goes without its `run-end`.
        let conn = inner.ensure_connection().await?;
        not_aborted(&ro)?;
        // The signal stops the run from its `run` event on (a listener may abort it there: the
        // stop is then carried with the run, see `Inner::posted`).
        let _stop_on_abort = stop_on_abort(inner, &ro);
        let seq = inner.start_run(&code, ro.tag);
        // Ship only what the worker does not already have.
        let plan = inner.sync.borrow().plan(&inner.files.borrow());
        let put = Array::new();
        let transfer = Array::new();
        for path in &plan.put {
            if let Some(e) = inner.files.borrow().get(path) {
                let data = bytes_to_js(&e.data);
                transfer.push(&data.buffer());
                put.push(&obj(&[
                    ("path", path.as_str().into()),
                    ("data", data.into()),
                    ("mtime", e.mtime_ms.into()),
                ]));
            }
        }
        inner
            .sync
            .borrow_mut()
            .delivered(&plan, &inner.files.borrow());
        let on_input = self.input_handler(seq, &ro);
        // JavaScript: top-level let/const/class rewritten to persist, and what the worker needs
        // for code with top-level await (foxden_core::javascript).
        let (sent, js) = if ro.javascript {
            let p = foxden_core::javascript::prepare(&code);
            let splits = Array::new();
            for s in &p.splits {
                splits.push(&(*s).into());
            }
            let js = obj(&[
                ("names", str_array(&p.names).into()),
                ("functions", str_array(&p.functions).into()),
                ("splits", splits.into()),
                ("topReturn", p.top_return.into()),
                ("topAwait", p.top_await.into()),
            ]);
            (p.code, JsValue::from(js))
        } else {
            (code.clone(), JsValue::NULL)
        };
        let msg = obj(&[
            ("t", HostToDen::Run.as_str().into()),
            ("code", sent.as_str().into()),
            ("timeoutMs", ro.timeout_ms.into()),
            ("maxOutputBytes", ro.max_output_bytes.into()),
            ("killGraceMs", inner.opts.kill_grace_ms.into()),
            ("put", put.into()),
            ("del", str_array(&plan.delete).into()),
            ("stdin", ro.stdin_js()),
            (
                "vars",
                ro.vars.as_deref().map_or(JsValue::NULL, JsValue::from),
            ),
            ("interactive", on_input.is_some().into()),
            ("network", inner.broker.borrow().config.is_some().into()),
            ("lang", ro.lang().into()),
            ("js", js),
            ("readOnly", str_array(inner.opts.read_only.entries()).into()),
            // (`stopped` is set by the runtime as it posts the run: see RunRequest::stop.)
        ]);
        let output = Rc::new(RefCell::new(OutputBuffer::new(
            ro.max_output_bytes as usize,
        )));
        let on_output: OutputHandler = {
            let user = ro.on_output.clone();
            let weak = Rc::downgrade(inner);
            Rc::new(move |stream: &str, text: &str| {
                if let Some(f) = &user {
                    let _ = f.call1(&JsValue::UNDEFINED, &output_chunk(seq, stream, text));
                }
                if let Some(i) = weak.upgrade() {
                    i.emit(&DenEvent::Output {
                        run_id: seq,
                        stream,
                        text,
                    });
                }
            })
        };
        let displays = Rc::new(RefCell::new(Displays::default()));
        let on_display: DisplayHandler = {
            let user = ro.on_display.clone();
            let weak = Rc::downgrade(inner);
            Rc::new(move |display: &Display| {
                send_display(weak.upgrade().as_deref(), user.as_ref(), seq, display)
            })
        };
        // The den page enforces the timeout itself; the host's watchdog catches a den page that
        // hangs or lies: it is removed and a new one opened, files kept.
        let limits = ReplyLimits::for_run(
            ro.max_output_bytes as usize,
            inner.opts.max_den_bytes,
            inner.opts.max_file_bytes,
            inner.opts.read_only.clone(),
        );
        // foxden.fetch: requests of this run, decided by the den's broker, made by this page.
        let fetches = net::RunFetches::new(inner, seq, conn.link(), ro.on_request.clone());
        // A `run` listener may have closed the den: the run is not posted (it ends `Closed`,
        // with its `run-end`), so that no code runs on a den whose lock and name are free.
        let stop = inner.posted();
        let end = if inner.closed.get() {
            RunEnd::Closed
        } else {
            conn.run(RunRequest {
                msg,
                transfer,
                output: output.clone(),
                on_output,
                displays: displays.clone(),
                on_display,
                limits: limits.clone(),
                watchdog: Watchdog::for_run(ro.timeout_ms, inner.opts.runtime.load_timeout_ms),
                on_input,
                on_fetch: net::RunFetches::handler(&fetches),
                stop,
            })
            .await
        };
        // Requests still pending are aborted now (recorded as `aborted`).
        let requests = net::RunFetches::finish(&fetches);
        let mut done = match end {
            RunEnd::Done(d) => d,
            other => {
                // The den page is gone or misbehaved: drop it (the iframe is removed) and open a
                // new one in the background; the files are host-owned and stay.
                inner.forget_den_page();
                if !inner.closed.get() {
                    Inner::reopen_soon(inner);
                }
                let (how, why) = match other {
                    _ if inner.closed.get() => (LostDen::Closed, String::new()),
                    RunEnd::Refused(e) => (LostDen::Refused, e.to_string()),
                    RunEnd::Silent { started: true } => (LostDen::Silent, String::new()),
                    _ => (LostDen::Gone, String::new()),
                };
                Done::failed(0, lost_den_error(how, ro.timeout_ms, &why), true)
            }
        };
        done.truncated |= done.clip_texts(&limits);
        let mut out = {
            let o = output.borrow();
            RunOutcome {
                stdout: o.stdout.clone(),
                stderr: o.stderr.clone(),
                result: done.result.take(),
                error: done.error.take(),
                truncated: o.truncated || done.truncated || displays.borrow().dropped,
                files: ChangeSet::default(),
                duration_ms: done.duration_ms,
                restarted: done.restarted,
                displays: std::mem::take(&mut displays.borrow_mut().list),
                requests,
            }
        };
        let not_copied = match (done.too_many_files, done.over_cap, done.too_big.take()) {
            (Some(count), _, _) => Some(StorageError::TooManyFiles {
                count: usize::try_from(count).unwrap_or(usize::MAX),
                max: inner.opts.max_files,
            }),
            (None, Some(bytes), _) => Some(StorageError::CapExceeded {
                needed: bytes,
                cap: inner.opts.max_den_bytes,
            }),
            (None, None, Some((path, size))) => Some(StorageError::FileTooBig {
                path,
                size,
                max: inner.opts.max_file_bytes,
            }),
            (None, None, None) => done.no_room.map(|bytes| StorageError::NoRoom { bytes }),
        };
        if let Some(e) = not_copied {
            // The run changed more files than a den holds (none was sent), the changed files
            // alone are over the cap, or they did not fit in the page's memory: nothing was
            // copied, nothing is kept.
            let mut sync = inner.sync.borrow_mut();
            sync.refused_paths(done.changed.iter().map(|f| f.path.as_str()));
            sync.refused_paths(done.deleted.iter().map(String::as_str));
            done.changed.clear();
            done.deleted.clear();
            out.changes_not_kept(&e.to_string(), ro.max_output_bytes as usize);
        }
        // Files the run created, changed or deleted come back; the host checks and commits them.
        let returned = inner.sync.borrow_mut().returned(
            &inner.files.borrow(),
            std::mem::take(&mut done.changed),
            std::mem::take(&mut done.deleted),
            js::wall_ms(),
            &inner.opts.read_only,
        );
        if inner.closed.get() && !returned.ops.is_empty() {
            // Closed while the reply was on its way: the den's lock and name may be another's.
            closed_before_commit(&mut out, ro.timeout_ms, ro.max_output_bytes as usize);
            out.note(&returned.notes, ro.max_output_bytes as usize);
            return Ok(inner.end_run(seq, &code, &out));
        }
        match inner.commit(returned.ops.clone(), "run").await {
            Ok(c) => {
                inner.sync.borrow_mut().committed(&returned);
                out.files = c;
            }
            Err(e) => {
                // Nothing was kept; the worker holds files the store refused: resync them next run.
                inner.sync.borrow_mut().refused(&returned);
                out.changes_not_kept(&e.message(), ro.max_output_bytes as usize);
            }
        }
        // The notes on paths not kept come after what the commit said: they cannot fill the
        // room past the output cap before it.
        out.note(&returned.notes, ro.max_output_bytes as usize);
        if out.restarted {
            inner.sync.borrow_mut().reset();
        }
        Ok(inner.end_run(seq, &code, &out))
    }

    /// Who answers this run's `input()`: the run's `onInput`, else the element (its `input`
    /// event), else nobody (`None`: the run is not interactive). Scripted stdin comes first.
    pub(super) fn input_handler(&self, seq: u32, ro: &RunOptions) -> Option<InputHandler> {
        if ro.stdin.is_some() || ro.javascript {
            return None;
        }
        if let Some(f) = ro.on_input.clone() {
            return Some(Rc::new(move |prompt: &str| {
                let req = obj(&[("runId", seq.into()), ("prompt", prompt.into())]);
                let called = f.call1(&JsValue::UNDEFINED, &req);
                Box::pin(async move {
                    let v = match called {
                        Ok(v) => js::adopt(&v).await,
                        Err(e) => Err(e),
                    };
                    match v {
                        Ok(v) => answer_from_js(&v),
                        Err(e) => Answer::Failed(format!("onInput failed: {}", js::describe(&e))),
                    }
                })
            }));
        }
        if self.inner.sink.borrow().is_none() {
            return None;
        }
        let weak = Rc::downgrade(&self.inner);
        Some(Rc::new(move |prompt: &str| {
            let (tx, rx) = futures::channel::oneshot::channel();
            let reply = InputReply::new(tx);
            if let Some(i) = weak.upgrade() {
                i.emit(&DenEvent::Input {
                    run_id: seq,
                    prompt,
                    reply: &reply,
                });
            }
            // Nobody took it: end of input, with a message that says how to answer.
            reply.answer_unless_deferred(Answer::Failed(NO_ANSWER.into()));
            Box::pin(async move { rx.await.unwrap_or(Answer::Eof) })
        }))
    }
}

/// A display kept for run `seq` goes to its `onDisplay`, then to the den's `display` event
/// (while the den lives).
pub(super) fn send_display(
    inner: Option<&Inner>,
    on_display: Option<&Function>,
    seq: u32,
    display: &Display,
) {
    if let Some(f) = on_display {
        let _ = f.call1(&JsValue::UNDEFINED, &display_chunk(seq, display));
    }
    if let Some(i) = inner {
        i.emit(&DenEvent::Display {
            run_id: seq,
            display,
        });
    }
}

/// What `input()` raises when the element's `input` event was not answered.
const NO_ANSWER: &str = "nobody answered input(): a listener of the element's `input` event \
     calls event.detail.respond(text) (or event.preventDefault(), then respond later)";

/// The answer an `onInput` handler gave: a string, `null`/`undefined` (end of input), or a
/// value of another type (a failure that names it).
pub(crate) fn answer_from_js(v: &JsValue) -> Answer {
    if let Some(s) = v.dyn_ref::<js_sys::JsString>() {
        // Too many UTF-16 units (each one UTF-8 byte or more) is refused before the copy.
        if s.length() as usize > foxden_core::input::MAX_ANSWER_BYTES {
            return Answer::Failed(format!(
                "the answer to input() is {} UTF-16 units, over the cap of {} bytes",
                s.length(),
                foxden_core::input::MAX_ANSWER_BYTES
            ));
        }
        Answer::from_handler(Some(String::from(s)), None)
    } else if v.is_null() || v.is_undefined() {
        Answer::Eof
    } else {
        Answer::from_handler(
            None,
            Some(&format!(
                "a {}",
                v.js_typeof().as_string().unwrap_or_default()
            )),
        )
    }
}
