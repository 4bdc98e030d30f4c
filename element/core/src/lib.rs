//! foxden-core: everything in foxden that does not need a browser.
//!
//! The wasm crate (`foxden`, in `element/`) is thin glue around these modules:
//! - [`codes`]: the stable `DenError.code` and `DenLoadError.stage` values.
//! - [`paths`]: the one path normalizer every entry point uses.
//! - [`decimal`]: decimal text to `f64`, correctly rounded (smaller than the standard parser).
//! - [`files`]: the den's file map (the memory store), atomic batches and the size cap.
//! - [`javascript`]: JavaScript runs: top-level declarations made to persist, statement starts.
//! - [`sync`]: what the sandbox already has, so a run ships only differences.
//! - [`limits`]: defaults and name rules from the product sheet.
//! - [`net`]: the network broker's rules (URL parser, allowlist, methods, rate, sizes).
//! - [`protocol`]: the host ↔ den page messages and the bounds on what a den page sends.
//! - [`shell`]: the read-only shell behind `den.sh`.
//! - [`sha256`]: SHA-256, fast in wasm.
//! - [`snapshot`]: the snapshot codec (tar with a manifest and SHA-256 per file).
//! - [`packages`]: wheels a den installs (file names, tags, pins, limits).
//! - [`sparse`]: the warm cache's form of a memory snapshot (all-zero pages left out).
#![deny(missing_docs)]

pub mod codes;
pub mod decimal;
pub mod files;
pub mod input;
pub mod javascript;
pub mod lesson;
pub mod limits;
pub mod net;
pub mod options;
pub mod order;
pub mod outcome;
pub mod packages;
pub mod paths;
pub mod phase;
pub mod protocol;
pub mod readonly;
pub mod sha256;
pub mod shell;
pub mod snapshot;
pub mod sparse;
pub mod sync;
pub mod vecmap;

pub use files::{ChangeSet, FileEntry, FileMap, Op, StorageError};
pub use limits::{validate_den_name, DenNameError};
pub use paths::{normalize_path, PathError, PathRule};

pub use sha256::sha256;

/// Where `needle` first occurs in `hay` (as `str::find` with a `&str`): a plain search, without
/// the standard library's two-way searcher (kilobytes of wasm). Slower only for long needles,
/// and foxden looks for a few bytes.
pub fn find_str(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..=h.len().checked_sub(n.len())?).find(|&i| h[i..].starts_with(n))
}

/// Where `needle` last occurs in `hay` (as `str::rfind` with a `&str`; see [`find_str`]).
pub fn rfind_str(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..=h.len().checked_sub(n.len())?)
        .rev()
        .find(|&i| h[i..].starts_with(n))
}

/// `s` with each `from` replaced by `to` (as `str::replace` with a `&str`; see [`find_str`]).
/// `from` is not empty.
pub fn replace_str(s: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = find_str(rest, from).filter(|_| !from.is_empty()) {
        out.push_str(&rest[..i]);
        out.push_str(to);
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Lower-case hex of a byte slice (used for SHA-256 digests).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Standard base64 (RFC 4648, with `=` padding), e.g. for `data:` URLs.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> shift) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod base64_tests {
    #[test]
    fn rfc_4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(input.as_bytes()), expected);
        }
        assert_eq!(super::base64(&[0xfb, 0xff, 0xfe]), "+//+");
    }
}

/// For tests: files in the repository that are generated from tables of this crate.
#[cfg(test)]
pub(crate) mod generated {
    use std::path::{Path, PathBuf};

    /// The repository root.
    pub fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Checks that the text between `start` and the next `end` of the repository file `rel` is
    /// `want` (the whole file when `start` is empty); `FOXDEN_BLESS=1` rewrites it. `regen` is
    /// the test filter that regenerates it.
    pub fn check(rel: &str, start: &str, end: &str, want: &str, regen: &str) {
        let path = repo().join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let (i, j) = if start.is_empty() {
            (0, text.len())
        } else {
            let i = text
                .find(start)
                .unwrap_or_else(|| panic!("{rel}: {start:?} not found"))
                + start.len();
            (i, text[i..].find(end).expect("end marker") + i)
        };
        if &text[i..j] == want {
            return;
        }
        if std::env::var_os("FOXDEN_BLESS").is_some() {
            let whole = format!("{}{want}{}", &text[..i], &text[j..]);
            std::fs::write(&path, whole).expect("write the generated file");
            return;
        }
        panic!("{rel} is out of date: run `FOXDEN_BLESS=1 cargo test -p foxden-core {regen}` and commit it");
    }
}

#[cfg(test)]
mod search_tests {
    use super::*;

    #[test]
    fn searches_like_the_standard_library() {
        let hays = [
            "",
            "a",
            "abcabc",
            "x://y://z",
            "é/*é*/é",
            "%2e%2E%2e",
            "aaa",
        ];
        let needles = ["", "a", "bc", "://", "*/", "%2e", "aa", "abcabcd", "é"];
        for h in hays {
            for n in needles {
                assert_eq!(find_str(h, n), h.find(n), "{h:?} {n:?}");
                assert_eq!(rfind_str(h, n), h.rfind(n), "{h:?} {n:?}");
                if !n.is_empty() {
                    assert_eq!(replace_str(h, n, "<>"), h.replace(n, "<>"), "{h:?} {n:?}");
                }
            }
        }
    }
}
