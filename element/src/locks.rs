//! Web Locks: one page at a time holds an IndexedDB den, so two tabs never silently lose a write.
//!
//! `acquire` asks for the lock with `ifAvailable`: a second page that opens the same den name
//! gets a `DenError` with code `locked` at once, and can open it after the first page closes
//! the den (or is closed). Without the Web Locks API (an insecure context), no lock is taken.

use crate::errors::den_error;
use crate::js::{get, is_absent, obj};
use futures::channel::oneshot;
use js_sys::{Function, Promise, Reflect};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A held lock; dropping it releases the lock.
pub struct HeldLock {
    release: Option<Function>,
    /// The den's name: a lock dropped without `release` (an opening cancelled) is waited for by
    /// the next opening of that name, as a close is.
    den: String,
    /// What `locks.request` returned: it settles once the lock manager let the lock go.
    released: Promise,
    _callback: Closure<dyn FnMut(JsValue) -> Promise>,
}

impl HeldLock {
    /// Releases the lock; the promise settles once it is free (another request may have it).
    pub fn release(mut self) -> Promise {
        if let Some(r) = self.release.take() {
            let _ = r.call0(&JsValue::UNDEFINED);
        }
        self.released.clone()
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        if let Some(r) = self.release.take() {
            let _ = r.call0(&JsValue::UNDEFINED);
            // The lock manager frees the lock a little later: an opening of the same name
            // started meanwhile (the element reopening) waits for that instead of `locked`.
            crate::den::closing_until(&self.den, self.released.clone());
        }
    }
}

/// What the lock manager's callback sends: granted, and the function that lets the lock go.
type Answer = (bool, Option<Function>);

/// A lock request whose answer was not taken yet. If the opening is dropped first (the
/// element's attribute changed, say):
/// - a lock already granted but not taken (the answer waits in `answer`) is let go now;
/// - the callback lives until the request settles, rather than leaving the lock manager a freed
///   closure to call (that threw, unhandled, on the page); a lock granted after the drop is let
///   go at once by the callback itself (its answer cannot be sent);
/// - the next opening of the name waits until the request settled, as for a close.
struct Pending {
    callback: Option<Closure<dyn FnMut(JsValue) -> Promise>>,
    answer: oneshot::Receiver<Answer>,
    released: Promise,
    den: String,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.answer.close();
        if let Ok(Some((true, Some(release)))) = self.answer.try_recv() {
            let _ = release.call0(&JsValue::UNDEFINED);
        }
        if let Some(callback) = self.callback.take() {
            crate::den::closing_until(&self.den, self.released.clone());
            let released = self.released.clone();
            crate::callback::spawn_local(Box::pin(async move {
                let _ = wasm_bindgen_futures::JsFuture::from(released).await;
                drop(callback);
            }));
        }
    }
}

pub async fn acquire(name: &str, den: &str) -> Result<HeldLock, JsValue> {
    // Without Web Locks (a page that is not a secure context has none, though it has
    // IndexedDB) two tabs could open the den at once and overwrite each other's files: refused.
    let found = web_sys::window()
        .map(|w| get(&w.navigator(), "locks"))
        .filter(|locks| !is_absent(locks))
        .and_then(|locks| {
            let request: Function = get(&locks, "request").dyn_into().ok()?;
            Some((locks, request))
        });
    let Some((locks, request)) = found else {
        return Err(crate::errors::den_error(
            crate::errors::DenErrorCode::Storage,
            "an IndexedDB den needs Web Locks, which this page lacks (they need a secure context: \
             https, or http on localhost): without them two tabs could open the den at once and \
             overwrite each other's files. Serve the page over https, or use memoryStore()",
        ));
    };
    let (tx, rx) = oneshot::channel::<Answer>();
    let tx = Rc::new(RefCell::new(Some(tx)));
    let callback = Closure::<dyn FnMut(JsValue) -> Promise>::new(move |lock: JsValue| {
        let granted = !is_absent(&lock);
        let mut release = None;
        // Keep the lock until `release` is called (by HeldLock::drop).
        let p = if granted {
            Promise::new(&mut |res, _| release = Some(res))
        } else {
            Promise::resolve(&JsValue::UNDEFINED)
        };
        if let Some(t) = tx.borrow_mut().take() {
            // Nobody waits any more (the opening was dropped): let the lock go at once.
            if let Err((_, Some(release))) = t.send((granted, release)) {
                let _ = release.call0(&JsValue::UNDEFINED);
            }
        }
        p
    });
    let opts = obj(&[("ifAvailable", true.into())]);
    // A browser may refuse the Locks API here (an opaque-origin page, storage blocked, a
    // document no longer active): the request throws or its promise rejects without calling
    // back. Its promise settling first ends the wait with that refusal.
    let refused = |why: String| {
        den_error(
            crate::errors::DenErrorCode::Storage,
            &format!("the browser refused a Web Lock for the den {den:?} (it keeps two pages from writing one den at once): {why}"),
        )
    };
    let released = match Reflect::apply(
        &request,
        &locks,
        &js_sys::Array::of3(&name.into(), &opts, callback.as_ref()),
    ) {
        Ok(p) => p
            .dyn_into::<Promise>()
            .unwrap_or_else(|v| Promise::resolve(&v)),
        Err(e) => return Err(refused(crate::js::describe(&e))),
    };
    let mut pending = Pending {
        callback: Some(callback),
        answer: rx,
        released: released.clone(),
        den: den.to_owned(),
    };
    let settled = wasm_bindgen_futures::JsFuture::from(released.clone());
    let answer = match futures::future::select(&mut pending.answer, settled).await {
        futures::future::Either::Left((answer, _)) => answer,
        futures::future::Either::Right((Err(e), _)) => {
            return Err(refused(crate::js::describe(&e)))
        }
        futures::future::Either::Right((Ok(_), _)) => {
            return Err(refused("it settled the request without a lock".into()))
        }
    };
    match (answer, pending.callback.take()) {
        (Ok((true, release)), Some(callback)) => Ok(HeldLock {
            release,
            den: den.to_owned(),
            released,
            _callback: callback,
        }),
        _ => Err(den_error(crate::errors::DenErrorCode::Locked,
            &format!("the den {den:?} is open in another tab or window; close it there first (two pages never write one den at once)"),
        )),
    }
}
