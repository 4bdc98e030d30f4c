//! The page's registry of den names: a name is open once per page (the product sheet), whichever
//! foxden module opened it. A page may load more than one: `foxden.js` and `foxden/api` (two
//! wasm modules), or two bundles that each carry a copy. So the registry is not this module's
//! memory but one JavaScript object per realm, found under `Symbol.for("foxden.dens")` on the
//! global object, defined there by the first module to need it (read-only, not enumerable, not
//! configurable). It holds:
//!
//! - `open`: a `Set` of the names of the dens open (or opening) in the page;
//! - `closing`: a `Map` from a token object to `[name, promise]`: a den of that name is still
//!   closing until the promise settles (an IndexedDB den frees its name and Web Lock once the
//!   transaction in flight ended); an opening of the name waits for it ([`closed_before`]).
//!
//! The two collections are frozen too (no own property can shadow their methods), and their
//! shape is kept as is across foxden versions. Should the global name hold something else, or
//! the global object refuse the property, this module keeps a registry of its own (names are
//! then unique within the module only).

use js_sys::{Array, Map, Object, Promise, Reflect, Set};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// `v` as the `Object` it is.
fn as_object(v: &JsValue) -> &Object {
    v.unchecked_ref()
}

struct Registry {
    open: Set,
    closing: Map,
}

thread_local! {
    static REGISTRY: Registry = Registry::of_page();
}

impl Registry {
    /// The page's registry, defined now if no foxden module did yet.
    fn of_page() -> Self {
        let global = js_sys::global();
        let key: JsValue = js_sys::Symbol::for_("foxden.dens").into();
        if let Some(r) = Reflect::get(&global, &key)
            .ok()
            .and_then(|v| Self::from_js(&v))
        {
            return r;
        }
        let r = Registry {
            open: Set::new(&JsValue::UNDEFINED),
            closing: Map::new(),
        };
        Object::freeze(as_object(&r.open));
        Object::freeze(as_object(&r.closing));
        let shared = crate::js::obj(&[
            ("open", r.open.clone().into()),
            ("closing", r.closing.clone().into()),
        ]);
        Object::freeze(&shared);
        // Not writable, enumerable or configurable (a descriptor's defaults).
        let desc = crate::js::obj(&[("value", shared.into())]);
        let _ = Reflect::define_property(&global, &key, &desc);
        r
    }

    /// The registry another module defined, if `v` has its shape (frozen, as defined).
    fn from_js(v: &JsValue) -> Option<Self> {
        if !v.is_object() || !Object::is_frozen(as_object(v)) {
            return None;
        }
        let open = Reflect::get(v, &"open".into())
            .ok()?
            .dyn_into::<Set>()
            .ok()?;
        let closing = Reflect::get(v, &"closing".into())
            .ok()?
            .dyn_into::<Map>()
            .ok()?;
        if !Object::is_frozen(as_object(&open)) || !Object::is_frozen(as_object(&closing)) {
            return None;
        }
        Some(Registry { open, closing })
    }
}

/// Claims `name` for a den of this page: false if a den of that name is open (or opening).
pub(super) fn claim(name: &str) -> bool {
    REGISTRY.with(|r| {
        let key = JsValue::from_str(name);
        if r.open.has(&key) {
            return false;
        }
        r.open.add(&key);
        true
    })
}

/// Frees `name` (its den closed, or its opening failed).
pub(super) fn release(name: &str) {
    REGISTRY.with(|r| {
        r.open.delete(&JsValue::from_str(name));
    });
}

/// Registers `settled` as a close of the den `name` in progress: openings of that name wait for
/// it ([`closed_before`]): a close under way, or a Web Lock let go without one (an opening
/// cancelled). The entry goes once `settled` settles.
pub(crate) fn closing_until(name: &str, settled: Promise) {
    let token: JsValue = Object::new().into();
    let entry = Array::of2(&name.into(), &settled);
    REGISTRY.with(|r| r.closing.set(&token, &entry));
    crate::callback::spawn_local(Box::pin(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(settled).await;
        REGISTRY.with(|r| r.closing.delete(&token));
    }));
}

/// Waits while a den of this name is still closing, in this module or another: `close()` then
/// `openDen()` of the same name, by the page or by the element, opens once the old den is gone
/// instead of failing.
pub(super) async fn closed_before(name: &str) {
    let key = JsValue::from_str(name);
    loop {
        let mut pending = None;
        REGISTRY.with(|r| {
            r.closing.for_each(&mut |entry, token| {
                if pending.is_none() && Array::is_array(&entry) {
                    let entry: Array = entry.unchecked_into();
                    if entry.get(0) == key {
                        pending = Some((token, entry.get(1)));
                    }
                }
            })
        });
        let Some((token, settled)) = pending else {
            break;
        };
        // Awaited as a value: whatever the entry holds.
        let _ = wasm_bindgen_futures::JsFuture::from(Promise::resolve(&settled)).await;
        // Settled: that close is over (whichever of the two removes its entry first).
        REGISTRY.with(|r| r.closing.delete(&token));
    }
}
