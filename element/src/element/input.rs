//! The element's side of interactive `input()`: each request of a run becomes a cancelable
//! `input` event whose `detail` is `{ runId, prompt, respond(text) }`.
//!
//! A listener answers at once with `event.detail.respond("42")` (or `respond(null)` for end of
//! input), or calls `event.preventDefault()` and answers later. A request nobody took is end
//! of input: Python's `input()` raises `EOFError` with a message that says how to answer.
//! `respond` is one function per element (owned here, dropped with the element), bound to a
//! request number: a stale `respond` of an earlier request does nothing.

use crate::den::{answer_from_js, InputReply};
use foxden_core::input::Answer;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The request waiting for an answer.
struct Waiting {
    /// Its number (what `respond` is bound to).
    n: u32,
    /// The run that asked.
    run_id: u32,
    /// Whether the controls' input line asks the reader for it (nobody on the page took it).
    in_line: bool,
    reply: Rc<InputReply>,
}

type Pending = Rc<RefCell<Option<Waiting>>>;
/// `respond(n, text)`, before it is bound to a request number.
type Respond = Closure<dyn FnMut(u32, JsValue)>;

#[derive(Default)]
pub(crate) struct InputDesk {
    pending: Pending,
    seq: Cell<u32>,
    respond: RefCell<Option<Respond>>,
}

impl InputDesk {
    /// Answers the waiting request (the controls' input line); false when none waits.
    pub(crate) fn answer_pending(&self, text: &JsValue) -> bool {
        let taken = self.pending.borrow_mut().take_if(|w| w.in_line);
        match taken {
            Some(w) if !w.reply.answered() => {
                w.reply.answer(answer_from_js(text));
                true
            }
            _ => false,
        }
    }

    /// Whether a request waits for the input line's answer.
    pub(crate) fn waiting(&self) -> bool {
        self.pending
            .borrow()
            .as_ref()
            .is_some_and(|w| w.in_line && !w.reply.answered())
    }

    /// The waiting request is to be answered in the input line.
    pub(crate) fn ask_in_line(&self) {
        if let Some(w) = self.pending.borrow_mut().as_mut() {
            w.in_line = true;
        }
    }

    /// Forgets the request of a run that ended (nothing can answer it any more).
    pub(crate) fn run_ended(&self, run_id: u32) {
        self.pending.borrow_mut().take_if(|w| w.run_id == run_id);
    }

    /// Answers the waiting request with end of input, saying `why`: the input line that was
    /// to answer it went away (`only_line`), or the element left the den. Without this, the
    /// run would wait for good (its clock stops while it waits), and every later call on the
    /// den with it.
    pub(crate) fn cancel(&self, only_line: bool, why: &str) {
        let taken = self
            .pending
            .borrow_mut()
            .take_if(|w| w.in_line || !only_line);
        if let Some(w) = taken {
            w.reply.answer(Answer::Failed(why.to_owned()));
        }
    }

    /// Takes a request of run `run_id`; returns the `respond` function for its event's detail.
    pub(crate) fn take(&self, reply: &Rc<InputReply>, run_id: u32) -> JsValue {
        let n = self.seq.get().wrapping_add(1);
        self.seq.set(n);
        *self.pending.borrow_mut() = Some(Waiting {
            n,
            run_id,
            in_line: false,
            reply: reply.clone(),
        });
        let mut slot = self.respond.borrow_mut();
        let respond = slot.get_or_insert_with(|| {
            let pending = self.pending.clone();
            Closure::new(move |n: u32, text: JsValue| {
                let current = pending.borrow_mut().take_if(|w| w.n == n);
                if let Some(w) = current {
                    w.reply.answer(answer_from_js(&text));
                }
            })
        });
        let f: &js_sys::Function = respond.as_ref().unchecked_ref();
        f.bind1(&JsValue::NULL, &n.into()).into()
    }
}
