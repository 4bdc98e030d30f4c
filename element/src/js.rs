//! Small helpers for building and reading plain JavaScript objects.

use foxden_core::vecmap::VecMap;
use js_sys::{Array, Object, Promise, Reflect, Uint8Array};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::{JsCast, JsValue};

/// The future every async method hands to JavaScript.
type JsFut = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

/// A promise for an async method's result. The future is boxed so that the whole crate has one
/// copy of wasm-bindgen's promise glue instead of one per method (about 20 KB of wasm).
pub fn promise(f: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    boxed_promise(Box::pin(f))
}

#[inline(never)]
fn boxed_promise(f: JsFut) -> Promise {
    wasm_bindgen_futures::future_to_promise(f)
}

/// A promise already settled with `r` (for methods whose work is synchronous).
pub fn settled(r: Result<JsValue, JsValue>) -> Promise {
    match r {
        Ok(v) => Promise::resolve(&v),
        Err(e) => Promise::reject(&e),
    }
}

/// A future of a value the page's code handed over (a value, a promise, any thenable), taken
/// in through a fresh promise's resolve function, which never throws: a thenable's `then` runs
/// in a later job, where what it throws (or a `then` that settles at once, twice) only settles
/// that promise. (`Promise.resolve(p)` hands a native promise back as it is, and awaiting it
/// calls its own `then` at once: one that throws would unwind through the wasm module, leaving
/// the den's turn held for good.)
pub fn adopt(v: &JsValue) -> wasm_bindgen_futures::JsFuture {
    let p = Promise::new(&mut |resolve, _| {
        let _ = resolve.call1(&JsValue::UNDEFINED, v);
    });
    wasm_bindgen_futures::JsFuture::from(p)
}

/// `Array.isArray(v)`; what it throws (for a revoked Proxy) is an error, not an unwind through
/// the wasm module.
pub fn is_array(v: &JsValue) -> Result<bool, JsValue> {
    // (`get` reads objects only; `Array` is a function.)
    let f: js_sys::Function = Reflect::get(&js_sys::global(), &"Array".into())
        .and_then(|a| Reflect::get(&a, &"isArray".into()))?
        .dyn_into()?;
    Reflect::apply(&f, &JsValue::UNDEFINED, &Array::of1(v)).map(|r| r.is_truthy())
}

thread_local! {
    /// The JS strings of the property names foxden reads and writes, each made once: making a
    /// JS string from Rust decodes it from wasm memory, and a run reads and writes dozens.
    static KEYS: RefCell<VecMap<(usize, usize), JsValue>> = RefCell::new(VecMap::new());
    /// The global `performance` (a page's, a worker's or Node.js's), looked up once: the clock
    /// is read on every run.
    static PERFORMANCE: Option<web_sys::Performance> = Some(get(&js_sys::global(), "performance"))
        .filter(|p| p.is_object())
        .map(JsCast::unchecked_into);
}

/// The JS string of a property name (made once per name, then reused).
pub fn key(k: &'static str) -> JsValue {
    KEYS.with(|keys| {
        keys.borrow_mut()
            .get_or_insert_with((k.as_ptr() as usize, k.len()), || JsValue::from_str(k))
            .clone()
    })
}

/// Builds a plain object from key/value pairs.
pub fn obj(pairs: &[(&'static str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &key(k), v);
    }
    o
}

/// Reads `target[key]` (undefined when absent or when `target` is not an object).
pub fn get(target: &JsValue, name: &'static str) -> JsValue {
    opt(target, name).unwrap_or(JsValue::UNDEFINED)
}

/// Reads `options[name]` of an options object a caller gave (`openDen`, `run`, …). What a
/// getter or a Proxy throws is the call's error, as with the web platform's option
/// dictionaries, not an absent option (absent: `target` is not an object).
pub fn opt(target: &JsValue, name: &'static str) -> Result<JsValue, JsValue> {
    if !target.is_object() {
        return Ok(JsValue::UNDEFINED);
    }
    Reflect::get(target, &key(name))
}

/// [`opt`] for a string option (`None`: absent or not a string).
pub fn opt_str(target: &JsValue, name: &'static str) -> Result<Option<String>, JsValue> {
    Ok(opt(target, name)?.as_string())
}

/// Reads a string field.
pub fn get_str(target: &JsValue, name: &'static str) -> Option<String> {
    get(target, name).as_string()
}

/// Reads a short string field (a tag such as a message kind) of `max` bytes at most: `None` for
/// a longer one, which is never copied whole into wasm memory (a hostile den page could send
/// gigabytes there).
pub fn get_tag(target: &JsValue, name: &'static str, max: usize) -> Option<String> {
    crate::wire::text(&get(target, name), max)
        .filter(|(_, cut)| !cut)
        .map(|(s, _)| s)
}

/// Reads a number field.
pub fn get_f64(target: &JsValue, name: &'static str) -> Option<f64> {
    get(target, name).as_f64()
}

/// True for `undefined` and `null`.
pub fn is_absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// A fresh JS copy of Rust bytes (its buffer can be transferred).
pub fn bytes_to_js(bytes: &[u8]) -> Uint8Array {
    let out = Uint8Array::new_with_length(bytes.len() as u32);
    out.copy_from(bytes);
    out
}

/// A snapshot written straight into one new `Uint8Array`, piece by piece: the den's files are
/// copied once, from wasm memory to the array, never into a buffer of the whole snapshot in
/// wasm memory (which would grow it by the den's size for good, or abort the module where it
/// cannot grow). An array the browser cannot allocate is a `storage` DenError.
pub fn pieces_to_js(pieces: &[foxden_core::snapshot::Piece<'_>]) -> Result<Uint8Array, JsValue> {
    use foxden_core::snapshot::Piece;
    let total: f64 = pieces.iter().map(|p| p.len() as f64).sum();
    if total > f64::from(u32::MAX) {
        return Err(crate::errors::den_error(
            crate::errors::DenErrorCode::Storage,
            &format!(
                "the snapshot would be {} bytes; a snapshot holds less than 4 GiB",
                foxden_core::decimal::show(total)
            ),
        ));
    }
    let class = get(&js_sys::global(), "Uint8Array");
    let out: Uint8Array = class
        .dyn_ref::<js_sys::Function>()
        .and_then(|c| js_sys::Reflect::construct(c, &js_sys::Array::of1(&total.into())).ok())
        .and_then(|a| a.dyn_into().ok())
        .ok_or_else(|| {
            crate::errors::den_error(
                crate::errors::DenErrorCode::Storage,
                &format!("the browser could not allocate {} bytes for the snapshot (the page is out of memory)", foxden_core::decimal::show(total)),
            )
        })?;
    let mut at = 0u32;
    for p in pieces {
        let n = p.len() as u32;
        match p {
            Piece::Bytes(b) => out.subarray(at, at + n).copy_from(b),
            Piece::File(d) => out.subarray(at, at + n).copy_from(d),
            Piece::Zeros(_) => {} // a new array holds zeros
        }
        at += n;
    }
    Ok(out)
}

/// A copy of `view`'s bytes in one shared buffer: one allocation in wasm memory, filled by the
/// browser (a `Vec` turned into an `Arc<[u8]>` would be copied a second time, and for a moment
/// need twice the room). Refused, not aborted, when wasm memory has no room for it: a fallible
/// reservation first grows the memory or fails (an allocation that cannot be met aborts the
/// module, and every den of the page with it).
pub fn shared_bytes(view: &Uint8Array) -> Result<std::sync::Arc<[u8]>, foxden_core::StorageError> {
    // The length as JavaScript has it: `length()` is a u32 and wraps at 4 GiB, which wasm
    // cannot hold anyway.
    let true_len = get_f64(view, "length").unwrap_or(0.0);
    if true_len > f64::from(u32::MAX) {
        return Err(foxden_core::StorageError::NoRoom {
            bytes: true_len as u64,
        });
    }
    let bytes = u64::from(view.length());
    let mut probe: Vec<u8> = Vec::new();
    (view.length() as usize)
        .checked_add(64)
        .and_then(|n| probe.try_reserve_exact(n).ok())
        .ok_or(foxden_core::StorageError::NoRoom { bytes })?;
    drop(probe);
    let mut data: std::sync::Arc<[u8]> = std::iter::repeat_n(0u8, view.length() as usize).collect();
    if let Some(buf) = std::sync::Arc::get_mut(&mut data) {
        view.copy_to(buf);
    }
    Ok(data)
}

/// The size in bytes of an ArrayBuffer or a view as JavaScript has it: a double, as js-sys's
/// `length()`/`byte_length()` are u32s that wrap at 4 GiB. Infinite for anything else.
pub fn byte_len(v: &JsValue) -> f64 {
    get_f64(v, "byteLength").unwrap_or(f64::INFINITY)
}

/// Converts string / Uint8Array / ArrayBuffer / typed array view to bytes. `Err`: why not (not
/// data, or more bytes than the page's wasm memory can take: [`shared_bytes`] checks that
/// before the copy).
pub fn data_to_bytes(v: &JsValue) -> Result<std::sync::Arc<[u8]>, String> {
    if let Some(s) = v.as_string() {
        return Ok(s.into_bytes().into());
    }
    let u = byte_view(v).ok_or_else(|| String::from("data must be a string or bytes"))?;
    // The size as a whole number: formatting a float would pull float printing into the wasm.
    shared_bytes(&u).map_err(|_| {
        format!(
            "{} bytes do not fit in the page's memory",
            byte_len(&u) as u64
        )
    })
}

/// Hands `f` JS bytes in 1 MiB slices with their offsets (no full copy into wasm memory).
pub fn in_slices(bytes: &Uint8Array, mut f: impl FnMut(u32, &[u8])) {
    let len = bytes.length();
    let mut buf = vec![0u8; (1 << 20).min(len as usize)];
    let mut off = 0u32;
    while off < len {
        let end = off.saturating_add(1 << 20).min(len);
        let chunk = &mut buf[..(end - off) as usize];
        bytes.subarray(off, end).copy_to(chunk);
        f(off, chunk);
        off = end;
    }
}

/// SHA-256 of JS bytes, read in 1 MiB slices.
pub fn sha256_js(bytes: &Uint8Array) -> [u8; 32] {
    let mut h = foxden_core::sha256::Sha256::new();
    in_slices(bytes, |_, chunk| h.update(chunk));
    h.finalize()
}

/// The bytes of a `Uint8Array`, an `ArrayBuffer` or another typed array: a plain `Uint8Array`
/// view of them (no copy). Always a new plain one, so that a subclass's own `slice` or
/// `subarray` (a `Buffer` polyfill's `slice` returns a view) never decides what is read.
pub fn byte_view(v: &JsValue) -> Option<Uint8Array> {
    let is_buffer = |b: &JsValue| {
        b.is_instance_of::<js_sys::ArrayBuffer>() || b.is_instance_of::<js_sys::SharedArrayBuffer>()
    };
    let (buffer, offset, len) = if is_buffer(v) {
        (v.clone(), 0.0, get_f64(v, "byteLength")?)
    } else if js_sys::ArrayBuffer::is_view(v) {
        let buffer = get(v, "buffer");
        (buffer, get_f64(v, "byteOffset")?, get_f64(v, "byteLength")?)
    } else {
        return None;
    };
    if !is_buffer(&buffer) {
        return None;
    }
    // A detached buffer (its bytes transferred) reads as empty, as its views do; viewing it
    // would throw.
    if is_detached(&buffer) {
        return Some(Uint8Array::new_with_length(0));
    }
    // Offsets as JS numbers (a buffer may pass 4 GiB); a throw is an answer, not a lost task.
    let args = Array::of3(&buffer, &offset.into(), &len.into());
    let ctor = get(&js_sys::global(), "Uint8Array")
        .dyn_into::<js_sys::Function>()
        .ok()?;
    Reflect::construct(&ctor, &args).ok()?.dyn_into().ok()
}

/// A string's UTF-8, encoded by the browser (`TextEncoder`) outside wasm memory, so that its
/// length can be checked before any of it is copied in (a lone surrogate becomes U+FFFD, as in
/// every conversion of a string to bytes). `Err`: the browser could not encode it (too long).
pub fn utf8_of(s: &js_sys::JsString) -> Result<Uint8Array, JsValue> {
    let ctor = get(&js_sys::global(), "TextEncoder").dyn_into::<js_sys::Function>()?;
    let encoder = Reflect::construct(&ctor, &Array::new())?;
    let encode = get(&encoder, "encode").dyn_into::<js_sys::Function>()?;
    encode.call1(&encoder, s)?.dyn_into::<Uint8Array>()
}

/// Why [`sized_view`] gave no bytes.
pub enum NotSized {
    /// More than the cap: the size (UTF-16 units of a string too long to encode).
    TooBig(f64),
    /// A string that could not be encoded (the thrown value).
    Encode(JsValue),
    /// Neither a string nor bytes.
    NotData,
}

/// File contents (a string, as UTF-8, or bytes) as a view of JS memory, checked against `max`
/// bytes before anything is copied into wasm (whose memory never shrinks; past 4 GiB a copy
/// cannot even be made). A string is measured by its UTF-16 length first (its UTF-8 is never
/// shorter), then encoded outside wasm memory and measured again (up to three times longer).
/// Gives the view and its length.
pub fn sized_view(data: &JsValue, max: u64) -> Result<(Uint8Array, f64), NotSized> {
    let over = |size: f64| size > max.min(u64::from(u32::MAX)) as f64;
    let view = match data.dyn_ref::<js_sys::JsString>() {
        Some(s) if over(f64::from(s.length())) => {
            return Err(NotSized::TooBig(f64::from(s.length())))
        }
        Some(s) => utf8_of(s).map_err(NotSized::Encode)?,
        None => byte_view(data).ok_or(NotSized::NotData)?,
    };
    let size = byte_len(&view);
    if over(size) {
        return Err(NotSized::TooBig(size));
    }
    Ok((view, size))
}

/// The bytes `v` holds now, in a buffer of their own, for a call that reads them only later
/// (after awaiting): the caller may reuse or transfer its buffer at once. Strings (immutable),
/// detached buffers (refused later) and anything else are returned as they are, and so are
/// buffers past 4 GiB (refused as too big later, without a copy).
pub fn copy_now(v: &JsValue) -> JsValue {
    if v.is_string() || is_detached(v) {
        return v.clone();
    }
    // Through Reflect.apply: a copy the page has no memory for throws, and that must not
    // cross wasm (the call rejects later, as too big or out of memory, with the original).
    let slice = |view: &Uint8Array| {
        get(view, "slice")
            .dyn_into::<js_sys::Function>()
            .ok()
            .and_then(|f| Reflect::apply(&f, view, &Array::new()).ok())
    };
    match byte_view(v) {
        Some(view) if get_f64(&view, "length").is_some_and(|n| n <= f64::from(u32::MAX)) => {
            slice(&view).unwrap_or_else(|| v.clone())
        }
        _ => v.clone(),
    }
}

/// Whether `v` is an `ArrayBuffer`, or a view of one, whose bytes were transferred away.
pub fn is_detached(v: &JsValue) -> bool {
    let buffer = if js_sys::ArrayBuffer::is_view(v) {
        get(v, "buffer")
    } else {
        v.clone()
    };
    match get(&buffer, "detached").as_bool() {
        Some(detached) => detached,
        // Engines without `ArrayBuffer.prototype.detached` (Node.js 20): a detached buffer
        // has no bytes, and no view of it can be made.
        None => {
            buffer.is_instance_of::<js_sys::ArrayBuffer>()
                && get(&buffer, "byteLength").as_f64() == Some(0.0)
                && get(&js_sys::global(), "Uint8Array")
                    .dyn_into::<js_sys::Function>()
                    .is_ok_and(|view| Reflect::construct(&view, &Array::of1(&buffer)).is_err())
        }
    }
}

/// The longest snapshot a `JsSnapshot` reads: offsets into it are `u32`.
const MAX_LEN: f64 = u32::MAX as f64;

/// A snapshot still in JS memory, checked in place: headers and the manifest are copied into
/// wasm memory, file data is hashed in 1 MiB slices, so the archive is never copied whole.
pub struct JsSnapshot {
    bytes: Uint8Array,
    /// The length as JavaScript has it: `length()` wraps at 4 GiB.
    true_len: f64,
}

impl JsSnapshot {
    /// The snapshot in `v` (bytes, an `ArrayBuffer` or a typed array). Bytes in a
    /// `SharedArrayBuffer` are copied first: another thread could change them between the check
    /// and the copy out.
    pub fn new(v: &JsValue) -> Option<Self> {
        let view = byte_view(v)?;
        let true_len = get_f64(&view, "length").unwrap_or(0.0);
        let bytes = if view.buffer().is_instance_of::<js_sys::ArrayBuffer>() || true_len > MAX_LEN {
            view
        } else {
            view.slice(0, view.length())
        };
        Some(Self { bytes, true_len })
    }

    /// Checks all of the snapshot (`foxden_core::snapshot::verify_snapshot`).
    pub fn verify(
        &self,
        max_bytes: u64,
    ) -> Result<Vec<foxden_core::snapshot::SnapshotFile>, foxden_core::snapshot::SnapshotError>
    {
        if self.true_len > MAX_LEN {
            return Err(foxden_core::snapshot::SnapshotError::Format {
                offset: 0,
                reason: format!(
                    "it is {} bytes long, more than the 4 GiB wasm can address",
                    self.true_len as u64
                ),
            });
        }
        foxden_core::snapshot::verify_snapshot(self, max_bytes)
    }

    /// Checks the snapshot and unpacks it into a den: the files are copied one by one, the
    /// archive is never copied whole.
    pub fn decode(
        &self,
        max_bytes: u64,
    ) -> Result<foxden_core::FileMap, foxden_core::snapshot::SnapshotError> {
        self.decode_over(max_bytes, &foxden_core::FileMap::new())
    }

    /// As [`JsSnapshot::decode`], sharing the data of `current`'s files that the snapshot holds
    /// unchanged (same path, same SHA-256): a restore copies only what differs.
    pub fn decode_over(
        &self,
        max_bytes: u64,
        current: &foxden_core::FileMap,
    ) -> Result<foxden_core::FileMap, foxden_core::snapshot::SnapshotError> {
        let files = self.verify(max_bytes)?;
        let total = files.iter().map(|f| f.data.len() as u64).sum();
        foxden_core::snapshot::file_map(files, |f| match current.get(&f.path) {
            Some(e) if e.sha256 == f.sha256 => Ok(e.data.clone()),
            _ => shared_bytes(&self.part(f.data.clone()))
                .map_err(|_| foxden_core::snapshot::SnapshotError::NoRoom { total }),
        })
    }

    /// A copy of the bytes of `range`, made by the browser.
    pub fn copy(&self, range: std::ops::Range<usize>) -> Uint8Array {
        self.bytes.slice(range.start as u32, range.end as u32)
    }

    /// The bytes of `range` as a view (no copy).
    pub fn part(&self, range: std::ops::Range<usize>) -> Uint8Array {
        self.bytes.subarray(range.start as u32, range.end as u32)
    }
}

impl foxden_core::snapshot::SnapshotSource for JsSnapshot {
    fn size(&self) -> usize {
        self.bytes.length() as usize
    }
    fn bytes(&self, range: std::ops::Range<usize>) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Owned(self.part(range).to_vec())
    }
    fn sha256(&self, range: std::ops::Range<usize>) -> [u8; 32] {
        sha256_js(&self.part(range))
    }
    fn first_nonzero(&self, range: std::ops::Range<usize>) -> Option<usize> {
        let mut found = None;
        in_slices(&self.part(range), |off, chunk| {
            if found.is_none() {
                found = chunk.iter().position(|&b| b != 0).map(|i| off as usize + i);
            }
        });
        found
    }
}

/// A JS array of strings.
pub fn str_array<S: AsRef<str>>(items: &[S]) -> Array {
    items
        .iter()
        .map(|s| JsValue::from_str(s.as_ref()))
        .collect()
}

/// A string argument (`path`, `code`, `command`, `dbName`); anything else is `DenError`
/// `bad-option` naming it. The exports take such arguments as `JsValue`: with a `String`
/// parameter, wasm-bindgen's glue would copy a number or an object into wasm memory unchecked.
pub fn string_arg(v: &JsValue, name: &str) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| {
        let ty = if v.is_null() {
            "null".to_owned()
        } else {
            v.js_typeof().as_string().unwrap_or_default()
        };
        crate::errors::option_error(name, &format!("{name} must be a string, not {ty}"))
    })
}

/// A path argument: a string (else [`string_arg`]'s error) of valid UTF-16. A lone surrogate
/// would become U+FFFD on its way into wasm, and two names one file: `PathError`, rule
/// `unicode`.
pub fn path_arg(v: &JsValue, name: &str) -> Result<String, JsValue> {
    let s = string_arg(v, name)?;
    if v.dyn_ref::<js_sys::JsString>()
        .is_some_and(|j| !j.is_valid_utf16())
    {
        return Err(crate::errors::path_error(&foxden_core::paths::PathError {
            path: s,
            rule: foxden_core::paths::PathRule::Unicode,
        }));
    }
    Ok(s)
}

/// `performance.now()` or 0.
pub fn now_ms() -> f64 {
    PERFORMANCE.with(|p| p.as_ref().map_or(0.0, |p| p.now()))
}

/// Wall-clock milliseconds since the epoch.
pub fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// [`describe`] for a value that may be huge (an error from page code): `String(v)` (an Error
/// gives "Name: message"), cut at 4 KiB before it is copied into wasm.
pub fn describe_bounded(v: &JsValue) -> String {
    let string = get(&js_sys::global(), "String")
        .dyn_into::<js_sys::Function>()
        .ok();
    let text = string.and_then(|f| Reflect::apply(&f, &JsValue::UNDEFINED, &Array::of1(v)).ok());
    text.and_then(|t| crate::wire::text(&t, 4096))
        .map_or_else(|| "(an error that cannot be shown)".into(), |(t, _)| t)
}

/// A readable message from any thrown JS value (which need not be an Error).
pub fn describe(v: &JsValue) -> String {
    if let Some(s) = v.as_string() {
        return s;
    }
    if let Some(m) = get_str(v, "message") {
        let name = get_str(v, "name").unwrap_or_default();
        return if name.is_empty() {
            m
        } else {
            format!("{name}: {m}")
        };
    }
    js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "unknown error".into())
}
