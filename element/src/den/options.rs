//! `openDen` and `run` options, validated.

use crate::errors::option_error;
use crate::js::{get, get_str, is_absent};
use crate::runtime::RuntimeOptions;
use crate::store::StoreSpec;
use foxden_core::limits;
use js_sys::Function;
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
}

pub(crate) fn positive(v: &JsValue, key: &str, default: f64, max: f64) -> Result<f64, JsValue> {
    let raw = get(v, key);
    if is_absent(&raw) {
        return Ok(default);
    }
    match raw.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 && n <= max && n.fract() == 0.0 => Ok(n),
        _ => Err(option_error(
            key,
            &format!("{key} must be a whole number from 0 to {max}"),
        )),
    }
}

impl DenOptions {
    pub fn from_js(v: &JsValue) -> Result<Self, JsValue> {
        if !v.is_object() {
            return Err(option_error(
                "options",
                "openDen needs an options object with at least a name",
            ));
        }
        let name = get_str(v, "name").ok_or_else(|| {
            option_error(
                "name",
                "name is required: 1-64 ASCII letters, digits, '-' or '_'",
            )
        })?;
        limits::validate_den_name(&name).map_err(|e| option_error("name", &e.to_string()))?;
        let rt = get(v, "runtime");
        let runtime = if is_absent(&rt) {
            RuntimeOptions::from_js(&JsValue::UNDEFINED)?
        } else {
            if get_str(&rt, "kind").as_deref() != Some("iframe") {
                return Err(option_error(
                    "runtime",
                    "runtime must come from iframeRuntime()",
                ));
            }
            RuntimeOptions::from_js(&rt)?
        };
        let store = StoreSpec::from_js(&get(v, "store"))?;
        let max_den_bytes = positive(
            v,
            "maxDenBytes",
            limits::DEFAULT_MAX_DEN_BYTES as f64,
            4_294_967_296.0 * 16.0,
        )? as u64;
        let kill_grace_ms = positive(
            v,
            "killGraceMs",
            limits::DEFAULT_KILL_GRACE_MS as f64,
            60_000.0,
        )? as u32;
        let mut runtime = runtime;
        runtime.max_den_bytes = max_den_bytes as f64;
        runtime.max_memory_bytes = positive(
            v,
            "maxMemoryBytes",
            limits::DEFAULT_MAX_MEMORY_BYTES as f64,
            limits::MAX_MEMORY_BYTES as f64,
        )?;
        if runtime.max_memory_bytes < limits::MIN_MEMORY_BYTES as f64 {
            return Err(option_error(
                "maxMemoryBytes",
                &format!(
                    "maxMemoryBytes must be at least {} (Pyodide needs that much to start)",
                    limits::MIN_MEMORY_BYTES
                ),
            ));
        }
        Ok(DenOptions {
            name,
            runtime,
            store,
            max_den_bytes,
            kill_grace_ms,
        })
    }
}

pub(crate) struct RunOptions {
    pub(crate) timeout_ms: f64,
    pub(crate) max_output_bytes: f64,
    pub(crate) on_output: Option<Function>,
}

pub(crate) fn run_options(v: &JsValue) -> Result<RunOptions, JsValue> {
    Ok(RunOptions {
        timeout_ms: {
            let t = positive(
                v,
                "timeoutMs",
                limits::DEFAULT_TIMEOUT_MS as f64,
                limits::MAX_TIMEOUT_MS as f64,
            )?;
            if t == 0.0 {
                return Err(option_error("timeoutMs", "timeoutMs must be at least 1"));
            }
            t
        },
        max_output_bytes: positive(
            v,
            "maxOutputBytes",
            limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
            1_073_741_824.0,
        )?,
        on_output: get(v, "onOutput").dyn_into::<Function>().ok(),
    })
}
