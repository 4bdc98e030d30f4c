//! foxden: the `<foxden-den>` element and the ES-module API, compiled to WebAssembly.
//!
//! The JavaScript in `js/` is only what Rust cannot be: the error classes and (in `dist/foxden.js`)
//! the module wrapper and the custom element class shim. Everything else is here or in
//! `foxden-core`.
//!
//! The `element` feature (on by default) adds `<foxden-den>`. Built without it, the module is
//! `dist/api.js`'s: the same functions and `Den`, and no element, for pages and extensions that
//! use only the API (a sixth smaller). What only the element reads (the den's event sink and its
//! events, the editor's URL, a few helpers of the den's) is then dead, hence the allow; dead code
//! is still reported by the default build's clippy, which has every reader.
#![cfg_attr(not(feature = "element"), allow(dead_code, unused_imports))]

mod callback;
mod den;
#[cfg(feature = "element")]
mod element;
mod errors;
mod idb;
mod js;
mod leak_check;
mod locks;
mod runtime;
mod store;
mod wire;

use crate::js::obj;
use den::DenOptions;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

pub use den::Den;

/// Runs once when the module is instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    den::keep_pristine_fetch(None);
}

/// Called once by foxden.js with the `fetch` and `Headers` it found when it was evaluated,
/// before the module loaded (den requests use those; see `den::net`).
#[wasm_bindgen(js_name = __keepFetch)]
pub fn keep_fetch(fetch: JsValue, headers: JsValue) {
    den::keep_pristine_fetch(Some((fetch, headers)));
}

/// Called once by foxden.js with `import.meta.url` and the editor module's URL.
#[wasm_bindgen(js_name = __setModuleBase)]
pub fn set_module_base(url: String, editor: Option<String>) {
    runtime::set_module_base(url, editor);
}

/// The error classes (`PathError`, `SnapshotError`, `DenError`, `DenLoadError`).
#[wasm_bindgen(js_name = __errorClasses)]
pub fn error_classes() -> JsValue {
    errors::error_classes()
}

/// Live Rust-owned listeners and den connections (for leak tests).
#[wasm_bindgen(js_name = __liveCounts)]
pub fn live_counts() -> JsValue {
    let (l, c) = leak_check::counts();
    obj(&[
        ("listeners", (l as f64).into()),
        ("connections", (c as f64).into()),
    ])
    .into()
}

/// Deletes the warm cache (the snapshot of a fresh interpreter the host page keeps between
/// visits, in Cache Storage `foxden-warm-v2`). Resolves true if there was one.
#[wasm_bindgen(js_name = clearWarmCache, unchecked_return_type = "Promise<boolean>")]
pub fn clear_warm_cache() -> js_sys::Promise {
    js::promise(async { Ok(runtime::warm::clear().await.into()) })
}

/// Opens a den: `openDen({ name, runtime, store?, snapshot?, maxDenBytes?, killGraceMs?, onProgress? })`.
#[wasm_bindgen(js_name = openDen, unchecked_return_type = "Promise<Den>")]
pub fn open_den(opts: JsValue) -> js_sys::Promise {
    // The options and the snapshot are read now: the caller may reuse its buffer at once.
    let prepared = prepare_open(&opts);
    js::promise(async move {
        let (o, initial, progress) = prepared?;
        den::open(o, initial, progress, None)
            .await
            .map(JsValue::from)
    })
}

type PreparedOpen = (DenOptions, Option<foxden_core::FileMap>, runtime::Progress);

fn prepare_open(opts: &JsValue) -> Result<PreparedOpen, JsValue> {
    let o = DenOptions::from_js(opts)?;
    let snap = js::opt(opts, "snapshot")?;
    let initial = if js::is_absent(&snap) {
        None
    } else {
        let snap = js::JsSnapshot::new(&snap).ok_or_else(|| {
            errors::option_error(
                "snapshot",
                "snapshot must be Uint8Array or ArrayBuffer bytes",
            )
        })?;
        Some(
            snap.decode(o.max_den_bytes)
                .map_err(|e| errors::snapshot_error(e.code(), &e.to_string()))?,
        )
    };
    let progress: runtime::Progress =
        match js::opt(opts, "onProgress")?.dyn_into::<js_sys::Function>() {
            Ok(f) => Rc::new(move |loaded, total| {
                let _ = f.call1(
                    &JsValue::UNDEFINED,
                    &obj(&[("loaded", loaded.into()), ("total", total.into())]),
                );
            }),
            Err(_) => Rc::new(|_, _| {}),
        };
    Ok((o, initial, progress))
}

/// The default runtime: `iframeRuntime({ denUrl?, pyodideUrl?, isolation?, loadTimeoutMs?, container? })`.
#[wasm_bindgen(js_name = iframeRuntime)]
pub fn iframe_runtime(opts: JsValue) -> Result<JsValue, JsValue> {
    Ok(runtime::RuntimeOptions::from_js(&opts)?.to_js())
}

/// Files in memory (the default).
#[wasm_bindgen(js_name = memoryStore)]
pub fn memory_store() -> JsValue {
    store::StoreSpec::Memory.to_js()
}

/// Files in IndexedDB (database `dbName`, default "foxden").
#[wasm_bindgen(js_name = idbStore)]
pub fn idb_store(db_name: JsValue) -> Result<JsValue, JsValue> {
    let name = if js::is_absent(&db_name) {
        store::DEFAULT_DB.into()
    } else {
        js::string_arg(&db_name, "dbName")?
    };
    if name.is_empty() {
        return Err(errors::option_error("dbName", "dbName must not be empty"));
    }
    Ok(store::StoreSpec::Idb(name).to_js())
}

/// Normalizes a den path or throws `PathError`.
#[wasm_bindgen(js_name = normalizePath)]
pub fn normalize_path(path: JsValue) -> Result<String, JsValue> {
    let path = js::path_arg(&path, "path")?;
    foxden_core::normalize_path(&path).map_err(|e| errors::path_error(&e))
}

/// Runs the shell and shapes its result as `{ stdout, stderr, code, truncated }`.
pub(crate) fn shell(command: &str, files: &foxden_core::FileMap, max: usize) -> JsValue {
    let out = foxden_core::shell::run_shell(command, files, max);
    obj(&[
        (
            "stdout",
            String::from_utf8_lossy(&out.stdout).into_owned().into(),
        ),
        (
            "stderr",
            String::from_utf8_lossy(&out.stderr).into_owned().into(),
        ),
        ("code", out.code.into()),
        ("truncated", out.truncated.into()),
    ])
    .into()
}

/// Runs the read-only shell over `files` (`{ "/drop/a.csv": string | Uint8Array }`), no den needed.
#[wasm_bindgen(js_name = runShell)]
pub fn run_shell(command: JsValue, files: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    let command = js::string_arg(&command, "command")?;
    let map = files_from_object(&files)?;
    // Checked as a run's maxOutputBytes is.
    let max = den::options::number(&opts, foxden_core::options::Api::Run, "maxOutputBytes")?;
    Ok(shell(&command, &map, max as usize))
}

fn files_from_object(files: &JsValue) -> Result<foxden_core::FileMap, JsValue> {
    let mut ops = Vec::new();
    if !js::is_absent(files) {
        let entries = js_sys::Object::entries(files.unchecked_ref());
        for e in entries.iter() {
            let pair: js_sys::Array = e.unchecked_into();
            let path = js::path_arg(&pair.get(0), "path")?;
            let data = js::data_to_bytes(&pair.get(1)).map_err(|why| {
                errors::den_error(
                    crate::errors::DenErrorCode::BadData,
                    &format!("{path}: {why}"),
                )
            })?;
            ops.push(foxden_core::Op::Put {
                path,
                entry: foxden_core::FileEntry::new(data, 0.0),
            });
        }
    }
    let mut map = foxden_core::FileMap::new();
    map.apply(ops, u64::MAX)
        .map_err(|e| den::storage_to_js(&e))?;
    Ok(map)
}

/// Packs `{ path: string | bytes }` into snapshot bytes.
#[wasm_bindgen(js_name = encodeSnapshot)]
pub fn encode_snapshot(files: JsValue) -> Result<js_sys::Uint8Array, JsValue> {
    let map = files_from_object(&files)?;
    js::pieces_to_js(&foxden_core::snapshot::snapshot_pieces(&map))
}

/// Checks and unpacks snapshot bytes into `{ path: Uint8Array }`; throws `SnapshotError`.
#[wasm_bindgen(js_name = decodeSnapshot)]
pub fn decode_snapshot(bytes: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    let snap = js::JsSnapshot::new(&bytes).ok_or_else(|| {
        errors::snapshot_error(
            "format",
            "decodeSnapshot needs Uint8Array or ArrayBuffer bytes",
        )
    })?;
    // Checked as openDen checks it (a string or a negative number is refused, not guessed).
    let max =
        den::options::number(&opts, foxden_core::options::Api::OpenDen, "maxDenBytes")? as u64;
    // Checked where the bytes are (hashed in slices), then each file copied out by the browser.
    let files = snap
        .verify(max)
        .map_err(|e| errors::snapshot_error(e.code(), &e.to_string()))?;
    let out = js_sys::Object::new();
    for f in files {
        let data = snap.copy(f.data);
        let _ = js_sys::Reflect::set(&out, &f.path.as_str().into(), &data);
    }
    Ok(out.into())
}
