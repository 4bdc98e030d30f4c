//! `iframeRuntime` options: URLs, isolation, load timeout, container.

use super::*;
use crate::errors::{load_error, option_error};
use crate::js::{self, is_absent, obj, opt};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Which isolation a den asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// On an extension page, manifest-sandbox, falling back to iframe-sandbox when the den page
    /// reports an isolation failure (no manifest sandbox support, e.g. Firefox ESR 153); on a
    /// website, iframe-sandbox.
    Auto,
    /// The den page is an extension manifest sandbox page.
    ManifestSandbox,
    /// An iframe with `sandbox="allow-scripts"`.
    IframeSandbox,
}

impl Isolation {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Isolation::Auto),
            "manifest-sandbox" => Some(Isolation::ManifestSandbox),
            "iframe-sandbox" => Some(Isolation::IframeSandbox),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Auto => "auto",
            Isolation::ManifestSandbox => "manifest-sandbox",
            Isolation::IframeSandbox => "iframe-sandbox",
        }
    }
}

/// Options of `iframeRuntime`, resolved.
#[derive(Clone)]
pub struct RuntimeOptions {
    pub den_url: String,
    pub pyodide_url: String,
    pub isolation: Isolation,
    pub load_timeout_ms: f64,
    pub container: Option<web_sys::Element>,
    /// Cap on the worker's WebAssembly memory (set from `openDen({ maxMemoryBytes })`).
    pub max_memory_bytes: f64,
    /// Cap on the bytes of one run's reply (set from `openDen({ maxDenBytes })`).
    pub max_den_bytes: f64,
    /// Use the warm cache (a snapshot of a fresh interpreter kept by the host page).
    pub warm_start: bool,
    /// Keep a standby interpreter booted ahead of need (timeouts and resets swap it in).
    pub standby: bool,
    /// The den's wheels, fetched and checked by the host (set from `openDen({ packages })`);
    /// handed to every den page this runtime opens.
    pub packages: std::rc::Rc<Vec<super::packages::Wheel>>,
}

thread_local! {
    static MODULE_BASE: RefCell<Option<String>> = const { RefCell::new(None) };
    static EDITOR_URL: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Set by foxden.js: `import.meta.url`, so default asset URLs resolve next to the module, and
/// the editor module's URL, written so that bundlers (webpack, Vite) emit the file and give its
/// new address (they move foxden.js, and webpack makes `import.meta.url` a file: URL).
pub fn set_module_base(url: String, editor: Option<String>) {
    MODULE_BASE.with(|b| *b.borrow_mut() = Some(url));
    EDITOR_URL.with(|e| *e.borrow_mut() = editor);
}

/// Where the `controls` editor module is (dist/editor.js, or where a bundler put it).
pub(crate) fn editor_url() -> String {
    EDITOR_URL
        .with(|e| e.borrow().clone())
        .unwrap_or_else(|| default_url("./editor.js"))
}

pub(crate) fn resolve_url(url: &str) -> Result<String, String> {
    // Relative to the page; where there is none (Node.js), only an absolute URL is valid.
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten());
    match base {
        Some(base) => web_sys::Url::new_with_base(url, &base),
        None => web_sys::Url::new(url),
    }
    .map(|u| u.href())
    .map_err(|e| js::describe(&e))
}

pub(crate) fn default_url(rel: &str) -> String {
    let base = MODULE_BASE.with(|b| b.borrow().clone());
    match base {
        Some(base) => web_sys::Url::new_with_base(rel, &base)
            .map(|u| u.href())
            .unwrap_or_else(|_| rel.to_owned()),
        None => resolve_url(rel).unwrap_or_else(|_| rel.to_owned()),
    }
}

/// A switch that is on unless set to false (or "off"); "on" / true turn it on.
fn on_off(v: &JsValue, key: &'static str) -> Result<bool, JsValue> {
    let raw = opt(v, key)?;
    if is_absent(&raw) {
        return Ok(true);
    }
    if let Some(b) = raw.as_bool() {
        return Ok(b);
    }
    match raw.as_string().as_deref() {
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        _ => Err(option_error(
            key,
            &format!("{key} must be {}", foxden_core::options::SWITCH_VALUES),
        )),
    }
}

impl RuntimeOptions {
    /// Reads the options object given to `iframeRuntime` (or the runtime part of an element).
    pub fn from_js(v: &JsValue) -> Result<Self, JsValue> {
        let url_opt = |key: &'static str, default: &str| -> Result<String, JsValue> {
            let raw = opt(v, key)?;
            if is_absent(&raw) {
                return Ok(default_url(default));
            }
            let s = raw
                .as_string()
                .ok_or_else(|| option_error(key, &format!("{key} must be a URL string")))?;
            resolve_url(&s)
                .map_err(|e| option_error(key, &format!("{key} {s:?} is not a valid URL: {e}")))
        };
        let den_url = url_opt("denUrl", "./den/den.html")?;
        let mut pyodide_url = url_opt("pyodideUrl", "./pyodide/")?;
        if !pyodide_url.ends_with('/') {
            pyodide_url.push('/');
        }
        let iso_raw = opt(v, "isolation")?;
        let isolation = if is_absent(&iso_raw) {
            Isolation::Auto
        } else {
            iso_raw
                .as_string()
                .as_deref()
                .and_then(Isolation::parse)
                .ok_or_else(|| {
                    option_error(
                        "isolation",
                        "isolation must be \"auto\", \"manifest-sandbox\" or \"iframe-sandbox\"",
                    )
                })?
        };
        let load_timeout_ms =
            crate::den::number(v, foxden_core::options::Api::IframeRuntime, "loadTimeoutMs")?;
        let warm_start = on_off(v, "warmStart")?;
        let standby = on_off(v, "standby")?;
        let c = opt(v, "container")?;
        let container = if is_absent(&c) {
            None
        } else {
            Some(
                c.dyn_into::<web_sys::Element>()
                    .map_err(|_| option_error("container", "container must be a DOM element"))?,
            )
        };
        Ok(RuntimeOptions {
            den_url,
            pyodide_url,
            isolation,
            load_timeout_ms,
            container,
            max_memory_bytes: foxden_core::limits::DEFAULT_MAX_MEMORY_BYTES as f64,
            max_den_bytes: foxden_core::limits::DEFAULT_MAX_DEN_BYTES as f64,
            warm_start,
            standby,
            packages: Default::default(),
        })
    }

    /// The plain object `iframeRuntime()` returns.
    pub fn to_js(&self) -> JsValue {
        let o = obj(&[
            ("kind", "iframe".into()),
            ("denUrl", self.den_url.as_str().into()),
            ("pyodideUrl", self.pyodide_url.as_str().into()),
            ("isolation", self.isolation.as_str().into()),
            ("loadTimeoutMs", self.load_timeout_ms.into()),
            ("warmStart", self.warm_start.into()),
            ("standby", self.standby.into()),
            (
                "container",
                self.container
                    .clone()
                    .map(JsValue::from)
                    .unwrap_or(JsValue::NULL),
            ),
        ]);
        o.into()
    }

    /// The isolation mode this page will use.
    pub(crate) fn effective_isolation(&self) -> Result<Isolation, JsValue> {
        let is_extension_page = is_extension_page();
        match self.isolation {
            Isolation::IframeSandbox => Ok(Isolation::IframeSandbox),
            Isolation::ManifestSandbox if !is_extension_page => Err(load_error(crate::errors::LoadStage::Isolation,
                "isolation \"manifest-sandbox\" needs an extension page whose manifest declares the den page in sandbox.pages",
            )),
            Isolation::ManifestSandbox => Ok(Isolation::ManifestSandbox),
            Isolation::Auto if is_extension_page => Ok(Isolation::ManifestSandbox),
            Isolation::Auto => Ok(Isolation::IframeSandbox),
        }
    }
}
