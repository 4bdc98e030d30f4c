//! The element's side of interactive `input()`: each request of a run becomes a cancelable
//! `input` event whose `detail` is `{ runId, prompt, respond(text) }`.
//!
//! A listener answers at once with `event.detail.respond("42")` (or `respond(null)` for end of
//! input), or calls `event.preventDefault()` and answers later. A request nobody took is end
//! of input: Python's `input()` raises `EOFError` with a message that says how to answer.
//! `respond` is one function per element (owned here, dropped with the element), bound to a
//! request number: a stale `respond` of an earlier request does nothing.

use crate::den::{answer_from_js, InputReply};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The request waiting for an answer: (its number, its slot).
type Pending = Rc<RefCell<Option<(u32, Rc<InputReply>)>>>;
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
        match self.pending.borrow_mut().take() {
            Some((_, reply)) if !reply.answered() => {
                reply.answer(answer_from_js(text));
                true
            }
            _ => false,
        }
    }

    /// Whether a request waits for its answer.
    pub(crate) fn waiting(&self) -> bool {
        self.pending
            .borrow()
            .as_ref()
            .is_some_and(|(_, r)| !r.answered())
    }

    /// Takes a request; returns the `respond` function for its event's detail.
    pub(crate) fn take(&self, reply: &Rc<InputReply>) -> JsValue {
        let n = self.seq.get().wrapping_add(1);
        self.seq.set(n);
        *self.pending.borrow_mut() = Some((n, reply.clone()));
        let mut slot = self.respond.borrow_mut();
        let respond = slot.get_or_insert_with(|| {
            let pending = self.pending.clone();
            Closure::new(move |n: u32, text: JsValue| {
                let current = pending.borrow_mut().take_if(|(m, _)| *m == n);
                if let Some((_, reply)) = current {
                    reply.answer(answer_from_js(&text));
                }
            })
        });
        let f: &js_sys::Function = respond.as_ref().unchecked_ref();
        f.bind1(&JsValue::NULL, &n.into()).into()
    }
}
