//! The one path normalizer. Every entry point (file methods, shell, snapshot
//! restore, files coming back from the sandbox) goes through [`normalize_path`].
//!
//! Rules, in the order they are checked:
//! 1. `empty`: the path must not be empty.
//! 2. `nul`: no NUL byte. `control`: no other ASCII control character (U+0001-U+001F, U+007F).
//! 3. `backslash`: no `\` (it means a separator on Windows and would be ambiguous).
//! 4. `absolute`: the path starts with `/`.
//! 5. `too-long`: at most 1024 bytes before normalization.
//! 6. Repeated slashes collapse (`/drop//a` is `/drop/a`), `.` segments are dropped and
//!    a trailing slash is ignored (`/drop/a/` is `/drop/a`).
//! 7. `dotdot`: a `..` segment is refused outright (never resolved).
//! 8. `root`: the first segment is exactly `drop`, `out` or `work` (case-sensitive).
//! 9. `segment-too-long`: each segment is at most 255 bytes; `too-deep`: at most 32 segments.
//!
//! 0. `unicode` (checked where JavaScript hands a path over): a path must be valid UTF-16 (no
//!    lone surrogate, which would become U+FFFD on its way in: two names, one file).
//!
//! Case is preserved and significant: `/drop/A.csv` and `/drop/a.csv` are two files.
//! [`normalize_file_path`] additionally refuses the bare folders (`/drop`) with rule `folder`.

use std::fmt;

/// The three folders a den has.
pub const ROOTS: [&str; 3] = ["drop", "out", "work"];
/// Longest accepted input path, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// Longest accepted segment, in bytes.
pub const MAX_SEGMENT_BYTES: usize = 255;
/// Deepest accepted path, in segments (the root folder counts).
pub const MAX_DEPTH: usize = 32;

/// Which rule a path broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRule {
    /// The path is empty.
    Empty,
    /// The path contains a NUL byte.
    Nul,
    /// The path contains an ASCII control character.
    Control,
    /// The path contains a backslash.
    Backslash,
    /// The path does not start with `/`.
    Absolute,
    /// The path is longer than [`MAX_PATH_BYTES`].
    TooLong,
    /// The path has a `..` segment.
    DotDot,
    /// The path is not under `/drop`, `/out` or `/work`.
    Root,
    /// A segment is longer than [`MAX_SEGMENT_BYTES`].
    SegmentTooLong,
    /// More than [`MAX_DEPTH`] segments.
    TooDeep,
    /// A file operation named one of the three folders itself.
    Folder,
    /// A path from JavaScript with a lone surrogate (not valid Unicode).
    Unicode,
}

impl PathRule {
    /// Stable short name of the rule, as shown to JavaScript in `PathError.rule`.
    pub fn code(self) -> &'static str {
        match self {
            PathRule::Empty => "empty",
            PathRule::Nul => "nul",
            PathRule::Control => "control",
            PathRule::Backslash => "backslash",
            PathRule::Absolute => "absolute",
            PathRule::TooLong => "too-long",
            PathRule::DotDot => "dotdot",
            PathRule::Root => "root",
            PathRule::SegmentTooLong => "segment-too-long",
            PathRule::TooDeep => "too-deep",
            PathRule::Folder => "folder",
            PathRule::Unicode => "unicode",
        }
    }

    /// What the rule asks for, in words.
    pub fn explain(self) -> &'static str {
        match self {
            PathRule::Empty => "a path must not be empty",
            PathRule::Nul => "a path must not contain a NUL byte",
            PathRule::Control => "a path must not contain control characters",
            PathRule::Backslash => "a path must use '/' and not contain '\\'",
            PathRule::Absolute => "a path must start with '/'",
            PathRule::TooLong => "a path must be at most 1024 bytes",
            PathRule::DotDot => "a path must not contain '..'",
            PathRule::Root => "a path must be under /drop, /out or /work",
            PathRule::SegmentTooLong => "each path segment must be at most 255 bytes",
            PathRule::TooDeep => "a path must have at most 32 segments",
            PathRule::Folder => "a file path must name a file inside /drop, /out or /work",
            PathRule::Unicode => "a path must be valid Unicode (it has a lone surrogate)",
        }
    }
}

/// A path that broke a rule: names the path and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// The rule it broke.
    pub rule: PathRule,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid path {:?} ({}): {}",
            self.path,
            self.rule.code(),
            self.rule.explain()
        )
    }
}

impl std::error::Error for PathError {}

/// Normalizes a den path (a folder or a file); see the module docs for the rules.
pub fn normalize_path(path: &str) -> Result<String, PathError> {
    let err = |rule| PathError {
        path: path.to_owned(),
        rule,
    };
    if path.is_empty() {
        return Err(err(PathRule::Empty));
    }
    if path.as_bytes().contains(&b'\0') {
        return Err(err(PathRule::Nul));
    }
    if path.chars().any(|c| c.is_ascii_control()) {
        return Err(err(PathRule::Control));
    }
    if path.as_bytes().contains(&b'\\') {
        return Err(err(PathRule::Backslash));
    }
    if !path.starts_with('/') {
        return Err(err(PathRule::Absolute));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(err(PathRule::TooLong));
    }
    let mut segments: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(err(PathRule::DotDot)),
            s => segments.push(s),
        }
    }
    match segments.first() {
        Some(first) if ROOTS.contains(first) => {}
        _ => return Err(err(PathRule::Root)),
    }
    if segments.iter().any(|s| s.len() > MAX_SEGMENT_BYTES) {
        return Err(err(PathRule::SegmentTooLong));
    }
    if segments.len() > MAX_DEPTH {
        return Err(err(PathRule::TooDeep));
    }
    let mut out = String::with_capacity(path.len());
    for s in segments {
        out.push('/');
        out.push_str(s);
    }
    Ok(out)
}

/// Normalizes a path that must name a file (not one of the three folders).
pub fn normalize_file_path(path: &str) -> Result<String, PathError> {
    let norm = normalize_path(path)?;
    if norm.as_bytes()[1..].contains(&b'/') {
        Ok(norm)
    } else {
        Err(PathError {
            path: path.to_owned(),
            rule: PathRule::Folder,
        })
    }
}

/// True when `path` (normalized) is `dir` (normalized) or inside it.
pub fn is_within(path: &str, dir: &str) -> bool {
    path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// A den path as it is shown to a reader (the element's file list): characters that are
/// invisible or reorder the text around them, such as the right-to-left override U+202E that
/// makes `/work/evil\u{202E}txt.exe` look like `/work/evilexe.txt`, are written as `\uXXXX`.
/// Paths never contain `\`, so such an escape cannot be mistaken for part of a name.
pub fn visible_path(path: &str) -> std::borrow::Cow<'_, str> {
    /// Controls and Unicode format characters that change or hide what a name looks like.
    fn hidden(c: char) -> bool {
        matches!(c,
            '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' // C0, DEL, C1 controls
            | '\u{AD}' // soft hyphen
            | '\u{34F}' // combining grapheme joiner
            | '\u{61C}' // Arabic letter mark
            | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' // Hangul fillers
            | '\u{17B4}' | '\u{17B5}' // Khmer inherent vowels
            | '\u{180B}'..='\u{180F}' // Mongolian variation selectors, vowel separator
            | '\u{200B}'..='\u{200F}' // zero-width space, joiners, LRM, RLM
            | '\u{2028}'..='\u{202E}' // line and paragraph separators, bidi embeddings and overrides
            | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, bidi isolates
            | '\u{FE00}'..='\u{FE0F}' // variation selectors
            | '\u{FEFF}' // zero-width no-break space
            | '\u{FFF0}'..='\u{FFFB}' // unassigned specials, interlinear annotations
            | '\u{1BCA0}'..='\u{1BCA3}' // shorthand format controls
            | '\u{1D173}'..='\u{1D17A}' // musical symbol format controls
            | '\u{E0000}'..='\u{E0FFF}' // tags, variation selectors supplement
        )
    }
    if !path.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 8);
    for c in path.chars() {
        if hidden(c) {
            let n = c as u32;
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push_str(if n > 0xFFFF { "\\U" } else { "\\u" });
            let digits = if n > 0xFFFF { 8 } else { 4 };
            for k in (0..digits).rev() {
                out.push(HEX[((n >> (4 * k)) & 0xF) as usize] as char);
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_paths() {
        assert!(matches!(
            visible_path("/work/a b/ü.txt"),
            std::borrow::Cow::Borrowed("/work/a b/ü.txt")
        ));
        assert_eq!(
            visible_path("/work/evil\u{202E}txt.exe"),
            "/work/evil\\u202Etxt.exe"
        );
        assert_eq!(
            visible_path("/work/\u{200B}\u{2066}x\u{2069}\u{FEFF}"),
            "/work/\\u200B\\u2066x\\u2069\\uFEFF"
        );
        assert_eq!(
            visible_path("/work/\u{85}\u{E0041}"),
            "/work/\\u0085\\U000E0041"
        );
        assert_eq!(
            visible_path("/work/report\u{FE0F}.txt\u{E0100}"),
            "/work/report\\uFE0F.txt\\U000E0100"
        );
        // Right-to-left letters are text, not controls: shown as they are.
        assert_eq!(visible_path("/work/שלום.txt"), "/work/שלום.txt");
    }
    use proptest::prelude::*;

    fn rule(p: &str) -> PathRule {
        normalize_path(p).unwrap_err().rule
    }

    #[test]
    fn accepts_and_normalizes() {
        assert_eq!(normalize_path("/drop/a.csv").unwrap(), "/drop/a.csv");
        assert_eq!(normalize_path("//drop///a.csv/").unwrap(), "/drop/a.csv");
        assert_eq!(normalize_path("/./work/./x/y").unwrap(), "/work/x/y");
        assert_eq!(normalize_path("/out").unwrap(), "/out");
        assert_eq!(
            normalize_path("/drop/ünï cödé.txt").unwrap(),
            "/drop/ünï cödé.txt"
        );
        assert_eq!(normalize_file_path("/work/a").unwrap(), "/work/a");
    }

    #[test]
    fn refuses_with_rule() {
        assert_eq!(rule(""), PathRule::Empty);
        assert_eq!(rule("/drop/a\0b"), PathRule::Nul);
        assert_eq!(rule("/drop/a\nb"), PathRule::Control);
        assert_eq!(rule("/drop\\a"), PathRule::Backslash);
        assert_eq!(rule("drop/a"), PathRule::Absolute);
        assert_eq!(rule("/drop/../etc/passwd"), PathRule::DotDot);
        assert_eq!(rule("/drop/a/.."), PathRule::DotDot);
        assert_eq!(rule("/etc/passwd"), PathRule::Root);
        assert_eq!(rule("/Drop/a"), PathRule::Root);
        assert_eq!(rule("/"), PathRule::Root);
        assert_eq!(
            rule(&format!("/drop/{}", "a".repeat(256))),
            PathRule::SegmentTooLong
        );
        assert_eq!(
            rule(&format!("/drop/{}", "a".repeat(1100))),
            PathRule::TooLong
        );
        assert_eq!(
            rule(&format!("/drop{}", "/a".repeat(32))),
            PathRule::TooDeep
        );
        assert_eq!(
            normalize_file_path("/drop/").unwrap_err().rule,
            PathRule::Folder
        );
        let msg = normalize_path("/drop/../x").unwrap_err().to_string();
        assert!(
            msg.contains("/drop/../x") && msg.contains("dotdot"),
            "{msg}"
        );
    }

    #[test]
    fn within() {
        assert!(is_within("/drop/a", "/drop"));
        assert!(is_within("/drop", "/drop"));
        assert!(!is_within("/dropx/a", "/drop"));
    }

    proptest! {
        #[test]
        fn normalized_is_fixed_point_and_safe(p in "(/|\\.|\\.\\.|drop|out|work|a|é|/ |x\\.y){0,12}") {
            if let Ok(n) = normalize_path(&p) {
                prop_assert_eq!(normalize_path(&n).unwrap(), n.clone());
                prop_assert!(!n.split('/').any(|s| s == ".." || s == "."));
                prop_assert!(!n.contains("//"));
                let ok = ROOTS.iter().any(|r| is_within(&n, &format!("/{}", r)));
                prop_assert!(ok);
            }
        }

        #[test]
        fn never_panics(p in any::<String>()) {
            let _ = normalize_path(&p);
            let _ = normalize_file_path(&p);
        }
    }
}
