//! The warm cache: a memory snapshot of a fresh interpreter, kept by the host page between
//! visits so that a later visit's den resumes from it instead of booting Pyodide from scratch.
//!
//! - Where: Cache Storage of the host page's origin, cache `foxden-warm-v2`, one entry whose URL
//!   names the key; clear it with `clearWarmCache()` or `caches.delete("foxden-warm-v2")`.
//!   (`foxden-warm-v1`, the unpacked form of earlier versions, is deleted when a snapshot is
//!   stored.)
//! - Form: packed by [`foxden_core::sparse`] (all-zero pages left out: about half the bytes to
//!   read, hash and hand over). The den's worker unpacks it with the copies the host checked.
//!   The entry's `x-foxden-length` header (the unpacked length) lets the den page start
//!   instantiating Pyodide before the entry is read and checked; a wrong one costs only that.
//! - Key: SHA-256 over the SHA-256s of the three Pyodide files, foxden's version and the protocol
//!   version. Other asset sets (an upgrade) get another key; older entries are deleted.
//! - Integrity: the entry carries the snapshot's SHA-256, checked before the bytes are handed to
//!   the den page; a mismatch (a corrupt or altered entry) deletes it, and the den boots normally
//!   and makes a new one. A snapshot Pyodide refuses to load is dropped the same way (at once,
//!   whether or not the den page later offers a new one), and so is one a den never became
//!   ready from. Only this key's entry is ever read or dropped on opening.
//! - Origin: the snapshot is made by the den page's *maker* worker, which boots with Pyodide's
//!   snapshot options and never runs user code; the den page offers it once. A worker that runs
//!   user code has no way to send one (see docs/architecture.md).
//! - Off: `iframeRuntime({ warmStart: false })`, or `warm-start="off"` on the element.

use crate::js::{get, in_slices, sha256_js};
use js_sys::{Array, ArrayBuffer, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The cache's name (Cache Storage of the host origin).
pub const CACHE: &str = "foxden-warm-v2";
/// The cache of earlier versions (unpacked snapshots), deleted when a snapshot is stored.
const OLD_CACHE: &str = "foxden-warm-v1";
const URL_PREFIX: &str = "https://foxden.invalid/warm/";
const HASH_HEADER: &str = "x-foxden-sha256";
const LENGTH_HEADER: &str = "x-foxden-length";
/// Largest snapshot the host accepts from a den page (Pyodide's are ~30 MB).
pub const MAX_SNAPSHOT_BYTES: u32 = foxden_core::sparse::MAX_TOTAL as u32;

/// SHA-256 of JS bytes: the browser's native digest where there is one (several times faster
/// than hashing in wasm), else `sha256_js`.
pub async fn sha256(bytes: &Uint8Array) -> [u8; 32] {
    let subtle = Reflect::get(&js_sys::global(), &"crypto".into())
        .ok()
        .map(|c| get(&c, "subtle"))
        .filter(|s| s.is_object());
    if let Some(subtle) = subtle {
        if let Ok(buf) = call(&subtle, "digest", &["SHA-256".into(), bytes.into()]).await {
            if let Ok(buf) = buf.dyn_into::<ArrayBuffer>() {
                let mut out = [0u8; 32];
                if buf.byte_length() == 32 {
                    Uint8Array::new(&buf).copy_to(&mut out);
                    return out;
                }
            }
        }
    }
    sha256_js(bytes)
}

/// A SHA-256 started now: the browser's digest copies the bytes when it is called, so the
/// buffer may be transferred (detached) right after [`Digest::start`] returns. Without a native
/// digest (no secure context) the bytes are copied, and hashed in wasm only when the digest is
/// wanted ([`Digest::finish`], after the hand-over) rather than on the way to it.
pub struct Digest(Result<JsFuture, Uint8Array>);

impl Digest {
    /// Starts hashing `bytes` natively where there is a `crypto.subtle`, else keeps a copy.
    pub fn start(bytes: &Uint8Array) -> Self {
        let subtle = Reflect::get(&js_sys::global(), &"crypto".into())
            .ok()
            .map(|c| get(&c, "subtle"))
            .filter(|s| s.is_object());
        if let Some(subtle) = subtle {
            if let Ok(f) = get(&subtle, "digest").dyn_into::<Function>() {
                if let Ok(p) = f.call2(&subtle, &"SHA-256".into(), bytes) {
                    return Digest(Ok(JsFuture::from(Promise::resolve(&p))));
                }
            }
        }
        Digest(Err(bytes.slice(0, bytes.length())))
    }

    /// The digest; `None` if the browser's digest failed (the bytes may be gone by then).
    pub async fn finish(self) -> Option<[u8; 32]> {
        match self.0 {
            Err(copy) => Some(sha256_js(&copy)),
            Ok(pending) => {
                let buf = pending.await.ok()?.dyn_into::<ArrayBuffer>().ok()?;
                let mut out = [0u8; 32];
                if buf.byte_length() != 32 {
                    return None;
                }
                Uint8Array::new(&buf).copy_to(&mut out);
                Some(out)
            }
        }
    }
}

/// The cache key: the pinned SHA-256 of the Pyodide files (the only assets a den boots from:
/// [`super::assets::verify_assets`] refuses others before the den is ready, and an entry is
/// stored only from a den whose assets passed), foxden's version and the protocol's. Known at
/// once: a later visit reads its entry while the assets are fetched and hashed.
pub fn key() -> String {
    let mut h = foxden_core::sha256::Sha256::new();
    for (_, pin) in super::assets::PYODIDE_SHA256 {
        h.update(pin.as_bytes());
    }
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&foxden_core::protocol::PROTOCOL_VERSION.to_le_bytes());
    foxden_core::hex(&h.finalize())
}

/// The entry's URL for `key`.
pub fn url_for(key: &str) -> String {
    format!("{URL_PREFIX}{key}")
}

/// Whether this page has Cache Storage (secure contexts only): without it there is no warm
/// cache, and nothing to hash for one.
pub fn available() -> bool {
    Reflect::get(&js_sys::global(), &"caches".into())
        .map(|c| !c.is_undefined() && !c.is_null())
        .unwrap_or(false)
}

async fn call(
    target: &JsValue,
    method: &'static str,
    args: &[JsValue],
) -> Result<JsValue, JsValue> {
    let f: Function = get(target, method).dyn_into()?;
    let p = f.apply(target, &args.iter().collect::<Array>())?;
    JsFuture::from(Promise::resolve(&p)).await
}

/// The host page's cache, when Cache Storage is available (secure contexts only).
async fn cache() -> Option<JsValue> {
    let caches = Reflect::get(&js_sys::global(), &"caches".into()).ok()?;
    if caches.is_undefined() || caches.is_null() {
        return None;
    }
    call(&caches, "open", &[CACHE.into()]).await.ok()
}

/// A checked warm snapshot: the packed bytes and the copies that unpack them.
pub struct Packed {
    /// The packed form (transferred to the den page).
    pub bytes: Uint8Array,
    /// (from, to, length) triples, checked against the bytes by [`foxden_core::sparse`].
    pub copies: Array,
    /// The unpacked length.
    pub total: u32,
}

/// The cached snapshot for `key` (the one entry of this foxden and these assets), checked;
/// `None` when absent or bad. Entries of other keys (another foxden on this origin) are not
/// read. `hint` gets the entry's unpacked length as soon as its headers are read (before the
/// body), so that the den page can start instantiating Pyodide for it.
pub async fn load(key: &str, hint: &std::cell::Cell<u32>) -> Option<Packed> {
    let cache = cache().await?;
    read_verified(&cache, &url_for(key), hint).await
}

/// Deletes the entry of `key` (one Pyodide refused, or that a den never became ready from),
/// and only that one, in the background.
pub fn drop_entry(key: &str) {
    let url = url_for(key);
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(cache) = cache().await {
            let _ = call(&cache, "delete", &[url.into()]).await;
        }
    });
}

/// The entry at `url`, checked against its SHA-256 and unpackable; a corrupt one is deleted.
async fn read_verified(cache: &JsValue, url: &str, hint: &std::cell::Cell<u32>) -> Option<Packed> {
    let resp = call(cache, "match", &[url.into()]).await.ok()?;
    if resp.is_undefined() {
        return None;
    }
    let headers = get(&resp, "headers");
    let header = |name: &str| {
        let f: Function = get(&headers, "get").dyn_into().ok()?;
        f.call1(&headers, &name.into()).ok()?.as_string()
    };
    let want = header(HASH_HEADER);
    if let Some(n) = header(LENGTH_HEADER).and_then(|v| v.parse::<u32>().ok()) {
        hint.set(n.min(MAX_SNAPSHOT_BYTES));
    }
    let body = call(&resp, "arrayBuffer", &[]).await.ok()?;
    let bytes = Uint8Array::new(&body);
    let packed = if want.as_deref() == Some(foxden_core::hex(&sha256(&bytes).await).as_str()) {
        unpack_plan(bytes)
    } else {
        None
    };
    if packed.is_none() {
        // Corrupt or altered: drop it; the den boots normally and makes a new one.
        let _ = call(cache, "delete", &[url.into()]).await;
    }
    packed
}

/// Reads and checks a packed snapshot's header ([`foxden_core::sparse::Layout::parse`]).
fn unpack_plan(bytes: Uint8Array) -> Option<Packed> {
    use foxden_core::sparse::{Layout, FIXED};
    let len = bytes.length();
    if (len as usize) < FIXED {
        return None;
    }
    let mut fixed = [0u8; FIXED];
    bytes.subarray(0, FIXED as u32).copy_to(&mut fixed);
    let runs = Layout::runs_declared(&fixed).ok()?;
    let header_len = (FIXED as u64 + 8 * runs as u64).min(len as u64) as u32;
    let layout = Layout::parse(&bytes.subarray(0, header_len).to_vec(), len as u64).ok()?;
    let copies = Array::new();
    for c in layout.copies() {
        for v in [c.from, c.to, c.len] {
            copies.push(&JsValue::from(v as f64));
        }
    }
    Some(Packed {
        bytes,
        copies,
        total: layout.total() as u32,
    })
}

/// Packs a snapshot ([`foxden_core::sparse`]): its pages are scanned in 1 MiB slices (no copy
/// of the whole into wasm memory), and the kept runs copied by the browser.
fn pack(raw: &Uint8Array) -> Option<Uint8Array> {
    use foxden_core::sparse::Layout;
    let mut layout = Layout::new(raw.length() as u64)?;
    in_slices(raw, |off, chunk| layout.scan(off as u64, chunk));
    let out = Uint8Array::new_with_length(layout.packed_len() as u32);
    out.set(&Uint8Array::from(layout.header().as_slice()), 0);
    for c in layout.copies() {
        out.set(
            &raw.subarray(c.to as u32, (c.to + c.len) as u32),
            c.from as u32,
        );
    }
    Some(out)
}

/// Keeps `bytes` as the snapshot for `key`, replacing entries of other keys.
pub async fn store(key: &str, raw: Uint8Array) {
    let Some(cache) = cache().await else { return };
    let url = url_for(key);
    let total = raw.length();
    let Some(bytes) = pack(&raw) else { return };
    drop(raw);
    let hash = foxden_core::hex(&sha256(&bytes).await);
    let headers = Object::new();
    let _ = Reflect::set(&headers, &HASH_HEADER.into(), &hash.into());
    let _ = Reflect::set(&headers, &LENGTH_HEADER.into(), &total.to_string().into());
    let _ = Reflect::set(
        &headers,
        &"content-type".into(),
        &"application/octet-stream".into(),
    );
    let init = Object::new();
    let _ = Reflect::set(&init, &"headers".into(), &headers);
    let Ok(ctor) = Reflect::get(&js_sys::global(), &"Response".into()) else {
        return;
    };
    let Ok(ctor) = ctor.dyn_into::<Function>() else {
        return;
    };
    let Ok(resp) = Reflect::construct(&ctor, &Array::of2(&bytes, &init)) else {
        return;
    };
    if let Ok(keys) = call(&cache, "keys", &[]).await {
        for req in Array::from(&keys).iter() {
            let u = get(&req, "url").as_string().unwrap_or_default();
            if u != url {
                let _ = call(&cache, "delete", &[req]).await;
            }
        }
    }
    let _ = call(&cache, "put", &[url.as_str().into(), resp]).await;
    if let Ok(caches) = Reflect::get(&js_sys::global(), &"caches".into()) {
        delete_cache(&caches, OLD_CACHE).await;
    }
}

/// Deletes the cache `name`: true if there was one.
async fn delete_cache(caches: &JsValue, name: &str) -> bool {
    call(caches, "delete", &[name.into()])
        .await
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// Deletes the warm cache (`clearWarmCache()`): resolves true if there was one.
pub async fn clear() -> bool {
    let Ok(caches) = Reflect::get(&js_sys::global(), &"caches".into()) else {
        return false;
    };
    if caches.is_undefined() || caches.is_null() {
        return false;
    }
    let old = delete_cache(&caches, OLD_CACHE).await;
    delete_cache(&caches, CACHE).await || old
}
