//! The den's events and results as Rust values, and their conversion to JavaScript objects at
//! the edge (the shapes of the `.d.ts`: `RunResult`, `FileChanges`, the events' `detail`).

use crate::errors::{den_error, path_error, DenErrorCode};
use crate::js::{obj, str_array};
use foxden_core::files::{ChangeSet, StorageError};
use foxden_core::input::Answer;
use foxden_core::outcome::{Display, DisplayData, RunOutcome};
use foxden_core::protocol::RunError;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// A den-level event; the element turns each into a DOM event and a UI update.
pub enum DenEvent<'a> {
    /// A run starts.
    RunStart {
        /// The run's number in this den.
        id: u32,
        /// Its code.
        code: &'a str,
    },
    /// A run ended.
    RunEnd {
        /// The run's number in this den.
        id: u32,
        /// Its code.
        code: &'a str,
        /// What it resolves with.
        outcome: &'a RunOutcome,
        /// The same, as the object `run()` resolves with.
        result: &'a JsValue,
    },
    /// A chunk of output, as it is printed.
    Output {
        /// The run's number.
        run_id: u32,
        /// "stdout" or "stderr".
        stream: &'a str,
        /// The text.
        text: &'a str,
    },
    /// A rich display (MIME bundle), in order with the output.
    Display {
        /// The run's number.
        run_id: u32,
        /// The bundle.
        display: &'a Display,
    },
    /// A run's `input()` waits for a line: someone answers through `reply`.
    Input {
        /// The run's number.
        run_id: u32,
        /// The prompt (already printed to stdout).
        prompt: &'a str,
        /// Where the answer goes; unanswered after the event, it is end of input.
        reply: &'a Rc<InputReply>,
    },
    /// A `foxden.fetch` request ended (allowed or refused).
    Request {
        /// The run's number.
        run_id: u32,
        /// What happened.
        record: &'a foxden_core::net::RequestRecord,
    },
    /// Files changed.
    FileChange {
        /// "run", "write", "delete" or "restore".
        source: &'a str,
        /// What changed.
        changes: &'a ChangeSet,
    },
}

/// The answer slot of one `input()` request: the first answer wins, later ones are ignored.
pub struct InputReply {
    tx: std::cell::RefCell<Option<futures::channel::oneshot::Sender<Answer>>>,
    deferred: std::cell::Cell<bool>,
}

impl InputReply {
    /// A slot whose answer goes to `tx`.
    pub fn new(tx: futures::channel::oneshot::Sender<Answer>) -> Rc<Self> {
        Rc::new(InputReply {
            tx: std::cell::RefCell::new(Some(tx)),
            deferred: std::cell::Cell::new(false),
        })
    }

    /// Answers, if no answer was given yet.
    pub fn answer(&self, a: Answer) {
        if let Some(tx) = self.tx.borrow_mut().take() {
            let _ = tx.send(a);
        }
    }

    /// Someone promised to answer later (the event's `preventDefault()`).
    pub fn defer(&self) {
        self.deferred.set(true);
    }

    /// Whether an answer was given.
    pub fn answered(&self) -> bool {
        self.tx.borrow().is_none()
    }

    /// Answers now unless someone promised to answer later.
    pub fn answer_unless_deferred(&self, a: Answer) {
        if !self.deferred.get() {
            self.answer(a);
        }
    }
}

/// A listener for den events (the element's).
pub type EventSink = Rc<dyn Fn(&DenEvent)>;

impl DenEvent<'_> {
    /// The DOM event type.
    pub fn kind(&self) -> &'static str {
        match self {
            DenEvent::RunStart { .. } | DenEvent::RunEnd { .. } => "run",
            DenEvent::Output { .. } => "output",
            DenEvent::Display { .. } => "display",
            DenEvent::Input { .. } => "input",
            DenEvent::Request { .. } => "request",
            DenEvent::FileChange { .. } => "file-change",
        }
    }

    /// The DOM event's `detail`.
    pub fn detail(&self) -> JsValue {
        match self {
            DenEvent::RunStart { id, code } => obj(&[
                ("id", (*id).into()),
                ("phase", "start".into()),
                ("code", (*code).into()),
            ])
            .into(),
            DenEvent::RunEnd {
                id, code, result, ..
            } => obj(&[
                ("id", (*id).into()),
                ("phase", "end".into()),
                ("code", (*code).into()),
                ("result", (*result).clone()),
            ])
            .into(),
            DenEvent::Output {
                run_id,
                stream,
                text,
            } => output_chunk(*run_id, stream, text),
            DenEvent::Display { run_id, display } => display_chunk(*run_id, display),
            DenEvent::Input { run_id, prompt, .. } => {
                obj(&[("runId", (*run_id).into()), ("prompt", (*prompt).into())]).into()
            }
            DenEvent::Request { run_id, record } => super::net::request_chunk(*run_id, record),
            DenEvent::FileChange { source, changes } => {
                let detail = changes_js(changes);
                let _ = js_sys::Reflect::set(&detail, &"source".into(), &(*source).into());
                detail
            }
        }
    }
}

/// An `OutputChunk`.
pub(crate) fn output_chunk(run_id: u32, stream: &str, text: &str) -> JsValue {
    obj(&[
        ("runId", run_id.into()),
        ("stream", stream.into()),
        ("text", text.into()),
    ])
    .into()
}

/// A MIME bundle as an object: `{ "image/png": Uint8Array, "text/plain": "…" }`.
pub(crate) fn bundle_js(display: &Display) -> JsValue {
    let o = js_sys::Object::new();
    for (mime, data) in display {
        let v: JsValue = match data {
            DisplayData::Text(s) => s.as_str().into(),
            DisplayData::Bytes(b) => js_sys::Uint8Array::from(b.as_slice()).into(),
        };
        let _ = js_sys::Reflect::set(&o, &mime.as_str().into(), &v);
    }
    o.into()
}

/// A `DisplayChunk`: `{ runId, data }`.
pub(crate) fn display_chunk(run_id: u32, display: &Display) -> JsValue {
    obj(&[("runId", run_id.into()), ("data", bundle_js(display))]).into()
}

/// `FileChanges`.
pub(crate) fn changes_js(c: &ChangeSet) -> JsValue {
    obj(&[
        ("created", str_array(&c.created).into()),
        ("changed", str_array(&c.changed).into()),
        ("deleted", str_array(&c.deleted).into()),
    ])
    .into()
}

/// `RunError`.
pub(crate) fn error_js(e: &RunError) -> JsValue {
    obj(&[
        ("kind", e.kind.as_str().into()),
        ("type", e.ty.as_str().into()),
        ("message", e.message.as_str().into()),
        ("traceback", e.traceback.as_str().into()),
    ])
    .into()
}

/// `RunResult`.
pub(crate) fn outcome_js(o: &RunOutcome) -> JsValue {
    obj(&[
        ("stdout", o.stdout.as_str().into()),
        ("stderr", o.stderr.as_str().into()),
        (
            "result",
            o.result.as_deref().map_or(JsValue::NULL, JsValue::from),
        ),
        ("error", o.error.as_ref().map_or(JsValue::NULL, error_js)),
        ("truncated", o.truncated.into()),
        ("files", changes_js(&o.files)),
        ("durationMs", o.duration_ms.into()),
        ("restarted", o.restarted.into()),
        (
            "displays",
            o.displays
                .iter()
                .map(bundle_js)
                .collect::<js_sys::Array>()
                .into(),
        ),
        (
            "requests",
            o.requests
                .iter()
                .map(super::net::request_info)
                .collect::<js_sys::Array>()
                .into(),
        ),
    ])
    .into()
}

/// A refused batch of file changes, as the `DenError` (or `PathError`) the caller gets.
pub fn storage_to_js(e: &StorageError) -> JsValue {
    match e {
        StorageError::Path(p) => path_error(p),
        StorageError::CapExceeded { .. }
        | StorageError::TooManyFiles { .. }
        | StorageError::FileTooBig { .. }
        | StorageError::TooManyWrites { .. } => den_error(DenErrorCode::Cap, &e.to_string()),
        StorageError::Conflict { .. } => den_error(DenErrorCode::Conflict, &e.to_string()),
        StorageError::NoRoom { .. } => den_error(DenErrorCode::Storage, &e.to_string()),
    }
}
