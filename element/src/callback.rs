//! RAII ownership of every JS callback Rust registers: dropping the Rust value removes it.

use futures::channel::oneshot;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::EventTarget;

/// Runs `f` to completion in the background (`wasm_bindgen_futures::spawn_local`), through one
/// function that is not generic: each future type spawned directly adds its own copy of the
/// task code to the wasm module.
pub fn spawn_local(f: Pin<Box<dyn Future<Output = ()>>>) {
    wasm_bindgen_futures::spawn_local(f);
}

/// An event listener; `Drop` removes it.
pub struct Listener {
    target: EventTarget,
    kind: &'static str,
    closure: Closure<dyn FnMut(web_sys::Event)>,
}

impl Listener {
    /// Adds `f` as a listener of `kind` on `target`.
    pub fn new(
        target: &EventTarget,
        kind: &'static str,
        f: impl FnMut(web_sys::Event) + 'static,
    ) -> Self {
        Self::add(target, kind, Closure::wrap(Box::new(f)))
    }

    /// [`Self::new`]'s part that does not depend on the type of the listener's closure.
    fn add(
        target: &EventTarget,
        kind: &'static str,
        closure: Closure<dyn FnMut(web_sys::Event)>,
    ) -> Self {
        let _ = target.add_event_listener_with_callback(kind, closure.as_ref().unchecked_ref());
        crate::leak_check::listener_created();
        Listener {
            target: target.clone(),
            kind,
            closure,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self
            .target
            .remove_event_listener_with_callback(self.kind, self.closure.as_ref().unchecked_ref());
        crate::leak_check::listener_dropped();
    }
}

// The global timer functions, not `window`'s: the same in a page, a worker and Node.js (where a
// den runs with a runtime adapter). Node's timer handle is an object, hence `JsValue`.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
    #[wasm_bindgen(js_name = setInterval)]
    fn set_interval(handler: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearInterval)]
    fn clear_interval(id: &JsValue);
}

/// A one-shot timer usable as a future; `Drop` clears it.
pub struct Sleep {
    id: JsValue,
    _closure: Closure<dyn FnMut()>,
    rx: oneshot::Receiver<()>,
}

/// Resolves after `ms` milliseconds.
pub fn sleep(ms: f64) -> Sleep {
    let (tx, rx) = oneshot::channel();
    let mut tx = Some(tx);
    let closure = Closure::<dyn FnMut()>::new(move || {
        if let Some(tx) = tx.take() {
            let _ = tx.send(());
        }
    });
    // Not f64::clamp: its panic message formats floats, which would bring Rust's float
    // formatting into the wasm module (`as` saturates, and NaN becomes 0).
    #[allow(clippy::manual_clamp)]
    let delay = ms.max(0.0).min(2_147_483_647.0) as i32;
    let id = set_timeout(closure.as_ref().unchecked_ref(), delay);
    Sleep {
        id,
        _closure: closure,
        rx,
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(_) => Poll::Ready(()),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        clear_timeout(&self.id);
    }
}

/// Runs `fut` with a deadline: `None` when `ms` passed first.
pub async fn with_timeout<F: Future>(fut: F, ms: f64) -> Option<F::Output> {
    // By hand, not `futures::future::select`: less code for each kind of future.
    let mut fut = std::pin::pin!(fut);
    let mut timer = sleep(ms);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        Pin::new(&mut timer).poll(cx).map(|()| None)
    })
    .await
}

/// A repeating timer that can be stopped and started again, also from its own callback: the
/// callback is kept while stopped (a closure must not be dropped while it runs). `Drop` clears
/// the timer and frees the callback.
pub struct Ticker {
    closure: Closure<dyn FnMut()>,
    period_ms: i32,
    id: Option<JsValue>,
}

impl Ticker {
    /// A stopped ticker that calls `f` every `period_ms` once started.
    pub fn new(period_ms: i32, f: impl FnMut() + 'static) -> Self {
        Ticker {
            closure: Closure::<dyn FnMut()>::new(f),
            period_ms,
            id: None,
        }
    }

    /// Starts it (a no-op while it runs).
    pub fn start(&mut self) {
        if self.id.is_none() {
            self.id = Some(set_interval(
                self.closure.as_ref().unchecked_ref(),
                self.period_ms,
            ));
        }
    }

    /// Stops it (a no-op while stopped).
    pub fn stop(&mut self) {
        if let Some(id) = self.id.take() {
            clear_interval(&id);
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop();
    }
}
