//! Python packages a den installs: wheels the **host** fetches (or is handed), pinned by SHA-256.
//!
//! This module is the host's part, pure: the wheel file name (PEP 427) and whether its tags fit
//! Pyodide 314, PEP 503 name normalisation, the attribute form `url#sha256=<64 hex>`, the hash
//! check, and the limits on a den's set of wheels. The worker's part (open the zip, check every
//! file against `RECORD`, `Requires-Dist` against the set, then install) is Python:
//! `den-page/wheels.py`, tested natively by `cargo test -p foxden-core packages` with CPython.
//!
//! Only pure-Python wheels are accepted: python tag `py3` (or `py2.py3`, `py30` … `py314`), abi
//! `none`, platform `any`. Wheels with compiled code (`cp314-cp314-pyodide_*`, `abi3`) need
//! Pyodide's shared-library loader and a build for exactly its Emscripten ABI; foxden installs
//! no compiled code, so they are refused by name before any byte is fetched.

use std::fmt;

/// Most wheels one den takes.
pub const MAX_PACKAGES: usize = 64;
/// Most bytes of wheels one den takes, in all (64 MiB).
pub const MAX_PACKAGES_BYTES: u64 = 64 << 20;
/// The minor version of Pyodide 314's Python (3.14).
pub const PYTHON_MINOR: u32 = 14;

/// Why a package was refused; always names the package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageError {
    /// The package: its normalised project name, or the file name / URL when none can be read.
    pub package: String,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "package {}: {}", self.package, self.message)
    }
}

impl std::error::Error for PackageError {}

fn err(package: &str, message: impl Into<String>) -> PackageError {
    PackageError {
        package: package.to_owned(),
        message: message.into(),
    }
}

/// PEP 503 normalisation: lower case, each run of `-`, `_`, `.` becomes one `-` (also at
/// either end, as `re.sub(r"[-_.]+", "-", name).lower()` has it; the worker's installer uses
/// exactly that).
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !sep {
                out.push('-');
            }
            sep = true;
        } else {
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// A wheel's file name, parsed (PEP 427):
/// `{distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    /// The file name itself.
    pub file: String,
    /// The project name normalised (PEP 503).
    pub name: String,
    /// The version, as written.
    pub version: String,
    /// The build tag, if any.
    pub build: Option<String>,
    /// Python tags (a compressed set such as `py2.py3` is split).
    pub python: Vec<String>,
    /// ABI tags.
    pub abi: Vec<String>,
    /// Platform tags.
    pub platform: Vec<String>,
}

fn valid_component(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '!'))
}

/// A project name as PEP 508 allows it (letters and digits at both ends, `.`, `_` inside; a
/// wheel's file name writes `-` as `_`).
fn valid_project(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
}

/// Parses a wheel file name; the error names the file.
pub fn parse_wheel_name(file: &str) -> Result<WheelName, PackageError> {
    let bad = |why: &str| err(file, format!("{file:?} is not a wheel file name ({why})"));
    let stem = file
        .strip_suffix(".whl")
        .ok_or_else(|| bad("it does not end in .whl"))?;
    if file.len() > 255 || file.as_bytes().contains(&b'/') || file.as_bytes().contains(&b'\\') {
        return Err(bad("it is longer than 255 bytes or contains a slash"));
    }
    let parts: Vec<&str> = stem.split('-').collect();
    let (dist, version, build, py, abi, plat) = match parts.as_slice() {
        [d, v, p, a, pl] => (*d, *v, None, *p, *a, *pl),
        [d, v, b, p, a, pl] => (*d, *v, Some(*b), *p, *a, *pl),
        _ => return Err(bad("expected name-version(-build)-python-abi-platform.whl")),
    };
    if !valid_project(dist) || !valid_component(version) {
        return Err(bad("bad name or version"));
    }
    if let Some(b) = build {
        if !b.starts_with(|c: char| c.is_ascii_digit()) || !valid_component(b) {
            return Err(bad("a build tag must start with a digit"));
        }
    }
    let tags = |t: &str| -> Result<Vec<String>, PackageError> {
        if t.split('.').all(valid_component) {
            Ok(t.split('.').map(|s| s.to_ascii_lowercase()).collect())
        } else {
            Err(bad("bad tag"))
        }
    };
    Ok(WheelName {
        file: file.to_owned(),
        name: normalize_name(dist),
        version: version.to_owned(),
        build: build.map(str::to_owned),
        python: tags(py)?,
        abi: tags(abi)?,
        platform: tags(plat)?,
    })
}

/// A python tag Pyodide 314 runs pure code for: `py3`, `py3N` with N ≤ 14 (`py2` alone is not),
/// and `cp314` (pip on CPython 3.14 takes `cp314-none-any` too).
fn python_tag_ok(tag: &str) -> bool {
    if tag == format!("cp3{PYTHON_MINOR}") {
        return true;
    }
    match tag.strip_prefix("py3") {
        Some("") => true,
        // Digits only: `parse` alone takes `+1` too (`py3+1` is no tag).
        Some(minor) => {
            minor.bytes().all(|b| b.is_ascii_digit())
                && minor
                    .parse::<u32>()
                    .is_ok_and(|m| m <= PYTHON_MINOR && !minor.starts_with('0') || minor == "0")
        }
        None => false,
    }
}

impl WheelName {
    /// Whether Pyodide 314 can install this wheel as pure Python; the error says why not.
    pub fn check_tags(&self) -> Result<(), PackageError> {
        // Joined as `&str`s: `[String]::join` would be one more copy of the join code in the wasm.
        let dotted = |parts: &[String]| {
            parts
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(".")
        };
        let tags = format!(
            "{}-{}-{}",
            dotted(&self.python),
            dotted(&self.abi),
            dotted(&self.platform)
        );
        let refuse = |why: &str| err(&self.name, format!("{} has tags {tags}: {why}", self.file));
        if !self.platform.iter().any(|p| p == "any") || !self.abi.iter().any(|a| a == "none") {
            return Err(refuse(
                "it contains compiled code; foxden installs only pure-Python wheels (abi `none`, platform `any`, e.g. py3-none-any)",
            ));
        }
        if !self.python.iter().any(|p| python_tag_ok(p)) {
            return Err(refuse(
                "it is not for Python 3 up to 3.14 (Pyodide 314 runs Python 3.14; use a py3 wheel)",
            ));
        }
        Ok(())
    }
}

/// Parses a SHA-256 given as 64 hex digits (either case).
pub fn parse_sha256(package: &str, hex: &str) -> Result<[u8; 32], PackageError> {
    let bad = || {
        err(
            package,
            format!("sha256 must be 64 hex digits, got {:?}", clip(hex, 80)),
        )
    };
    // from_str_radix alone would take "+0" as a digit pair.
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).map_err(|_| bad())?;
        out[i] = u8::from_str_radix(s, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

fn clip(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Checks `digest` (of the bytes) against the pinned hash.
pub fn check_sha256(
    wheel: &WheelName,
    digest: &[u8; 32],
    pinned: &[u8; 32],
) -> Result<(), PackageError> {
    if digest == pinned {
        return Ok(());
    }
    Err(err(
        &wheel.name,
        format!(
            "{} has SHA-256 {}, but {} was pinned: refusing it (a changed or corrupted file, or a wrong pin)",
            wheel.file,
            crate::hex(digest),
            crate::hex(pinned)
        ),
    ))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        // Bytes, not string slices: a `%` before a multi-byte character must not panic.
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(hi), Some(lo)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The wheel file name a URL points at: its last path segment, percent-decoded.
pub fn file_name_of_url(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    percent_decode(path.rsplit('/').next().unwrap_or_default())
}

/// One wheel of the attribute form: a URL (as written, relative or absolute) and its pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedUrl {
    /// The URL without its `#sha256=` fragment.
    pub url: String,
    /// The pinned SHA-256.
    pub sha256: [u8; 32],
    /// The wheel's file name, parsed (tags already checked).
    pub wheel: WheelName,
}

/// Checks one `{ url, sha256 }` wheel: its file name and tags, and the pin.
pub fn pinned_url(url: &str, sha256: &str) -> Result<PinnedUrl, PackageError> {
    let file = file_name_of_url(url);
    let wheel = parse_wheel_name(&file).map_err(|e| PackageError {
        message: format!("{} (from the URL {:?})", e.message, clip(url, 200)),
        ..e
    })?;
    wheel.check_tags()?;
    let sha256 = parse_sha256(&wheel.name, sha256)?;
    Ok(PinnedUrl {
        url: url.to_owned(),
        sha256,
        wheel,
    })
}

/// Parses the element attribute `packages`: wheels separated by whitespace, each
/// `url#sha256=<64 hex>`.
pub fn parse_attribute(value: &str) -> Result<Vec<PinnedUrl>, PackageError> {
    let mut out = Vec::new();
    for item in value.split_ascii_whitespace() {
        let Some((url, hash)) =
            crate::rfind_str(item, "#sha256=").map(|i| (&item[..i], &item[i + 8..]))
        else {
            let file = file_name_of_url(item);
            let package = parse_wheel_name(&file).map_or(file, |w| w.name);
            return Err(err(
                &package,
                format!(
                    "{:?} has no pin: write each wheel as url#sha256=<64 hex digits>",
                    clip(item, 200)
                ),
            ));
        };
        out.push(pinned_url(url, hash)?);
    }
    Ok(out)
}

/// Checks a den's whole set before anything is fetched or installed: at most [`MAX_PACKAGES`]
/// wheels, each project once.
pub fn check_set(wheels: &[&WheelName]) -> Result<(), PackageError> {
    if wheels.len() > MAX_PACKAGES {
        return Err(err(
            &wheels[MAX_PACKAGES].name,
            format!(
                "a den takes at most {MAX_PACKAGES} wheels; {} were given",
                wheels.len()
            ),
        ));
    }
    for (i, w) in wheels.iter().enumerate() {
        if let Some(other) = wheels[..i].iter().find(|o| o.name == w.name) {
            return Err(err(
                &w.name,
                format!(
                    "given twice ({} and {}): give each project once",
                    other.file, w.file
                ),
            ));
        }
    }
    Ok(())
}

/// Adds one wheel's size to the running total, refusing past [`MAX_PACKAGES_BYTES`].
pub fn add_bytes(total: u64, wheel: &WheelName, size: u64) -> Result<u64, PackageError> {
    let sum = total.saturating_add(size);
    if sum > MAX_PACKAGES_BYTES {
        return Err(err(
            &wheel.name,
            format!(
                "{} ({size} bytes) takes the den's wheels past {} MiB in all",
                wheel.file,
                MAX_PACKAGES_BYTES >> 20
            ),
        ));
    }
    Ok(sum)
}

/// The refusal of a wheel whose download took the wheels being downloaded (with the caller's
/// own) past [`MAX_PACKAGES_BYTES`] together; the downloads are stopped there.
pub fn past_budget(wheel: &WheelName) -> PackageError {
    err(
        &wheel.name,
        format!(
            "{} takes the den's wheels past {} MiB in all (the downloads were stopped there)",
            wheel.file,
            MAX_PACKAGES_BYTES >> 20
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "024ca478df22e9340661486f85298cff5f6dcdba14f3813e8830015b9ed1948f";

    #[test]
    fn url_file_names_decode_percent_escapes_without_panicking() {
        assert_eq!(
            file_name_of_url("/w/a%2Db-1-py3-none-any.whl?x#y"),
            "a-b-1-py3-none-any.whl"
        );
        // A % before a multi-byte character, at the end, or before non-hex stays as it is.
        assert_eq!(file_name_of_url("./%a\u{e9}-1.whl"), "%a\u{e9}-1.whl");
        assert_eq!(file_name_of_url("./\u{e9}%\u{e9}"), "\u{e9}%\u{e9}");
        assert_eq!(file_name_of_url("./x%2"), "x%2");
        assert_eq!(file_name_of_url("./x%+1y"), "x%+1y");
        assert!(parse_attribute(&format!("./%a\u{e9}-1-py3-none-any.whl#sha256={H}")).is_err());
    }

    #[test]
    fn names_normalise_per_pep_503() {
        assert_eq!(normalize_name("Python_Dateutil"), "python-dateutil");
        assert_eq!(normalize_name("zope.interface"), "zope-interface");
        assert_eq!(normalize_name("a-_.-b"), "a-b");
        assert_eq!(normalize_name("PyYAML"), "pyyaml");
        assert_eq!(normalize_name("beautifulsoup4"), "beautifulsoup4");
        // Separators at either end are kept, as PEP 503's regex (and the worker) has it.
        assert_eq!(normalize_name("_six"), "-six");
        assert_eq!(normalize_name("six__"), "six-");
    }

    #[test]
    fn wheel_names_parse() {
        let w = parse_wheel_name("python_dateutil-2.9.0.post0-py2.py3-none-any.whl").unwrap();
        assert_eq!(w.name, "python-dateutil");
        assert_eq!(w.version, "2.9.0.post0");
        assert_eq!(w.build, None);
        assert_eq!(w.python, ["py2", "py3"]);
        assert_eq!(w.abi, ["none"]);
        assert_eq!(w.platform, ["any"]);
        w.check_tags().unwrap();
        let b = parse_wheel_name("pkg-1.0-1abc-py3-none-any.whl").unwrap();
        assert_eq!(b.build.as_deref(), Some("1abc"));
        for bad in [
            "tabulate-0.9.0-py3-none-any.zip",
            "tabulate-py3-none-any.whl",
            "a-1-b-c-d-e-f.whl",
            "pkg-1.0-abc-py3-none-any.whl",
            "pk g-1.0-py3-none-any.whl",
            "-1.0-py3-none-any.whl",
            "_six-1.0-py3-none-any.whl",
            "a+b-1.0-py3-none-any.whl",
            "a!b-1.0-py3-none-any.whl",
        ] {
            let e = parse_wheel_name(bad).unwrap_err();
            assert!(e.message.contains("not a wheel file name"), "{bad}: {e}");
        }
    }

    #[test]
    fn only_pure_python_3_wheels_fit_pyodide_314() {
        for ok in [
            "tabulate-0.9.0-py3-none-any.whl",
            "six-1.17.0-py2.py3-none-any.whl",
            "x-1-py314-none-any.whl",
            "x-1-py38-none-any.whl",
            "x-1-PY3-NONE-ANY.whl",
            "x-1-cp314-none-any.whl",
        ] {
            parse_wheel_name(ok).unwrap().check_tags().unwrap();
        }
        for (bad, why) in [
            (
                "numpy-2.2.0-cp314-cp314-pyodide_2026_0_wasm32.whl",
                "compiled code",
            ),
            ("x-1-cp314-abi3-any.whl", "compiled code"),
            ("x-1-py3-none-manylinux1_x86_64.whl", "compiled code"),
            ("x-1-py2-none-any.whl", "not for Python 3"),
            ("x-1-py315-none-any.whl", "not for Python 3"),
            ("x-1-py3x-none-any.whl", "not for Python 3"),
            // `parse::<u32>` alone reads `+1` as 1.
            ("x-1-py3+1-none-any.whl", "not for Python 3"),
            ("x-1-py3+14-none-any.whl", "not for Python 3"),
        ] {
            let e = parse_wheel_name(bad).unwrap().check_tags().unwrap_err();
            assert!(e.message.contains(why), "{bad}: {e}");
            assert_eq!(e.package, normalize_name(bad.split('-').next().unwrap()));
        }
    }

    #[test]
    fn pins_are_64_hex_digits() {
        let d = parse_sha256("t", H).unwrap();
        assert_eq!(crate::hex(&d), H);
        assert_eq!(parse_sha256("t", &H.to_uppercase()).unwrap(), d);
        for bad in [
            "",
            "abc",
            &H[1..],
            &format!("{}g", &H[1..]),
            &format!("{H}0"),
        ] {
            let e = parse_sha256("tabulate", bad).unwrap_err();
            assert_eq!(e.package, "tabulate");
            assert!(e.message.contains("64 hex digits"));
        }
    }

    #[test]
    fn the_hash_is_checked() {
        let w = parse_wheel_name("tabulate-0.9.0-py3-none-any.whl").unwrap();
        let data = b"not really a wheel";
        let digest = crate::sha256(data);
        check_sha256(&w, &digest, &digest).unwrap();
        let pinned = parse_sha256("tabulate", H).unwrap();
        let e = check_sha256(&w, &digest, &pinned).unwrap_err();
        assert_eq!(e.package, "tabulate");
        assert!(e.message.contains(H) && e.message.contains(&crate::hex(&digest)));
    }

    #[test]
    fn urls_give_their_file_name() {
        assert_eq!(
            file_name_of_url("./wheels/six-1.17.0-py2.py3-none-any.whl?x=1#frag"),
            "six-1.17.0-py2.py3-none-any.whl"
        );
        assert_eq!(
            file_name_of_url("https://h/a/b%2Dc-1-py3-none-any.whl"),
            "b-c-1-py3-none-any.whl"
        );
        assert_eq!(file_name_of_url("bare.whl"), "bare.whl");
        assert_eq!(file_name_of_url("x/%"), "%");
    }

    #[test]
    fn the_attribute_lists_pinned_urls() {
        let v = format!(
            "  ./wheels/tabulate-0.9.0-py3-none-any.whl#sha256={H}\n\t/w/six-1.17.0-py2.py3-none-any.whl#sha256={}  ",
            H.to_uppercase()
        );
        let list = parse_attribute(&v).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].url, "./wheels/tabulate-0.9.0-py3-none-any.whl");
        assert_eq!(list[0].wheel.name, "tabulate");
        assert_eq!(list[1].wheel.name, "six");
        assert_eq!(list[1].sha256, list[0].sha256);
        assert!(parse_attribute("   ").unwrap().is_empty());
        let e = parse_attribute("./tabulate-0.9.0-py3-none-any.whl").unwrap_err();
        assert_eq!(e.package, "tabulate");
        assert!(e.message.contains("no pin"));
        let e = parse_attribute(&format!(
            "./numpy-2-cp314-cp314-pyodide_2026_0_wasm32.whl#sha256={H}"
        ))
        .unwrap_err();
        assert_eq!(e.package, "numpy");
        let e = parse_attribute("./six-1-py3-none-any.whl#sha256=12").unwrap_err();
        assert_eq!(e.package, "six");
        let e = parse_attribute(&format!("./index.html#sha256={H}")).unwrap_err();
        assert_eq!(e.package, "index.html");
        assert!(e.message.contains("from the URL"));
    }

    #[test]
    fn the_set_is_bounded() {
        let a = parse_wheel_name("six-1.17.0-py2.py3-none-any.whl").unwrap();
        let b = parse_wheel_name("Six-1.16.0-py2.py3-none-any.whl").unwrap();
        let c = parse_wheel_name("tabulate-0.9.0-py3-none-any.whl").unwrap();
        check_set(&[&a, &c]).unwrap();
        let e = check_set(&[&a, &c, &b]).unwrap_err();
        assert_eq!(e.package, "six");
        assert!(e.message.contains("given twice"));
        let many: Vec<&WheelName> = std::iter::repeat_n(&c, MAX_PACKAGES + 1).collect();
        assert!(check_set(&many).unwrap_err().message.contains("at most"));
        let t = add_bytes(0, &a, 10).unwrap();
        assert_eq!(t, 10);
        let e = add_bytes(t, &c, MAX_PACKAGES_BYTES).unwrap_err();
        assert_eq!(e.package, "tabulate");
        assert_eq!(add_bytes(0, &c, MAX_PACKAGES_BYTES), Ok(MAX_PACKAGES_BYTES));
    }

    #[test]
    fn pins_are_64_hex_digits_only() {
        assert!(parse_sha256("x", H).is_ok());
        assert!(parse_sha256("x", &"+0".repeat(32)).is_err());
        assert!(parse_sha256("x", &format!("{}+", &H[..63])).is_err());
    }
}
