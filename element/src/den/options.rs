//! `openDen` and `run` options, validated.

use crate::errors::option_error;
use crate::js::{is_absent, opt, opt_str};
use crate::runtime::RuntimeOptions;
use crate::store::StoreSpec;
use foxden_core::files::WriteLimits;
use foxden_core::limits;
use foxden_core::net::NetworkConfig;
use foxden_core::options::{self, Api};
use foxden_core::readonly::{ReadOnlyPaths, MAX_READ_ONLY_PATHS};
use js_sys::Function;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Options of `openDen`, validated.
#[derive(Clone)]
pub struct DenOptions {
    pub name: String,
    pub runtime: RuntimeOptions,
    pub store: StoreSpec,
    pub max_den_bytes: u64,
    pub kill_grace_ms: u32,
    /// `maxFileBytes` and `maxFiles` (with `max_den_bytes`).
    pub max_file_bytes: u64,
    pub max_files: usize,
    /// `maxWritesPerMinute` (0: no limit).
    pub max_writes_per_minute: u32,
    /// `packages`: the wheels to fetch, check and install (fetched when the den opens).
    pub packages: Vec<crate::runtime::packages::PackageSource>,
    /// `network` (None: off, every `foxden.fetch` is refused).
    pub network: Option<NetworkConfig>,
    /// A runtime adapter (`runtime: { start, run, close }`) instead of the iframe runtime.
    pub adapter: Option<Rc<super::adapter::Adapter>>,
    /// `readOnlyPaths`: files and folders the den's code may read but not change.
    pub read_only: ReadOnlyPaths,
}

impl DenOptions {
    /// The caps every batch of file changes is checked against.
    pub fn write_limits(&self) -> WriteLimits {
        WriteLimits {
            max_den_bytes: self.max_den_bytes,
            max_file_bytes: self.max_file_bytes,
            max_files: self.max_files,
        }
    }
}

/// Reads the number option `key` of `api`, with the default and range of the options table.
pub(crate) fn number(v: &JsValue, api: Api, key: &'static str) -> Result<f64, JsValue> {
    let Some(spec) = options::by_api(api, key) else {
        return Err(option_error(key, &format!("{key} is not an option")));
    };
    let raw = opt(v, key)?;
    if is_absent(&raw) {
        return Ok(spec.default_number() as f64);
    }
    spec.check_number(key, raw.as_f64().unwrap_or(f64::NAN))
        .map(|n| n as f64)
        .map_err(|e| option_error(key, &e.to_string()))
}

impl DenOptions {
    pub fn from_js(v: &JsValue) -> Result<Self, JsValue> {
        if !v.is_object() {
            return Err(option_error(
                "options",
                "openDen needs an options object with at least a name",
            ));
        }
        let name = opt_str(v, "name")?.ok_or_else(|| {
            option_error(
                "name",
                "name is required: 1-64 ASCII letters, digits, '-' or '_'",
            )
        })?;
        limits::validate_den_name(&name).map_err(|e| option_error("name", &e.to_string()))?;
        let rt = opt(v, "runtime")?;
        let kind = opt_str(&rt, "kind")?;
        let adapter = if kind.as_deref() == Some("iframe") {
            None
        } else {
            super::adapter::Adapter::from_js(&rt)?
        };
        let runtime = if is_absent(&rt) || adapter.is_some() {
            RuntimeOptions::from_js(&JsValue::UNDEFINED)?
        } else {
            if kind.as_deref() != Some("iframe") {
                return Err(option_error(
                    "runtime",
                    "runtime must come from iframeRuntime(), or be an adapter with start(), run(request) and close()",
                ));
            }
            RuntimeOptions::from_js(&rt)?
        };
        let store = StoreSpec::from_js(&opt(v, "store")?)?;
        let max_den_bytes = number(v, Api::OpenDen, "maxDenBytes")? as u64;
        let kill_grace_ms = number(v, Api::OpenDen, "killGraceMs")? as u32;
        let mut runtime = runtime;
        runtime.max_den_bytes = max_den_bytes as f64;
        runtime.max_memory_bytes = number(v, Api::OpenDen, "maxMemoryBytes")?;
        Ok(DenOptions {
            name,
            runtime,
            store,
            max_den_bytes,
            kill_grace_ms,
            max_file_bytes: number(v, Api::OpenDen, "maxFileBytes")? as u64,
            max_files: number(v, Api::OpenDen, "maxFiles")? as usize,
            max_writes_per_minute: number(v, Api::OpenDen, "maxWritesPerMinute")? as u32,
            packages: crate::runtime::packages::from_js(&opt(v, "packages")?)?,
            network: network_options(&opt(v, "network")?)?,
            adapter,
            read_only: read_only_paths(&opt(v, "readOnlyPaths")?)?,
        })
        .and_then(|o: DenOptions| {
            // The wheels and the network broker work through the den page and its worker.
            for (set, key) in [
                (!o.packages.is_empty(), "packages"),
                (o.network.is_some(), "network"),
            ] {
                if set && o.adapter.is_some() {
                    return Err(option_error(
                        key,
                        &format!(
                            "{key} needs iframeRuntime(): a runtime adapter runs code its own way"
                        ),
                    ));
                }
            }
            Ok(o)
        })
    }
}

/// A list of strings (`network.allow`, `network.methods`); `None` when absent.
fn string_list(v: &JsValue, key: &'static str) -> Result<Option<Vec<String>>, JsValue> {
    let raw = opt(v, key)?;
    if is_absent(&raw) {
        return Ok(None);
    }
    let bad = || {
        option_error(
            &format!("network.{key}"),
            &format!("network.{key} must be a list of strings"),
        )
    };
    let list = raw.dyn_into::<js_sys::Array>().map_err(|_| bad())?;
    if list.length() > 1000 {
        return Err(bad());
    }
    list.iter()
        .map(|s| s.as_string().ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// `openDen`'s `readOnlyPaths`: a list of den paths (files or folders); absent or null: none.
pub(crate) fn read_only_paths(v: &JsValue) -> Result<ReadOnlyPaths, JsValue> {
    if is_absent(v) {
        return Ok(ReadOnlyPaths::default());
    }
    let bad = || {
        option_error(
            "readOnlyPaths",
            "readOnlyPaths must be a list of den paths, e.g. [\"/work/data\", \"/drop/config.json\"]",
        )
    };
    let list = v.clone().dyn_into::<js_sys::Array>().map_err(|_| bad())?;
    let n = list.length() as usize;
    if n > MAX_READ_ONLY_PATHS {
        let e = foxden_core::readonly::ReadOnlyError::TooMany(n);
        return Err(option_error(
            "readOnlyPaths",
            &format!("readOnlyPaths: {e}"),
        ));
    }
    let mut paths = Vec::with_capacity(n);
    for i in 0..n as u32 {
        let item = js_sys::Reflect::get_u32(&list, i)?;
        paths.push(item.as_string().ok_or_else(bad)?);
    }
    ReadOnlyPaths::parse(&paths)
        .map_err(|e| option_error("readOnlyPaths", &format!("readOnlyPaths: {e}")))
}

/// `openDen`'s `network` option: absent, null or false is off.
pub(crate) fn network_options(v: &JsValue) -> Result<Option<NetworkConfig>, JsValue> {
    if is_absent(v) || v.as_bool() == Some(false) {
        return Ok(None);
    }
    if !v.is_object() {
        return Err(option_error(
            "network",
            "network must be an object: { allow: [url patterns], methods?, perMinute?, maxResponseBytes? }",
        ));
    }
    let allow = string_list(v, "allow")?.unwrap_or_default();
    let methods = string_list(v, "methods")?;
    let per_minute = number(v, Api::Network, "perMinute")? as u64;
    let max_response_bytes = number(v, Api::Network, "maxResponseBytes")? as u64;
    NetworkConfig::new(&allow, methods.as_deref(), per_minute, max_response_bytes)
        .map(Some)
        .map_err(|e| option_error(e.option, &e.to_string()))
}

pub(crate) struct RunOptions {
    pub(crate) timeout_ms: f64,
    pub(crate) max_output_bytes: f64,
    pub(crate) on_output: Option<Function>,
    pub(crate) on_display: Option<Function>,
    /// Answers `input()` on a cross-origin isolated den: `({ runId, prompt }) => string | null`.
    pub(crate) on_input: Option<Function>,
    pub(crate) on_request: Option<Function>,
    /// What `input()` and `sys.stdin` read (then EOF), or `None`.
    pub(crate) stdin: Option<String>,
    /// Who started the run (the element's event router; 0 for `run()` on a den).
    pub(crate) tag: u32,
    /// The code is JavaScript (`lang: "javascript"`), not Python.
    pub(crate) javascript: bool,
    /// `vars`: names set in the code's global scope before it runs, as JSON text (checked).
    pub(crate) vars: Option<String>,
    /// `signal`: aborted before the run starts, the run does not start (it rejects with the
    /// signal's reason); aborted while it runs, it is stopped as by `stop()`.
    pub(crate) signal: Option<web_sys::AbortSignal>,
}

impl RunOptions {
    /// The language of the code, as the protocol names it.
    pub(crate) fn lang(&self) -> &'static str {
        if self.javascript {
            "javascript"
        } else {
            "python"
        }
    }

    /// `stdin` as a JS value (null: none).
    pub(crate) fn stdin_js(&self) -> JsValue {
        self.stdin.as_deref().map_or(JsValue::NULL, JsValue::from)
    }
}

/// Reads the run option `lang`: `"python"` (default) or `"javascript"`.
fn lang(v: &JsValue) -> Result<bool, JsValue> {
    let raw = opt(v, "lang")?;
    if is_absent(&raw) {
        return Ok(false);
    }
    match raw.as_string().as_deref() {
        Some("python") => Ok(false),
        Some("javascript") => Ok(true),
        _ => Err(option_error(
            "lang",
            "lang must be \"python\" or \"javascript\"",
        )),
    }
}

/// Reads the run option `vars`: an object of names to JSON values (absent: none), as the JSON
/// text the worker sets them from.
fn vars(raw: &JsValue) -> Result<Option<String>, JsValue> {
    if is_absent(raw) {
        return Ok(None);
    }
    let bad = |why: &str| option_error("vars", &format!("vars {why}"));
    // (A revoked Proxy throws from Array.isArray: that is the reason.)
    if !raw.is_object() || crate::js::is_array(raw)? {
        return Err(bad(
            "must be an object of names to JSON values: { rows: [...], n: 3 }",
        ));
    }
    // JSON.stringify reads the object (getters, toJSON) once; what it throws is the reason.
    let json = js_sys::JSON::stringify(raw)
        .map_err(|e| bad(&format!("must be JSON data: {}", crate::js::describe(&e))))?;
    let json = crate::wire::text(&json.into(), limits::MAX_VARS_BYTES)
        .filter(|(_, cut)| !cut)
        .map(|(s, _)| s)
        .ok_or_else(|| {
            bad(&format!(
                "must be JSON data (an object of names to JSON values) of at most {} bytes",
                limits::MAX_VARS_BYTES
            ))
        })?;
    // The names as the worker will see them (a toJSON may have made them).
    let parsed = js_sys::JSON::parse(&json).map_err(|_| bad("must be JSON data"))?;
    if !parsed.is_object() || js_sys::Array::is_array(&parsed) {
        return Err(bad("must be an object of names to JSON values"));
    }
    let names = js_sys::Object::keys(parsed.unchecked_ref::<js_sys::Object>());
    if names.length() as usize > limits::MAX_VARS {
        return Err(bad(&format!("sets more than {} names", limits::MAX_VARS)));
    }
    for name in names.iter() {
        limits::check_var_name(&name.as_string().unwrap_or_default())
            .map_err(|e| option_error("vars", &e))?;
    }
    Ok(Some(json))
}

/// A callback option: absent (`undefined`, `null`), or a function; anything else is refused
/// (`onInput: "x"` would otherwise make a run silently non-interactive).
fn callback(v: &JsValue, key: &'static str) -> Result<Option<Function>, JsValue> {
    let raw = opt(v, key)?;
    if is_absent(&raw) {
        return Ok(None);
    }
    raw.dyn_into::<Function>()
        .map(Some)
        .map_err(|_| option_error(key, &format!("{key} must be a function")))
}

pub(crate) fn run_options(v: &JsValue) -> Result<RunOptions, JsValue> {
    let javascript = lang(v)?;
    for key in ["stdin", "onInput"] {
        if javascript && !is_absent(&opt(v, key)?) {
            return Err(option_error(
                key,
                &format!("{key} is for Python runs: JavaScript runs have no stdin"),
            ));
        }
    }
    Ok(RunOptions {
        javascript,
        timeout_ms: number(v, Api::Run, "timeoutMs")?,
        max_output_bytes: number(v, Api::Run, "maxOutputBytes")?,
        on_output: callback(v, "onOutput")?,
        on_display: callback(v, "onDisplay")?,
        on_input: callback(v, "onInput")?,
        on_request: callback(v, "onRequest")?,
        stdin: {
            let raw = opt(v, "stdin")?;
            if is_absent(&raw) {
                None
            } else {
                let js = raw
                    .dyn_ref::<js_sys::JsString>()
                    .ok_or_else(|| option_error("stdin", "stdin must be a string"))?;
                // Each UTF-16 unit is one UTF-8 byte or more: a string of too many units is
                // refused before it is copied into wasm memory (which never shrinks).
                if js.length() as usize > limits::MAX_STDIN_BYTES {
                    return Err(option_error(
                        "stdin",
                        &format!(
                            "stdin is {} UTF-16 units, over the cap of {} bytes",
                            js.length(),
                            limits::MAX_STDIN_BYTES
                        ),
                    ));
                }
                let s = String::from(js);
                if s.len() > limits::MAX_STDIN_BYTES {
                    return Err(option_error(
                        "stdin",
                        &format!(
                            "stdin is {} bytes, over the cap of {} bytes",
                            s.len(),
                            limits::MAX_STDIN_BYTES
                        ),
                    ));
                }
                Some(s)
            }
        },
        tag: 0,
        vars: vars(&opt(v, "vars")?)?,
        signal: {
            let raw = opt(v, "signal")?;
            if is_absent(&raw) {
                None
            } else {
                let not_signal = || option_error("signal", "signal must be an AbortSignal");
                // `instanceof` only looks at the prototype chain: an object made from
                // AbortSignal.prototype is none, and its `aborted` getter throws (read here
                // through Reflect, which catches, rather than later by the run).
                js_sys::Reflect::get(&raw, &"aborted".into()).map_err(|_| not_signal())?;
                Some(
                    raw.dyn_into::<web_sys::AbortSignal>()
                        .map_err(|_| not_signal())?,
                )
            }
        },
    })
}
