//! Attributes: parsing, validation and reflection as properties.

use super::*;
use crate::den::DenOptions;
use crate::errors::option_error;
use crate::js::{get_str, is_absent, obj};
use crate::runtime::RuntimeOptions;
use crate::store::{StoreSpec, DEFAULT_DB};
use foxden_core::limits;
use foxden_core::options::{self, Type};
use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::Element;

/// The element's attributes, from the one options table (`foxden_core::options`): every
/// attribute is observed and reflected as a property.
pub(crate) fn attrs() -> impl Iterator<Item = &'static options::Opt> {
    options::attributes()
}

/// The attribute name of an option of the table.
fn attr_name(o: &options::Opt) -> &'static str {
    o.attribute.unwrap_or_default()
}

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
    "stop",
    "close",
];

/// Defines `<foxden-den>` (once per page). foxden.js passes the handle class.
#[wasm_bindgen(js_name = __defineElement)]
pub fn define_element(handle_class: JsValue) -> bool {
    let names: Array = attrs().map(|o| JsValue::from_str(attr_name(o))).collect();
    let props: Array = attrs()
        .map(|o| JsValue::from_str(o.property.unwrap_or_default()))
        .collect();
    let methods: Array = METHODS.iter().map(|m| JsValue::from_str(m)).collect();
    let spec = obj(&[
        ("tag", TAG.into()),
        ("attributes", names.into()),
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
    /// The shared environment (`env`), whose name is also the den's.
    pub(crate) env: Option<String>,
    /// `loading="lazy"`: the den opens when the element nears the viewport or is used.
    pub(crate) lazy: bool,
}

/// A `DenError` (code "bad-option") whose `option` and `attribute` name the attribute.
pub(crate) fn attr_error(attr: &str, message: &str) -> JsValue {
    let e = option_error(attr, &format!("<foxden-den> attribute {attr}: {message}"));
    let _ = Reflect::set(&e, &"attribute".into(), &attr.into());
    e
}

/// Parses a number attribute with the default, range and unit of its option in the table.
pub(crate) fn number_attr(el: &Element, attr: &str) -> Result<f64, JsValue> {
    let Some(opt) = options::by_attribute(attr) else {
        return Err(attr_error(attr, "is not a number attribute"));
    };
    let Some(raw) = el.get_attribute(attr) else {
        return Ok(opt.default_number() as f64);
    };
    opt.parse_number(&raw)
        .map(|n| n as f64)
        .map_err(|e| attr_error(attr, &format!("{raw:?}: {e}")))
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
/// code indented to match the surrounding HTML runs as Python. Comment lines do not count
/// towards the indent (Python ignores theirs), so a comment on the tag's own line
/// (`<script setup>   # hidden`) or a less indented one inside does not break the code.
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
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
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

/// Parses every attribute, and the `runtime` property: a runtime adapter replaces the iframe
/// runtime the attributes describe. On failure, one error per bad attribute (in attribute order).
pub(crate) fn parse_config(el: &Element) -> Result<Config, Vec<JsValue>> {
    let mut errors = Vec::new();
    // Checked when it was set (element.js). Read again here: an adapter whose functions can no
    // longer be read, or that lost start(), run() or close() since, is reported as the
    // attribute errors are (never silently replaced by the iframe runtime).
    let runtime_prop = super::runtime_of(el);
    let adapter_id = runtime_prop.get(1).as_f64().unwrap_or(0.0) as u64;
    let runtime_value = runtime_prop.get(0);
    let adapter = match crate::den::adapter::Adapter::from_js(&runtime_value) {
        Ok(None) if !is_absent(&runtime_value) => {
            errors.push(option_error(
                "runtime",
                "the element's runtime adapter no longer has a run(request) function",
            ));
            None
        }
        Ok(a) => a,
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let mut keep = |r: Result<f64, JsValue>, default: f64| -> f64 {
        r.unwrap_or_else(|e| {
            errors.push(e);
            default
        })
    };
    // With `env`, the den is the environment's, named after it; `name` is not needed.
    let env = match attr(el, "env") {
        None => Ok(None),
        Some(e) => foxden_core::lesson::env_name(&e)
            .map(|n| Some(n.to_owned()))
            .map_err(|err| attr_error("env", &err.to_string())),
    };
    let (env, env_error) = match env {
        Ok(e) => (e, None),
        Err(e) => (None, Some(e)),
    };
    let name = env.clone().or_else(|| attr(el, "name")).unwrap_or_default();
    let name_error = match attr(el, "name") {
        _ if env.is_some() || attr(el, "env").is_some() => None,
        None => Some(attr_error(
            "name",
            "a name is required: 1-64 ASCII letters, digits, '-' or '_'",
        )),
        Some(n) => limits::validate_den_name(&n)
            .err()
            .map(|e| attr_error("name", &e.to_string())),
    };
    let store = parse_store(attr(el, "store").as_deref());
    let timeout_ms = keep(number_attr(el, "timeout"), 0.0);
    let max_output_bytes = keep(number_attr(el, "max-output-bytes"), 0.0);
    let max_den_bytes = keep(number_attr(el, "max-den-bytes"), 0.0);
    let max_file_bytes = keep(number_attr(el, "max-file-bytes"), 0.0);
    let max_files = keep(number_attr(el, "max-files"), 0.0);
    let max_writes = keep(number_attr(el, "max-writes-per-minute"), 0.0);
    let max_memory = keep(
        number_attr(el, "max-memory-bytes"),
        limits::DEFAULT_MAX_MEMORY_BYTES as f64,
    );
    let kill_grace = keep(
        number_attr(el, "kill-grace"),
        f64::from(limits::DEFAULT_KILL_GRACE_MS),
    );
    // Wheels: `url#sha256=<hex>` separated by spaces; a bad one is an attribute error naming it.
    let packages_attr = attr(el, "packages").unwrap_or_default();
    let packages = crate::runtime::packages::from_attribute(&packages_attr);
    let load_timeout = keep(
        number_attr(el, "load-timeout"),
        limits::DEFAULT_LOAD_TIMEOUT_MS as f64,
    );
    let lazy = match attr(el, "loading").as_deref().map(str::trim) {
        None | Some("") | Some("eager") => false,
        Some("lazy") => true,
        Some(other) => {
            errors.push(attr_error(
                "loading",
                &format!("{other:?} is not a loading mode: use \"eager\" or \"lazy\""),
            ));
            false
        }
    };
    errors.extend(name_error);
    errors.extend(env_error);
    let packages = packages.unwrap_or_else(|e| {
        errors.push(attr_error("packages", &e.to_string()));
        Vec::new()
    });
    let read_only_attr = attr(el, "read-only-paths").unwrap_or_default();
    let read_only_list: Vec<&str> = read_only_attr.split_whitespace().collect();
    let read_only =
        foxden_core::readonly::ReadOnlyPaths::parse(&read_only_list).unwrap_or_else(|e| {
            errors.push(attr_error("read-only-paths", &e.to_string()));
            Default::default()
        });
    let network = network_attrs(el).unwrap_or_else(|e| {
        errors.extend(e);
        None
    });
    let store = store.unwrap_or_else(|m| {
        errors.push(attr_error("store", &m));
        StoreSpec::Memory
    });
    // The runtime options reuse iframeRuntime()'s checks; its errors are renamed to attributes.
    let ro = obj(&[("loadTimeoutMs", load_timeout.into())]);
    let mut runtime = None;
    let runtime_attrs = attrs().filter_map(|o| match o.api {
        Some((options::Api::IframeRuntime, key)) if key != "loadTimeoutMs" => {
            Some((attr_name(o), key))
        }
        _ => None,
    });
    for (a, key) in runtime_attrs {
        if let Some(v) = attr(el, a) {
            let _ = Reflect::set(&ro, &key.into(), &v.into());
        }
        // Checked one at a time so that each bad one gets its own error.
        let one = obj(&[("loadTimeoutMs", load_timeout.into())]);
        if let Some(v) = attr(el, a) {
            let _ = Reflect::set(&one, &key.into(), &v.into());
        }
        if let Err(e) = RuntimeOptions::from_js(&one) {
            let message = get_str(&e, "message").unwrap_or_default();
            errors.push(attr_error(a, &options::for_attribute(&message, key, a)));
        }
    }
    // The wheels and the network broker work through the den page and its worker.
    if adapter.is_some() {
        for (set, a) in [
            (!packages.is_empty(), "packages"),
            (network.is_some(), "network"),
        ] {
            if set {
                errors.push(attr_error(
                    a,
                    &format!("{a} needs the iframe runtime: the element's runtime property is an adapter, which runs code its own way"),
                ));
            }
        }
    }
    if errors.is_empty() {
        // An adapter den keeps only load-timeout (its start and reset), as the attributes of
        // the iframe runtime do not apply to it.
        let ro = if adapter.is_some() {
            obj(&[("loadTimeoutMs", load_timeout.into())])
        } else {
            ro
        };
        runtime = RuntimeOptions::from_js(&ro).ok();
    }
    let Some(mut runtime) = runtime.filter(|_| errors.is_empty()) else {
        let order = |e: &JsValue| {
            let a = get_str(e, "attribute");
            attrs().position(|o| o.attribute == a.as_deref())
        };
        foxden_core::order::sort_by_key(&mut errors, order);
        return Err(errors);
    };
    runtime.max_memory_bytes = max_memory;
    let key = format!(
        "{env:?}\n{name}\n{store:?}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{packages_attr}\n{}\n{}",
        runtime.den_url,
        runtime.pyodide_url,
        runtime.isolation.as_str(),
        // Whole numbers (checked above), written as such: float formatting is heavy in wasm.
        max_den_bytes as u64,
        load_timeout as u64,
        runtime.warm_start,
        runtime.standby,
        max_file_bytes as u64,
        max_files as u64,
        max_writes as u64,
        // Not applied to a runtime adapter: a change must not reopen an adapter's den.
        if adapter.is_none() { max_memory as u64 } else { 0 },
        if adapter.is_none() { kill_grace as u64 } else { 0 },
        // The network attributes as written (a change reopens the den).
        ["network", "network-methods", "network-per-minute", "network-max-response-bytes"]
            .map(|a| attr(el, a).unwrap_or_default())
            .join("\n"),
        read_only.entries().join(" ")
    );
    // Another runtime adapter (or none): a den on it. The same object again changes nothing.
    let key = format!("{key}\nruntime {adapter_id}");
    Ok(Config {
        key,
        den: DenOptions {
            name,
            runtime,
            store,
            max_den_bytes: max_den_bytes as u64,
            kill_grace_ms: kill_grace as u32,
            max_file_bytes: max_file_bytes as u64,
            max_files: max_files as usize,
            max_writes_per_minute: max_writes as u32,
            packages,
            network,
            adapter,
            read_only,
        },
        timeout_ms,
        max_output_bytes,
        env,
        lazy,
    })
}

/// The network attributes: `network` (URL patterns separated by spaces; absent or blank: no
/// network), `network-methods`, `network-per-minute`, `network-max-response-bytes`, checked by
/// the same rules as `openDen({ network })`. Each bad one is reported, with or without `network`.
fn network_attrs(el: &Element) -> Result<Option<foxden_core::net::NetworkConfig>, Vec<JsValue>> {
    let mut errors = Vec::new();
    let per_minute = number_attr(el, "network-per-minute")
        .map_err(|e| errors.push(e))
        .ok();
    let max_response = number_attr(el, "network-max-response-bytes")
        .map_err(|e| errors.push(e))
        .ok();
    let methods: Option<Vec<String>> = attr(el, "network-methods").map(|m| {
        m.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    });
    if let Err(e) = foxden_core::net::parse_methods(methods.as_deref()) {
        errors.push(attr_error("network-methods", &e.message));
    }
    let allow = attr(el, "network").filter(|a| !a.trim().is_empty());
    let (Some(per_minute), Some(max_response), true) =
        (per_minute, max_response, errors.is_empty())
    else {
        return Err(errors);
    };
    let Some(allow) = allow else {
        return Ok(None);
    };
    let allow: Vec<String> = allow.split_whitespace().map(str::to_owned).collect();
    foxden_core::net::NetworkConfig::new(
        &allow,
        methods.as_deref(),
        per_minute as u64,
        max_response as u64,
    )
    .map(Some)
    .map_err(|e| {
        let a = if e.option == "network.methods" {
            "network-methods"
        } else {
            "network"
        };
        vec![attr_error(a, &e.message)]
    })
}

/// The property value of a reflected attribute: numbers and flags typed, and the default when
/// the attribute is absent (or, for a number, unreadable).
pub(crate) fn prop_value(el: &Element, prop: &str) -> JsValue {
    let Some(o) = options::by_property(prop) else {
        return JsValue::UNDEFINED;
    };
    let a = attr_name(o);
    let raw = attr(el, a);
    match o.ty {
        Type::Flag => raw.is_some().into(),
        Type::Number => raw
            .and_then(|r| foxden_core::decimal::parse_f64(r.trim()))
            .filter(|n| n.is_finite())
            .unwrap_or(o.default_number() as f64)
            .into(),
        Type::Text | Type::OnOff => match (raw, o.default) {
            (Some(v), _) => v.into(),
            (None, options::Default::Computed(_)) => {
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
            (None, _) => o.default_text().unwrap_or_default().into(),
        },
    }
}

pub(crate) fn set_prop_value(el: &Element, prop: &str, v: &JsValue) -> Result<(), JsValue> {
    let Some(o) = options::by_property(prop) else {
        return Ok(());
    };
    let a = attr_name(o);
    if o.ty == Type::Flag {
        return el.toggle_attribute_with_force(a, v.is_truthy()).map(|_| ());
    }
    if is_absent(v) {
        return el.remove_attribute(a);
    }
    // An on/off property also takes the library option's booleans (`el.warmStart = false`).
    if let (Type::OnOff, Some(b)) = (o.ty, v.as_bool()) {
        return el.set_attribute(a, if b { "on" } else { "off" });
    }
    let s = match v.as_f64() {
        Some(n) => foxden_core::decimal::show(n),
        // As the platform's reflected attributes: String(v) (a URL, false, 10n, a list; a
        // Symbol throws String's TypeError).
        None => crate::js::get(&js_sys::global(), "String")
            .unchecked_into::<js_sys::Function>()
            .call1(&JsValue::UNDEFINED, v)?
            .as_string()
            .unwrap_or_default(),
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
        // Text on the tag's line (a comment after `<script setup>`) does not set the indent.
        let tagged = "   # hidden\n    def f(x):\n        return x\n  ";
        assert_eq!(dedent(tagged), "# hidden\ndef f(x):\n    return x\n");
        assert_eq!(dedent("if x:\n    y = 1\n"), "if x:\n    y = 1\n");
        assert_eq!(
            dedent("    x = 1\n  # note\n    y = 2"),
            "x = 1\n# note\ny = 2\n"
        );
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
