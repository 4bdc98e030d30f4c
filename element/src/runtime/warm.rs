//! The warm cache: a memory snapshot of a fresh interpreter, kept by the host page between
//! visits so that a later visit's den resumes from it instead of booting Pyodide from scratch.
//!
//! - Where: Cache Storage of the host page's origin, cache `foxden-warm-v1`, one entry whose URL
//!   names the key; clear it with `clearWarmCache()` or `caches.delete("foxden-warm-v1")`.
//! - Key: SHA-256 over the SHA-256s of the three Pyodide files, foxden's version and the protocol
//!   version. Other asset sets (an upgrade) get another key; older entries are deleted.
//! - Integrity: the entry carries the snapshot's SHA-256, checked before the bytes are handed to
//!   the den page; a mismatch (a corrupt or altered entry) deletes it, and the den boots normally
//!   and makes a new one. A snapshot Pyodide refuses to load is dropped the same way.
//! - Origin: the snapshot is made by the den page's *maker* worker, which boots with Pyodide's
//!   snapshot options and never runs user code; the den page offers it once. A worker that runs
//!   user code has no way to send one (see docs/architecture.md).
//! - Off: `iframeRuntime({ warmStart: false })`, or `warm-start="off"` on the element.

use crate::js::get;
use js_sys::{Array, ArrayBuffer, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The cache's name (Cache Storage of the host origin).
pub const CACHE: &str = "foxden-warm-v1";
const URL_PREFIX: &str = "https://foxden.invalid/warm/";
const HASH_HEADER: &str = "x-foxden-sha256";
/// Largest snapshot the host accepts from a den page (Pyodide's are ~30 MB).
pub const MAX_SNAPSHOT_BYTES: u32 = 512 << 20;

/// SHA-256 of JS bytes, read in 1 MiB slices (no full copy into wasm memory).
pub fn sha256_js(bytes: &Uint8Array) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    let len = bytes.length();
    let mut buf = vec![0u8; (1 << 20).min(len as usize)];
    let mut off = 0u32;
    while off < len {
        let end = (off + (1 << 20)).min(len);
        let chunk = &mut buf[..(end - off) as usize];
        bytes.subarray(off, end).copy_to(chunk);
        h.update(&*chunk);
        off = end;
    }
    h.finalize().into()
}

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

/// The cache key of an asset set.
pub async fn key(wasm: &ArrayBuffer, stdlib: &ArrayBuffer, lock: &str) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(sha256(&Uint8Array::new(wasm)).await);
    h.update(sha256(&Uint8Array::new(stdlib)).await);
    h.update(foxden_core::sha256(lock.as_bytes()));
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(foxden_core::protocol::PROTOCOL_VERSION.to_le_bytes());
    let digest: [u8; 32] = h.finalize().into();
    foxden_core::hex(&digest)
}

async fn call(target: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
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

/// The cached snapshot for `key`, verified against its SHA-256; `None` when absent or bad.
pub async fn load(key: &str) -> Option<Uint8Array> {
    let cache = cache().await?;
    let url = format!("{URL_PREFIX}{key}");
    let resp = call(&cache, "match", &[url.as_str().into()]).await.ok()?;
    if resp.is_undefined() {
        return None;
    }
    let want = call(&get(&resp, "headers"), "get", &[HASH_HEADER.into()])
        .await
        .ok()
        .and_then(|v| v.as_string());
    let body = call(&resp, "arrayBuffer", &[]).await.ok()?;
    let bytes = Uint8Array::new(&body);
    if want.as_deref() != Some(foxden_core::hex(&sha256(&bytes).await).as_str()) {
        // Corrupt or altered: drop it; the den boots normally and makes a new one.
        let _ = call(&cache, "delete", &[url.as_str().into()]).await;
        return None;
    }
    Some(bytes)
}

/// Keeps `bytes` as the snapshot for `key`, replacing entries of other keys.
pub async fn store(key: &str, bytes: Uint8Array) {
    let Some(cache) = cache().await else { return };
    let url = format!("{URL_PREFIX}{key}");
    let hash = foxden_core::hex(&sha256(&bytes).await);
    let headers = Object::new();
    let _ = Reflect::set(&headers, &HASH_HEADER.into(), &hash.into());
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
}

/// Deletes the warm cache (`clearWarmCache()`): resolves true if there was one.
pub async fn clear() -> bool {
    let Ok(caches) = Reflect::get(&js_sys::global(), &"caches".into()) else {
        return false;
    };
    if caches.is_undefined() || caches.is_null() {
        return false;
    }
    call(&caches, "delete", &[CACHE.into()])
        .await
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}
