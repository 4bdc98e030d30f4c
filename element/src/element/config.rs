//! Attributes: parsing, validation and reflection as properties.

use super::*;
use crate::den::DenOptions;
use crate::errors::option_error;
use crate::js::{get_str, is_absent, obj};
use crate::runtime::RuntimeOptions;
use crate::store::{StoreSpec, DEFAULT_DB};
use foxden_core::limits;
use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::Element;

/// How a reflected property maps to its attribute.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Text,
    Number,
    Flag,
}

/// (attribute, property, kind). Every attribute is observed and reflected as a property.
pub(crate) const ATTRS: &[(&str, &str, Kind)] = &[
    ("name", "name", Kind::Text),
    ("store", "store", Kind::Text),
    ("timeout", "timeout", Kind::Number),
    ("den-url", "denUrl", Kind::Text),
    ("pyodide-url", "pyodideUrl", Kind::Text),
    ("isolation", "isolation", Kind::Text),
    ("max-output-bytes", "maxOutputBytes", Kind::Number),
    ("max-den-bytes", "maxDenBytes", Kind::Number),
    ("load-timeout", "loadTimeout", Kind::Number),
    ("warm-start", "warmStart", Kind::Text),
    ("standby", "standby", Kind::Text),
    ("controls", "controls", Kind::Flag),
    ("autorun", "autorun", Kind::Flag),
];

/// Methods the shim forwards (their Rust names are below, under `js_name`).
pub(crate) const METHODS: &[&str] = &[
    "run",
    "sh",
    "writeFile",
    "readFile",
    "readText",
    "deleteFile",
    "list",
    "snapshot",
    "restore",
    "fork",
    "reset",
    "close",
];

/// Defines `<foxden-den>` (once per page). foxden.js passes the handle class.
#[wasm_bindgen(js_name = __defineElement)]
pub fn define_element(handle_class: JsValue) -> bool {
    let attrs: Array = ATTRS.iter().map(|a| JsValue::from_str(a.0)).collect();
    let props: Array = ATTRS.iter().map(|a| JsValue::from_str(a.1)).collect();
    let methods: Array = METHODS.iter().map(|m| JsValue::from_str(m)).collect();
    let spec = obj(&[
        ("tag", TAG.into()),
        ("attributes", attrs.into()),
        ("properties", props.into()),
        ("methods", methods.into()),
    ]);
    define_foxden_element(&handle_class, &spec.into())
}

// ---------------------------------------------------------------------------------------------
// Attributes

/// The element's attributes, parsed and validated.
pub(crate) struct Config {
    /// Everything that needs a new den when it changes.
    pub(crate) key: String,
    pub(crate) den: DenOptions,
    pub(crate) timeout_ms: f64,
    pub(crate) max_output_bytes: f64,
}

/// A `DenError` (code "bad-option") whose `option` and `attribute` name the attribute.
pub(crate) fn attr_error(attr: &str, message: &str) -> JsValue {
    let e = option_error(attr, &format!("<foxden-den> attribute {attr}: {message}"));
    let _ = Reflect::set(&e, &"attribute".into(), &attr.into());
    e
}

/// Parses a whole number attribute in `min..=max`.
pub(crate) fn whole(
    value: Option<String>,
    attr: &str,
    default: f64,
    min: f64,
    max: f64,
) -> Result<f64, JsValue> {
    let Some(raw) = value else {
        return Ok(default);
    };
    let t = raw.trim();
    let n: f64 = t.parse().unwrap_or(f64::NAN);
    if t.is_empty() || !n.is_finite() || n.fract() != 0.0 || n < min || n > max {
        return Err(attr_error(
            attr,
            &format!("{raw:?} is not a whole number from {min} to {max}"),
        ));
    }
    Ok(n)
}

/// Parses `store`: `memory` (default), `idb`, or `idb:<dbName>`.
pub(crate) fn parse_store(value: Option<&str>) -> Result<StoreSpec, String> {
    match value.map(str::trim) {
        None | Some("") | Some("memory") => Ok(StoreSpec::Memory),
        Some("idb") => Ok(StoreSpec::Idb(DEFAULT_DB.into())),
        Some(s) => match s.strip_prefix("idb:") {
            Some(db) if !db.is_empty() => Ok(StoreSpec::Idb(db.into())),
            _ => Err(format!(
                "{s:?} is not a store: use \"memory\", \"idb\" or \"idb:<dbName>\""
            )),
        },
    }
}

/// Removes the common leading whitespace of the code's lines, and blank first/last lines, so
/// code indented to match the surrounding HTML runs as Python.
pub fn dedent(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |i| i + 1);
    let body = &lines[start..end];
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in body {
        // Leading spaces and tabs are one byte each, so cutting at a byte index is safe.
        let lead = l.len() - l.trim_start_matches([' ', '\t']).len();
        out.push_str(&l[indent.min(lead)..]);
        out.push('\n');
    }
    out
}

pub(crate) fn attr(el: &Element, name: &str) -> Option<String> {
    el.get_attribute(name)
}

/// Parses every attribute; on failure, one error per bad attribute (in attribute order).
pub(crate) fn parse_config(el: &Element) -> Result<Config, Vec<JsValue>> {
    let mut errors = Vec::new();
    let mut keep = |r: Result<f64, JsValue>, default: f64| -> f64 {
        r.unwrap_or_else(|e| {
            errors.push(e);
            default
        })
    };
    let name = attr(el, "name").unwrap_or_default();
    let name_error = match attr(el, "name") {
        None => Some(attr_error(
            "name",
            "a name is required: 1-64 ASCII letters, digits, '-' or '_'",
        )),
        Some(n) => limits::validate_den_name(&n)
            .err()
            .map(|e| attr_error("name", &e.to_string())),
    };
    let store = parse_store(attr(el, "store").as_deref());
    let timeout_ms = keep(
        whole(
            attr(el, "timeout"),
            "timeout",
            limits::DEFAULT_TIMEOUT_MS as f64,
            1.0,
            limits::MAX_TIMEOUT_MS as f64,
        ),
        0.0,
    );
    let max_output_bytes = keep(
        whole(
            attr(el, "max-output-bytes"),
            "max-output-bytes",
            limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
            0.0,
            1_073_741_824.0,
        ),
        0.0,
    );
    let max_den_bytes = keep(
        whole(
            attr(el, "max-den-bytes"),
            "max-den-bytes",
            limits::DEFAULT_MAX_DEN_BYTES as f64,
            0.0,
            4_294_967_296.0 * 16.0,
        ),
        0.0,
    );
    let load_timeout = keep(
        whole(
            attr(el, "load-timeout"),
            "load-timeout",
            limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
            1.0,
            3_600_000.0,
        ),
        limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
    );
    errors.extend(name_error);
    let store = store.unwrap_or_else(|m| {
        errors.push(attr_error("store", &m));
        StoreSpec::Memory
    });
    // The runtime options reuse iframeRuntime()'s checks; its errors are renamed to attributes.
    let ro = obj(&[("loadTimeoutMs", load_timeout.into())]);
    let mut runtime = None;
    for (a, key) in [
        ("den-url", "denUrl"),
        ("pyodide-url", "pyodideUrl"),
        ("isolation", "isolation"),
        ("warm-start", "warmStart"),
        ("standby", "standby"),
    ] {
        if let Some(v) = attr(el, a) {
            let _ = Reflect::set(&ro, &key.into(), &v.into());
        }
        // Checked one at a time so that each bad one gets its own error.
        let one = obj(&[("loadTimeoutMs", load_timeout.into())]);
        if let Some(v) = attr(el, a) {
            let _ = Reflect::set(&one, &key.into(), &v.into());
        }
        if let Err(e) = RuntimeOptions::from_js(&one) {
            errors.push(attr_error(a, &get_str(&e, "message").unwrap_or_default()));
        }
    }
    if errors.is_empty() {
        runtime = RuntimeOptions::from_js(&ro).ok();
    }
    let Some(runtime) = runtime.filter(|_| errors.is_empty()) else {
        let order = |e: &JsValue| {
            let a = get_str(e, "attribute");
            ATTRS.iter().position(|x| Some(x.0) == a.as_deref())
        };
        errors.sort_by_key(order);
        return Err(errors);
    };
    let key = format!(
        "{name}\n{store:?}\n{}\n{}\n{}\n{max_den_bytes}\n{load_timeout}\n{}\n{}",
        runtime.den_url,
        runtime.pyodide_url,
        runtime.isolation.as_str(),
        runtime.warm_start,
        runtime.standby
    );
    Ok(Config {
        key,
        den: DenOptions {
            name,
            runtime,
            store,
            max_den_bytes: max_den_bytes as u64,
            kill_grace_ms: limits::DEFAULT_KILL_GRACE_MS,
        },
        timeout_ms,
        max_output_bytes,
    })
}

/// The property value of a reflected attribute.
pub(crate) fn prop_value(el: &Element, prop: &str) -> JsValue {
    let Some(&(a, _, kind)) = ATTRS.iter().find(|x| x.1 == prop) else {
        return JsValue::UNDEFINED;
    };
    let raw = attr(el, a);
    match kind {
        Kind::Flag => raw.is_some().into(),
        Kind::Number => {
            let default = match a {
                "timeout" => limits::DEFAULT_TIMEOUT_MS as f64,
                "max-output-bytes" => limits::DEFAULT_MAX_OUTPUT_BYTES as f64,
                "max-den-bytes" => limits::DEFAULT_MAX_DEN_BYTES as f64,
                _ => limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
            };
            raw.and_then(|r| r.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite())
                .unwrap_or(default)
                .into()
        }
        Kind::Text => match (a, raw) {
            (_, Some(v)) => v.into(),
            ("store", None) => "memory".into(),
            ("isolation", None) => "auto".into(),
            ("warm-start", None) | ("standby", None) => "on".into(),
            ("den-url", None) | ("pyodide-url", None) => {
                // The URL the den will use: next to foxden.js.
                RuntimeOptions::from_js(&JsValue::UNDEFINED)
                    .map(|r| {
                        if a == "den-url" {
                            r.den_url
                        } else {
                            r.pyodide_url
                        }
                    })
                    .unwrap_or_default()
                    .into()
            }
            _ => "".into(),
        },
    }
}

pub(crate) fn set_prop_value(el: &Element, prop: &str, v: &JsValue) -> Result<(), JsValue> {
    let Some(&(a, _, kind)) = ATTRS.iter().find(|x| x.1 == prop) else {
        return Ok(());
    };
    if kind == Kind::Flag {
        return el.toggle_attribute_with_force(a, v.is_truthy()).map(|_| ());
    }
    if is_absent(v) {
        return el.remove_attribute(a);
    }
    let s = match v.as_f64() {
        Some(n) => format!("{n}"),
        None => js_sys::JsString::from(v.clone()).into(),
    };
    el.set_attribute(a, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_strips_html_indentation() {
        let code = "\n    import csv\n    for r in rows:\n        print(r)\n  \n";
        assert_eq!(dedent(code), "import csv\nfor r in rows:\n    print(r)\n");
        assert_eq!(dedent(""), "");
        assert_eq!(dedent("x = 1"), "x = 1\n");
    }

    #[test]
    fn store_values() {
        assert_eq!(parse_store(None), Ok(StoreSpec::Memory));
        assert_eq!(parse_store(Some("memory")), Ok(StoreSpec::Memory));
        assert_eq!(
            parse_store(Some("idb")),
            Ok(StoreSpec::Idb(DEFAULT_DB.into()))
        );
        assert_eq!(
            parse_store(Some("idb:notes")),
            Ok(StoreSpec::Idb("notes".into()))
        );
        assert!(parse_store(Some("idb:")).is_err());
        assert!(parse_store(Some("disk")).is_err());
    }
}
