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
use crate::callback::with_timeout;
use crate::errors::load_error;
use crate::js::{get, get_f64, is_absent};
use foxden_core::codes::LoadStage;
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
    pub(crate) fn from_js(runtime: &JsValue) -> Option<Result<Rc<Self>, JsValue>> {
        let f = |k: &'static str| get(runtime, k).dyn_into::<Function>().ok();
        let run = f("run")?;
        Some(match (f("start"), f("close")) {
            (Some(start), Some(close)) => Ok(Rc::new(Adapter {
                this: runtime.clone(),
                start,
                run,
                close,
                reset: f("reset"),
            })),
            _ => Err(option_error(
                "runtime",
                "a runtime adapter needs start(), run(request) and close() functions",
            )),
        })
    }

    /// Calls `f(arg)` and waits for what it returns (a value or a promise) up to `ms`:
    /// `None` when it did not settle in time.
    async fn call(&self, f: &Function, arg: &JsValue, ms: f64) -> Option<Result<JsValue, JsValue>> {
        let settled = match f.call1(&self.this, arg) {
            Ok(v) => wasm_bindgen_futures::JsFuture::from(Promise::resolve(&v)),
            Err(e) => return Some(Err(e)),
        };
        with_timeout(settled, ms).await
    }

    /// `start()`, when a den opens; a failure is the opening's `DenLoadError`.
    pub(crate) async fn start(&self, timeout_ms: f64) -> Result<(), JsValue> {
        match self.call(&self.start, &JsValue::UNDEFINED, timeout_ms).await {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(load_error(
                LoadStage::Runtime,
                &format!("the runtime adapter's start() failed: {}", js::describe(&e)),
            )),
            None => Err(load_error(
                LoadStage::Timeout,
                &format!("the runtime adapter's start() did not settle within {timeout_ms} ms (loadTimeoutMs)"),
            )),
        }
    }

    /// `reset()`, if the adapter has one.
    pub(crate) async fn reset(&self, timeout_ms: f64) -> Result<JsValue, JsValue> {
        let Some(reset) = &self.reset else {
            return Err(den_error(
                crate::errors::DenErrorCode::Reset,
                "this den's runtime adapter has no reset()",
            ));
        };
        match self.call(reset, &JsValue::UNDEFINED, timeout_ms).await {
            Some(Ok(_)) => Ok(obj(&[("from", "adapter".into()), ("bootMs", 0.into())]).into()),
            Some(Err(e)) => Err(den_error(
                crate::errors::DenErrorCode::Reset,
                &format!("the runtime adapter's reset() failed: {}", js::describe(&e)),
            )),
            None => Err(den_error(
                crate::errors::DenErrorCode::Reset,
                &format!("the runtime adapter's reset() did not settle within {timeout_ms} ms"),
            )),
        }
    }

    /// `close()`, when the den closes (what it returns or throws is not waited for).
    pub(crate) fn close(&self) {
        if let Ok(p) = self.close.call0(&self.this) {
            // Awaited only so that a rejection is handled (it would surface on the page).
            wasm_bindgen_futures::spawn_local(async move {
                let _ = wasm_bindgen_futures::JsFuture::from(Promise::resolve(&p)).await;
            });
        }
    }
}

/// `den.info` of an adapter den.
pub(crate) fn info(load_ms: f64) -> JsValue {
    obj(&[
        ("kind", "adapter".into()),
        ("isolation", "adapter".into()),
        ("loadMs", load_ms.into()),
        ("interruptible", false.into()),
        ("warmStart", "off".into()),
        ("stages", JsValue::NULL),
    ])
    .into()
}

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
        let seq = inner.start_run(&code, ro.tag);
        let files = Object::new();
        for (path, e) in inner.files.borrow().iter() {
            let _ = js_sys::Reflect::set(&files, &path.into(), &bytes_to_js(&e.data));
        }
        let request = obj(&[
            ("id", seq.into()),
            ("code", code.as_str().into()),
            ("lang", ro.lang().into()),
            ("timeoutMs", ro.timeout_ms.into()),
            ("maxOutputBytes", ro.max_output_bytes.into()),
            ("stdin", ro.stdin_js()),
            ("files", files.into()),
        ]);
        let cap = ro.max_output_bytes as usize;
        let started = js::now_ms();
        let grace = ro.timeout_ms + f64::from(limits::HOST_WATCHDOG_GRACE_MS);
        let answer = if inner.closed.get() {
            None
        } else {
            adapter.call(&adapter.run, &request.into(), grace).await
        };
        let duration_ms = js::now_ms() - started;
        let mut out = RunOutcome {
            duration_ms,
            ..Default::default()
        };
        let mut output = OutputBuffer::new(cap);
        let mut ops = Vec::new();
        let mut notes = String::new();
        let mut refused = None;
        match answer {
            _ if inner.closed.get() => {
                out.error = Some(lost_den_error(LostDen::Closed, ro.timeout_ms, ""));
            }
            None => {
                out.error = Some(RunError::new(
                    ErrorKind::Timeout,
                    "TimeoutError",
                    format!(
                        "the runtime adapter did not answer within {grace} ms (timeoutMs + {} ms)",
                        limits::HOST_WATCHDOG_GRACE_MS
                    ),
                ));
            }
            Some(Err(e)) => {
                out.error = Some(RunError::new(
                    ErrorKind::Crashed,
                    "AdapterError",
                    format!("the runtime adapter's run() failed: {}", js::describe(&e)),
                ));
            }
            Some(Ok(reply)) => {
                match read_reply(&reply, cap, inner, &mut ops, &mut notes, &mut refused) {
                    Ok((stdout, stderr, result, error)) => {
                        for (stream, text) in [(Stream::Stdout, stdout), (Stream::Stderr, stderr)] {
                            let kept = output.push(stream, &text);
                            if !kept.is_empty() {
                                if let Some(f) = &ro.on_output {
                                    let _ = f.call1(
                                        &JsValue::UNDEFINED,
                                        &output_chunk(seq, stream.as_str(), &kept),
                                    );
                                }
                                inner.emit(&DenEvent::Output {
                                    run_id: seq,
                                    stream: stream.as_str(),
                                    text: &kept,
                                });
                            }
                        }
                        out.result = result;
                        out.error = error;
                    }
                    Err(why) => {
                        ops.clear();
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
        out.truncated = output.truncated;
        out.stdout = std::mem::take(&mut output.stdout);
        out.stderr = std::mem::take(&mut output.stderr);
        out.stderr.push_str(&notes);
        if let Some(r) = &mut out.result {
            out.truncated |= clip(r, cap);
        }
        if let Some(why) = refused {
            out.changes_not_kept(&why);
        } else if !ops.is_empty() && !inner.closed.get() {
            match inner.commit(ops, "run").await {
                Ok(c) => out.files = c,
                Err(e) => out.changes_not_kept(&e.message()),
            }
        }
        Ok(inner.end_run(seq, &code, &out))
    }
}

/// Output, result and error.
type Reply = (String, String, Option<String>, Option<RunError>);

/// Reads an adapter's answer `{ stdout?, stderr?, result?, error?, files? }`; `files` maps
/// paths to new contents (bytes or a string) or `null` (deleted). Paths that break the rules
/// are not kept (a note in `notes`); a file over `maxFileBytes` refuses them all (`refused`);
/// a wrong type is an error naming the field.
fn read_reply(
    reply: &JsValue,
    cap: usize,
    inner: &Inner,
    ops: &mut Vec<Op>,
    notes: &mut String,
    refused: &mut Option<String>,
) -> Result<Reply, String> {
    if !reply.is_object() {
        return Err(
            "run() must resolve to an object { stdout, stderr, result, error, files }".into(),
        );
    }
    let text = |k: &'static str| -> Result<Option<String>, String> {
        let v = get(reply, k);
        if is_absent(&v) {
            return Ok(None);
        }
        // Bounded before it is copied into wasm: the cap, and a little more to see the cut.
        crate::wire::text(&v, cap.saturating_add(4))
            .map(|(s, _)| Some(s))
            .ok_or_else(|| format!("{k} must be a string"))
    };
    let stdout = text("stdout")?.unwrap_or_default();
    let stderr = text("stderr")?.unwrap_or_default();
    let result = text("result")?;
    let error = crate::wire::error(&get(reply, "error"), cap).map_err(|e| e.to_string())?;
    let files = get(reply, "files");
    if !is_absent(&files) {
        if !files.is_object() {
            return Err("files must be an object { path: Uint8Array | string | null }".into());
        }
        let keys = Object::keys(files.unchecked_ref::<Object>());
        let max = inner.opts.max_files.max(limits::DEFAULT_MAX_FILES) as u32;
        if keys.length() > max {
            return Err(format!(
                "files names {} files, more than {max}",
                keys.length()
            ));
        }
        for key in keys.iter() {
            let Some(raw) = key.as_string() else { continue };
            let path = match normalize_file_path(&raw) {
                Ok(p) => p,
                Err(e) => {
                    notes.push_str(&format!("foxden: {raw:?} was not kept: {e}\n"));
                    continue;
                }
            };
            let v = get_key(&files, &key);
            if v.is_null() {
                if inner.files.borrow().get(&path).is_some() {
                    ops.push(Op::Delete { path });
                }
                continue;
            }
            let view = match v.dyn_ref::<js_sys::JsString>() {
                Some(s) => js::utf8_of(s).ok(),
                None => js::byte_view(&v),
            };
            let size = view.as_ref().and_then(|v| get_f64(v, "length"));
            let (Some(view), Some(size)) = (view, size) else {
                return Err(format!(
                    "files[{raw:?}] must be a Uint8Array, an ArrayBuffer, a string or null"
                ));
            };
            if size > inner.opts.max_file_bytes as f64 {
                // None of the changes is kept (as the commit refuses a batch whole), and this
                // one is not even copied.
                *refused = Some(
                    StorageError::FileTooBig {
                        path,
                        size: size as u64,
                        max: inner.opts.max_file_bytes,
                    }
                    .to_string(),
                );
                ops.clear();
                break;
            }
            let bytes = js::shared_bytes(&view).map_err(|e| e.to_string())?;
            ops.push(Op::Put {
                path,
                entry: FileEntry::new(bytes, js::wall_ms()),
            });
        }
    }
    Ok((stdout, stderr, result, error))
}

/// `target[key]` for a key that is already a JS value.
fn get_key(target: &JsValue, key: &JsValue) -> JsValue {
    js_sys::Reflect::get(target, key).unwrap_or(JsValue::UNDEFINED)
}
