//! `loading="lazy"`: an element that opens its den only when it is about to be seen, or when
//! something needs the den (a method, the Run button), like `<img loading="lazy">`.
//!
//! A page of worked examples or exercises may hold dozens of elements; each den costs an
//! interpreter (two with the standby one). A lazy element costs nothing until then: no iframe, no
//! worker, no request. The decision (wait, open) is `foxden_core::phase::reconcile`'s; this file
//! only watches the viewport and wakes the element.

use super::lifecycle::{schedule, State};
use js_sys::Array;
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{IntersectionObserver, IntersectionObserverEntry, IntersectionObserverInit};

/// How far outside the viewport an element starts to load: the den is often ready by the time
/// the reader has scrolled to it.
const ROOT_MARGIN: &str = "200px";

/// An IntersectionObserver watching one waiting element; `Drop` disconnects it and frees its
/// callback. It is dropped by a reconcile (never from its own callback, which only wakes the
/// element and schedules that reconcile).
pub(crate) struct Watch {
    observer: IntersectionObserver,
    _callback: Closure<dyn FnMut(Array, IntersectionObserver)>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.observer.disconnect();
        crate::leak_check::listener_dropped();
    }
}

/// Watches `host` for coming near the viewport. `None` where there is no IntersectionObserver
/// (the element then waits for a method or the Run button).
pub(crate) fn watch(state: &Rc<State>, host: &web_sys::Element) -> Option<Watch> {
    let weak: Weak<State> = Rc::downgrade(state);
    let callback = Closure::<dyn FnMut(Array, IntersectionObserver)>::new(
        move |entries: Array, _: IntersectionObserver| {
            let near = entries.iter().any(|e| {
                e.dyn_into::<IntersectionObserverEntry>()
                    .is_ok_and(|e| e.is_intersecting())
            });
            if let (true, Some(s)) = (near, weak.upgrade()) {
                wake(&s);
            }
        },
    );
    let init = IntersectionObserverInit::new();
    init.set_root_margin(ROOT_MARGIN);
    let observer =
        IntersectionObserver::new_with_options(callback.as_ref().unchecked_ref(), &init).ok()?;
    observer.observe(host);
    crate::leak_check::listener_created();
    Some(Watch {
        observer,
        _callback: callback,
    })
}

/// Something asked for the den of a lazy element: from now on it behaves as an eager one (a
/// later change of its den attributes reopens at once). The opening starts in the reconcile.
pub(crate) fn wake(state: &Rc<State>) {
    if !state.woken.replace(true) {
        schedule(state, false);
    }
}

thread_local! {
    /// Lazy elements of shared environments that wait, by environment.
    static WAITING: RefCell<Vec<(String, Weak<State>)>> = const { RefCell::new(Vec::new()) };
}

/// A lazy element of the shared environment `env` waits: it is woken with the first of them.
pub(crate) fn wait_in_env(env: &str, state: &Rc<State>) {
    WAITING.with(|w| {
        let mut w = w.borrow_mut();
        w.retain(|(_, s)| s.strong_count() > 0);
        if !w
            .iter()
            .any(|(e, s)| e == env && std::ptr::eq(s.as_ptr(), Rc::as_ptr(state)))
        {
            w.push((env.to_owned(), Rc::downgrade(state)));
        }
    });
}

/// The shared environment `env` opens: every element of it that waits joins now, so the
/// environment has all its elements' setup code, as an eager lesson does.
pub(crate) fn wake_env(env: &str) {
    let waiting: Vec<Rc<State>> = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let mut woken = Vec::new();
        w.retain(|(e, s)| {
            if e != env {
                return s.strong_count() > 0;
            }
            woken.extend(s.upgrade());
            false
        });
        woken
    });
    for s in waiting {
        // Still waiting, and still of this environment (its `env` may have changed since).
        let same_env = s
            .host
            .borrow()
            .as_ref()
            .is_some_and(|h| h.get_attribute("env").as_deref() == Some(env));
        if same_env && s.phase.borrow().name() == foxden_core::phase::PhaseName::Waiting {
            wake(&s);
        }
    }
}
