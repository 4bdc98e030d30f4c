//! One table of the options a den takes: the `<foxden-den>` attribute, the element property
//! that reflects it, the library option it stands for (`iframeRuntime`, `openDen` or `run`), its
//! type, default and range.
//!
//! Everything else reads this table: the element's attribute parsing and properties, the range
//! checks of `openDen`/`iframeRuntime`/`run`, the attribute table of `docs/element.md`
//! (generated: [`element_doc_table`]) and the `.d.ts` (checked by a native test against it).

use crate::limits;

/// The library function an option belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `iframeRuntime({ … })`.
    IframeRuntime,
    /// `openDen({ … })`.
    OpenDen,
    /// `den.run(code, { … })`.
    Run,
    /// `openDen({ network: { … } })`.
    Network,
}

impl Api {
    /// The name of the TypeScript interface that declares this function's options.
    pub fn ts_interface(self) -> &'static str {
        match self {
            Api::IframeRuntime => "IframeRuntimeOptions",
            Api::OpenDen => "OpenDenOptions",
            Api::Run => "RunOptions",
            Api::Network => "NetworkOptions",
        }
    }
}

/// The JavaScript type of a property or option value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// A string (free text or one of [`Opt::choices`]).
    Text,
    /// A whole number in [`Opt::range`].
    Number,
    /// A boolean attribute (present or absent).
    Flag,
    /// `"on"` / `"off"` as an attribute and property, `true` / `false` as a library option.
    OnOff,
}

/// The default of an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Default {
    /// No default: the option must be given.
    Required,
    /// A fixed text.
    Text(&'static str),
    /// A whole number.
    Number(u64),
    /// On (for [`Type::OnOff`]).
    On,
    /// Absent (for [`Type::Flag`]).
    Off,
    /// Computed when read (e.g. a URL next to `foxden.js`); the text says how.
    Computed(&'static str),
}

/// The unit of a number option (for messages and docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds.
    Ms,
    /// Bytes.
    Bytes,
    /// Files.
    Files,
    /// Requests.
    Requests,
    /// Not a number.
    None,
}

/// One option.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// The `<foxden-den>` attribute (`None`: library only).
    pub attribute: Option<&'static str>,
    /// The element property reflecting the attribute (`None` when there is no attribute).
    pub property: Option<&'static str>,
    /// The library option it stands for.
    pub api: Option<(Api, &'static str)>,
    /// The value type.
    pub ty: Type,
    /// The allowed texts of a [`Type::Text`] option (empty: free text, checked elsewhere).
    pub choices: &'static [&'static str],
    /// The default.
    pub default: Default,
    /// Inclusive range of a [`Type::Number`] option.
    pub range: (u64, u64),
    /// The unit of a number.
    pub unit: Unit,
    /// For the docs: the values, when the type, choices and range do not say it all.
    pub values: Doc,
    /// For the docs: what changing the attribute on a live element does.
    pub on_change: Doc,
}

/// Text for the docs only: kept in native builds (the docs are generated and checked by native
/// tests) and left out of the wasm module, where nothing reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Doc {
    #[cfg(not(target_arch = "wasm32"))]
    text: &'static str,
}

/// A [`Doc`] of `text`.
pub const fn doc(text: &'static str) -> Doc {
    #[cfg(target_arch = "wasm32")]
    let _ = text;
    Doc {
        #[cfg(not(target_arch = "wasm32"))]
        text,
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Doc {
    /// The text.
    pub fn text(&self) -> &'static str {
        self.text
    }
}

const GIB: u64 = 1 << 30;
const REOPEN: Doc = doc("Same as `den-url`.");

const fn base() -> Opt {
    Opt {
        attribute: None,
        property: None,
        api: None,
        ty: Type::Text,
        choices: &[],
        default: Default::Required,
        range: (0, 0),
        unit: Unit::None,
        values: doc(""),
        on_change: doc(""),
    }
}

/// Every option, in the order of the docs table (element attributes first).
pub const OPTIONS: &[Opt] = &[
    Opt {
        attribute: Some("name"),
        property: Some("name"),
        values: doc("1-64 ASCII letters, digits, `-`, `_` (required unless `env` is set)"),
        on_change: doc("Closes the den and opens one under the new name. A `memory` den starts empty under the new name; an `idb` den finds the files stored under that name. Python variables are lost."),
        ..base()
    },
    Opt {
        attribute: Some("store"),
        property: Some("store"),
        default: Default::Text("memory"),
        values: doc("`memory` (default), `idb`, `idb:<dbName>`"),
        on_change: doc("Closes the den and opens it on the new store (files come from that store)."),
        ..base()
    },
    Opt {
        attribute: Some("timeout"),
        property: Some("timeout"),
        api: Some((Api::Run, "timeoutMs")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_TIMEOUT_MS as u64),
        range: (1, limits::MAX_TIMEOUT_MS as u64),
        unit: Unit::Ms,
        on_change: doc("Nothing restarts: the next `run()` without `timeoutMs`, and the next Run-button run, use it."),
        ..base()
    },
    Opt {
        attribute: Some("max-output-bytes"),
        property: Some("maxOutputBytes"),
        api: Some((Api::Run, "maxOutputBytes")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_MAX_OUTPUT_BYTES as u64),
        range: (0, GIB),
        unit: Unit::Bytes,
        on_change: doc("Nothing restarts: the next run without `maxOutputBytes` uses it."),
        ..base()
    },
    Opt {
        attribute: Some("den-url"),
        property: Some("denUrl"),
        api: Some((Api::IframeRuntime, "denUrl")),
        default: Default::Computed("`./den/den.html` next to `foxden.js`"),
        values: doc("URL of `den.html`"),
        on_change: doc("Restarts the den with the new page. A `memory` den keeps its files (they are carried over); Python variables are lost."),
        ..base()
    },
    Opt {
        attribute: Some("pyodide-url"),
        property: Some("pyodideUrl"),
        api: Some((Api::IframeRuntime, "pyodideUrl")),
        default: Default::Computed("`./pyodide/` next to `foxden.js`"),
        values: doc("folder with the Pyodide files"),
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("isolation"),
        property: Some("isolation"),
        api: Some((Api::IframeRuntime, "isolation")),
        choices: &["auto", "manifest-sandbox", "iframe-sandbox"],
        default: Default::Text("auto"),
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("max-den-bytes"),
        property: Some("maxDenBytes"),
        api: Some((Api::OpenDen, "maxDenBytes")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_MAX_DEN_BYTES),
        range: (0, 64 * GIB),
        unit: Unit::Bytes,
        on_change: doc("Same as `den-url` (the cap is checked again when the files are carried over)."),
        ..base()
    },
    Opt {
        attribute: Some("load-timeout"),
        property: Some("loadTimeout"),
        api: Some((Api::IframeRuntime, "loadTimeoutMs")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_LOAD_TIMEOUT_MS as u64),
        range: (1, limits::MAX_TIMEOUT_MS as u64),
        unit: Unit::Ms,
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("warm-start"),
        property: Some("warmStart"),
        api: Some((Api::IframeRuntime, "warmStart")),
        ty: Type::OnOff,
        default: Default::On,
        on_change: doc("Same as `den-url`. `on`: the page keeps a snapshot of a fresh interpreter in its Cache Storage (`foxden-warm-v2`) so later visits start in a fraction of the time; see the README."),
        ..base()
    },
    Opt {
        attribute: Some("standby"),
        property: Some("standby"),
        api: Some((Api::IframeRuntime, "standby")),
        ty: Type::OnOff,
        default: Default::On,
        on_change: doc("Same as `den-url`. `on`: a second interpreter is booted ahead of need, so a timeout or `reset()` swaps it in at once (costs one more interpreter's memory)."),
        ..base()
    },
    Opt {
        attribute: Some("max-file-bytes"),
        property: Some("maxFileBytes"),
        api: Some((Api::OpenDen, "maxFileBytes")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_MAX_FILE_BYTES),
        range: (0, 4 * GIB),
        unit: Unit::Bytes,
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("max-files"),
        property: Some("maxFiles"),
        api: Some((Api::OpenDen, "maxFiles")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_MAX_FILES as u64),
        range: (1, limits::DEFAULT_MAX_FILES as u64),
        unit: Unit::Files,
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("max-writes-per-minute"),
        property: Some("maxWritesPerMinute"),
        api: Some((Api::OpenDen, "maxWritesPerMinute")),
        ty: Type::Number,
        default: Default::Number(0),
        range: (0, 1_000_000),
        unit: Unit::Files,
        values: doc("whole files, 0 to 1000000 (0: no limit)"),
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("max-memory-bytes"),
        property: Some("maxMemoryBytes"),
        api: Some((Api::OpenDen, "maxMemoryBytes")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_MAX_MEMORY_BYTES),
        range: (limits::MIN_MEMORY_BYTES, limits::MAX_MEMORY_BYTES),
        unit: Unit::Bytes,
        on_change: doc("Same as `den-url`. The cap on the worker's WebAssembly memory: code that asks for more gets a `MemoryError`, and the den keeps working. Not applied to a runtime adapter."),
        ..base()
    },
    Opt {
        attribute: Some("kill-grace"),
        property: Some("killGrace"),
        api: Some((Api::OpenDen, "killGraceMs")),
        ty: Type::Number,
        default: Default::Number(limits::DEFAULT_KILL_GRACE_MS as u64),
        range: (0, 60_000),
        unit: Unit::Ms,
        on_change: doc("Same as `den-url`. How long a run's leftover asyncio tasks and JavaScript timers may go on after it ended before the worker restarts. Not applied to a runtime adapter."),
        ..base()
    },
    Opt {
        attribute: Some("packages"),
        property: Some("packages"),
        default: Default::Text(""),
        values: doc("pure-Python wheels, each `url#sha256=<64 hex>`, separated by spaces (default none); relative URLs resolve against the page"),
        on_change: doc("Same as `den-url`: the den reopens with the new set (a refused wheel: `error` event with a `DenLoadError` of stage `package`)."),
        ..base()
    },
    Opt {
        attribute: Some("read-only-paths"),
        property: Some("readOnlyPaths"),
        default: Default::Text(""),
        values: doc("den paths (files or folders, e.g. `/work/data /drop/config.json`) separated by spaces, at most 256 (default none; library: `readOnlyPaths`): the code may read them but not change them"),
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("controls"),
        property: Some("controls"),
        ty: Type::Flag,
        default: Default::Off,
        on_change: doc("Adds or removes the UI in the shadow root; the den is untouched."),
        ..base()
    },
    Opt {
        attribute: Some("autorun"),
        property: Some("autorun"),
        ty: Type::Flag,
        default: Default::Off,
        on_change: doc("Read when the den becomes ready: it then runs the `<script type=\"text/x-python\">` child once. Adding it to a ready element does not run anything."),
        ..base()
    },
    Opt {
        attribute: Some("loading"),
        property: Some("loading"),
        choices: &["eager", "lazy"],
        default: Default::Text("eager"),
        values: doc("`eager` (default): the den opens when the element is connected; `lazy`: it opens when the element comes within 200 px of the viewport, or when a method (`run`, `writeFile`, …) or the Run button needs it, whichever is first (`ready` waits until then)"),
        on_change: doc("`lazy` to `eager` on an element still waiting opens its den; on an element whose den is open or opening, nothing changes."),
        ..base()
    },
    Opt {
        attribute: Some("env"),
        property: Some("env"),
        values: doc("a shared environment's name: 1-64 ASCII letters, digits, `-`, `_` (none)"),
        on_change: doc("Leaves the old environment (its den closes when no element uses it) and joins the new one. With `env`, `name` is not needed: elements with the same `env` share one den named after it (one interpreter, one file set), each with its own output; the den opens with the attributes of the first of them."),
        ..base()
    },
    Opt {
        attribute: Some("readonly"),
        property: Some("readonly"),
        ty: Type::Flag,
        default: Default::Off,
        on_change: doc("With `controls`: shows the code as read-only text instead of the editor (the editor module is not loaded)."),
        ..base()
    },
    Opt {
        attribute: Some("network"),
        property: Some("network"),
        default: Default::Text(""),
        values: doc("URL patterns separated by spaces, e.g. `http://127.0.0.1:8080/api/* https://api.example.com/v1/*` (absent: no network; library: `network.allow`)"),
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("network-methods"),
        property: Some("networkMethods"),
        default: Default::Text("GET"),
        values: doc("methods separated by spaces or commas (default `GET`; library: `network.methods`)"),
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("network-per-minute"),
        property: Some("networkPerMinute"),
        api: Some((Api::Network, "perMinute")),
        ty: Type::Number,
        default: Default::Number(crate::net::DEFAULT_PER_MINUTE),
        range: (1, crate::net::MAX_PER_MINUTE),
        unit: Unit::Requests,
        on_change: REOPEN,
        ..base()
    },
    Opt {
        attribute: Some("network-max-response-bytes"),
        property: Some("networkMaxResponseBytes"),
        api: Some((Api::Network, "maxResponseBytes")),
        ty: Type::Number,
        default: Default::Number(crate::net::DEFAULT_MAX_RESPONSE_BYTES),
        range: (0, crate::net::MAX_RESPONSE_BYTES),
        unit: Unit::Bytes,
        on_change: REOPEN,
        ..base()
    },
    // Library only.
    Opt {
        api: Some((Api::Run, "lang")),
        choices: &crate::protocol::schema::LANGS,
        default: Default::Text("python"),
        ..base()
    },
];

/// The option of an element attribute.
pub fn by_attribute(attribute: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.attribute == Some(attribute))
}

/// The option of an element property.
pub fn by_property(property: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.property == Some(property))
}

/// The option `key` of a library function.
pub fn by_api(api: Api, key: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.api == Some((api, key)))
}

/// The element's attributes, in table order.
pub fn attributes() -> impl Iterator<Item = &'static Opt> {
    OPTIONS.iter().filter(|o| o.attribute.is_some())
}

/// What a switch option (`warmStart`, `standby`) takes, in its message.
pub const SWITCH_VALUES: &str = "true or false (\"on\" or \"off\")";

/// A library option's message, which begins with the option's name (`warmStart must be …`),
/// reworded for the element attribute that sets it: the attribute's name, and for a switch the
/// values an attribute takes.
pub fn for_attribute(message: &str, key: &str, attribute: &str) -> String {
    let message = match message.strip_prefix(key) {
        Some(rest) if rest.starts_with(' ') => format!("{attribute}{rest}"),
        _ => message.to_owned(),
    };
    crate::replace_str(&message, SWITCH_VALUES, "\"on\" or \"off\"")
}

/// Why a number option's value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} must be a whole number from {min} to {max}{unit}")]
pub struct RangeError {
    /// The attribute or option name.
    pub name: String,
    /// Smallest allowed value.
    pub min: u64,
    /// Largest allowed value.
    pub max: u64,
    /// " (ms)", " (bytes)" or "".
    pub unit: &'static str,
}

impl Opt {
    /// The name used in messages: the attribute if any, else the library option.
    pub fn name(&self) -> &'static str {
        self.attribute.or(self.api.map(|a| a.1)).unwrap_or_default()
    }

    /// The default of a number option (0 for others).
    pub fn default_number(&self) -> u64 {
        match self.default {
            Default::Number(n) => n,
            _ => 0,
        }
    }

    /// Checks a number given as a library option (named `key` in the error).
    pub fn check_number(&self, key: &str, n: f64) -> Result<u64, RangeError> {
        let (min, max) = self.range;
        if n.is_finite() && n.fract() == 0.0 && n >= min as f64 && n <= max as f64 {
            Ok(n as u64)
        } else {
            Err(RangeError {
                name: key.to_owned(),
                min,
                max,
                unit: match self.unit {
                    Unit::Ms => " (ms)",
                    Unit::Bytes => " (bytes)",
                    Unit::Files => " (files)",
                    Unit::Requests => " (requests)",
                    Unit::None => "",
                },
            })
        }
    }

    /// Parses an attribute's text (surrounding spaces allowed) as a number of this option.
    pub fn parse_number(&self, raw: &str) -> Result<u64, RangeError> {
        let t = raw.trim();
        let n = if t.is_empty() {
            f64::NAN
        } else {
            crate::decimal::parse_f64(t).unwrap_or(f64::NAN)
        };
        self.check_number(self.name(), n)
    }

    /// The value an attribute of this option reads back as (property) when it is absent, for
    /// options whose default is fixed.
    pub fn default_text(&self) -> Option<&'static str> {
        match self.default {
            Default::Text(t) => Some(t),
            Default::On => Some("on"),
            _ => None,
        }
    }

    /// The TypeScript type of the element property.
    pub fn ts_property_type(&self) -> &'static str {
        match self.ty {
            Type::Text | Type::OnOff => "string",
            Type::Number => "number",
            Type::Flag => "boolean",
        }
    }

    /// The TypeScript type of the library option.
    pub fn ts_option_type(&self) -> String {
        match self.ty {
            Type::Text
                if !self.choices.is_empty()
                    && self.choices == ["auto", "manifest-sandbox", "iframe-sandbox"] =>
            {
                "Isolation".into()
            }
            Type::Text if !self.choices.is_empty() => self
                .choices
                .iter()
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(" | "),
            Type::Text => "string".into(),
            Type::Number => "number".into(),
            Type::Flag | Type::OnOff => "boolean".into(),
        }
    }
}

/// A size in bytes as people write it: "1 GiB", "256 MiB", or the number.
pub fn human_bytes(n: u64) -> String {
    for (unit, size) in [("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    n.to_string()
}

/// The "Values (default)" column of one attribute.
#[cfg(not(target_arch = "wasm32"))]
fn doc_values(o: &Opt) -> String {
    let values = o.values.text();
    if !values.is_empty() {
        return match o.default {
            Default::Computed(how) => format!("{values} ({how})"),
            _ => values.to_owned(),
        };
    }
    match o.ty {
        Type::Number => {
            let unit = match o.unit {
                Unit::Ms => "ms",
                Unit::Files => "files",
                Unit::Requests => "requests",
                _ => "bytes",
            };
            let show = |n: u64| {
                if o.unit == Unit::Bytes {
                    human_bytes(n)
                } else {
                    n.to_string()
                }
            };
            format!(
                "whole {unit}, {} to {} ({})",
                show(o.range.0),
                show(o.range.1),
                o.default_number()
            )
        }
        Type::Flag => "boolean".into(),
        Type::OnOff => "`on` (default), `off`".into(),
        Type::Text => {
            let d = o.default_text();
            o.choices
                .iter()
                .map(|c| {
                    if Some(*c) == d {
                        format!("`{c}` (default)")
                    } else {
                        format!("`{c}`")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

/// The attribute table of `docs/element.md` (between its `options-table` markers).
#[cfg(not(target_arch = "wasm32"))]
pub fn element_doc_table() -> String {
    let mut s = String::from(
        "| Attribute | Property | Values (default) | What changing it on a live element does |\n|---|---|---|---|\n",
    );
    for o in attributes() {
        s.push_str(&format!(
            "| `{}` | `{}` | {} | {} |\n",
            o.attribute.unwrap_or_default(),
            o.property.unwrap_or_default(),
            doc_values(o),
            o.on_change.text()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_messages_are_reworded_for_attributes() {
        let m = format!("warmStart must be {SWITCH_VALUES}");
        assert_eq!(
            for_attribute(&m, "warmStart", "warm-start"),
            r#"warm-start must be "on" or "off""#
        );
        assert_eq!(
            for_attribute(r#"denUrl "x:" is not a valid URL"#, "denUrl", "den-url"),
            r#"den-url "x:" is not a valid URL"#
        );
        // Only the option's whole name at the start is replaced.
        assert_eq!(
            for_attribute("denUrlx must be", "denUrl", "den-url"),
            "denUrlx must be"
        );
        assert_eq!(
            for_attribute("isolation must be", "isolation", "isolation"),
            "isolation must be"
        );
    }
    use crate::generated::repo;

    /// The text between `start` and the next `end` after it.
    fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
        let i = text
            .find(start)
            .unwrap_or_else(|| panic!("{start:?} not found"))
            + start.len();
        let j = text[i..].find(end).expect("end marker") + i;
        &text[i..j]
    }

    /// `name?: type;` or `name: type;` declarations of one interface body (one per line).
    fn members(body: &str) -> Vec<(String, String)> {
        body.lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('/') && !l.starts_with('*') && l.ends_with(';'))
            .filter(|l| !l.contains('('))
            .filter_map(|l| {
                let (name, ty) = l.trim_end_matches(';').split_once(':')?;
                let name = name
                    .trim()
                    .trim_start_matches("readonly ")
                    .trim_end_matches('?');
                let ident =
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                ident.then(|| (name.to_owned(), ty.trim().to_owned()))
            })
            .collect()
    }

    #[test]
    fn table_is_consistent() {
        for o in OPTIONS {
            assert_eq!(o.attribute.is_some(), o.property.is_some(), "{o:?}");
            assert!(o.attribute.is_some() || o.api.is_some(), "{o:?}");
            if o.ty == Type::Number {
                assert!(o.range.0 <= o.default_number() && o.default_number() <= o.range.1);
                assert!(o.check_number("x", o.default_number() as f64).is_ok());
                assert!(o.unit != Unit::None);
            }
            if let Some(d) = o.default_text().filter(|_| !o.choices.is_empty()) {
                assert!(o.choices.contains(&d), "{o:?}");
            }
            if o.attribute.is_some() {
                assert!(!o.on_change.text().is_empty(), "{o:?}");
            }
        }
        let attrs: Vec<_> = attributes().map(|o| o.attribute).collect();
        let mut unique = attrs.clone();
        unique.dedup();
        assert_eq!(attrs, unique);
    }

    #[test]
    fn numbers_parse_like_attributes() {
        let t = by_attribute("timeout").expect("timeout");
        assert_eq!(t.parse_number(" 500 "), Ok(500));
        assert!(t.parse_number("0").is_err());
        assert!(t.parse_number("1.5").is_err());
        assert!(t.parse_number("").is_err());
        assert!(t.parse_number("1e3").is_ok());
        assert!(t.parse_number("3600001").is_err());
        let m = by_api(Api::OpenDen, "maxMemoryBytes").expect("mem");
        assert!(m.check_number("maxMemoryBytes", 1024.0).is_err());
        assert_eq!(human_bytes(64 << 30), "64 GiB");
        assert_eq!(human_bytes(1000), "1000");
    }

    #[test]
    fn docs_table_is_generated_from_the_table() {
        crate::generated::check(
            "docs/element.md",
            "<!-- options-table:start -->\n",
            "<!-- options-table:end -->",
            &element_doc_table(),
            "options",
        );
    }

    #[test]
    fn dts_declares_every_option() {
        // The API's types (types.d.ts) and the element's (foxden.d.ts), as one text.
        let read = |f: &str| std::fs::read_to_string(repo().join(f)).expect("d.ts");
        let dts = read("element/js/types.d.ts") + &read("element/js/foxden.d.ts");
        // The element's properties.
        let el = members(between(
            &dts,
            "export interface FoxdenDenElement extends HTMLElement, DenMethods {",
            "\n}",
        ));
        for o in attributes() {
            let p = o.property.unwrap_or_default();
            let found = el.iter().find(|(n, _)| n == p);
            assert_eq!(
                found.map(|f| f.1.as_str()),
                Some(o.ts_property_type()),
                "FoxdenDenElement.{p}"
            );
        }
        let props: Vec<_> = el
            .iter()
            // Not attributes: the den's state, the editor's text, and the runtime adapter.
            .filter(|(n, _)| !["ready", "info", "code", "runtime"].contains(&n.as_str()))
            .map(|(n, _)| n.clone())
            .collect();
        for p in &props {
            assert!(
                by_property(p).is_some(),
                "FoxdenDenElement.{p} is not in the options table"
            );
        }
        // The attribute names union.
        let union = between(&dts, "export type FoxdenDenAttribute =", ";");
        let mut named: Vec<String> = union
            .split('|')
            .map(|s| s.trim().trim_matches('"').to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        let mut want: Vec<String> = attributes()
            .map(|o| o.attribute.unwrap_or_default().to_owned())
            .collect();
        named.sort();
        want.sort();
        assert_eq!(named, want, "FoxdenDenAttribute");
        // The library options.
        for o in OPTIONS {
            let Some((api, key)) = o.api else { continue };
            let body = between(
                &dts,
                &format!("export interface {} {{", api.ts_interface()),
                "\n}",
            );
            let found = members(body).into_iter().find(|(n, _)| n == key);
            assert_eq!(
                found.map(|f| f.1),
                Some(o.ts_option_type()),
                "{}.{key}",
                api.ts_interface()
            );
            // Its doc comment names the default.
            if let Default::Number(n) = o.default {
                let at = body.find(&format!("{key}?:")).expect("declared");
                let doc = &body[body[..at].rfind("/**").unwrap_or(0)..at];
                let shown = [n.to_string(), human_bytes(n)];
                assert!(
                    shown.iter().any(|s| doc.contains(&format!("Default {s}"))),
                    "{}.{key}: the doc comment must say `Default {}`",
                    api.ts_interface(),
                    shown[1]
                );
            }
        }
    }
}
