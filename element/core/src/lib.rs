//! foxden-core: everything in foxden that does not need a browser.
//!
//! The wasm crate (`foxden`, in `element/`) is thin glue around these modules:
//! - [`codes`]: the stable `DenError.code` and `DenLoadError.stage` values.
//! - [`paths`]: the one path normalizer every entry point uses.
//! - [`files`]: the den's file map (the memory store), atomic batches and the size cap.
//! - [`sync`]: what the sandbox already has, so a run ships only differences.
//! - [`limits`]: defaults and name rules from the product sheet.
//! - [`protocol`]: the host ↔ den page messages and the bounds on what a den page sends.
//! - [`shell`]: the read-only shell behind `den.sh`.
//! - [`snapshot`]: the snapshot codec (tar with a manifest and SHA-256 per file).
#![deny(missing_docs)]

pub mod codes;
pub mod files;
pub mod limits;
pub mod options;
pub mod outcome;
pub mod paths;
pub mod phase;
pub mod protocol;
pub mod shell;
pub mod snapshot;
pub mod sync;

pub use files::{ChangeSet, FileEntry, FileMap, Op, StorageError};
pub use limits::{validate_den_name, DenNameError};
pub use paths::{normalize_path, PathError, PathRule};

/// SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
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
