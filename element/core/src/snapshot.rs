//! The snapshot codec: every file of a den in one POSIX ustar (tar) archive.
//!
//! The full specification is `docs/snapshot-format.md`; in short:
//! - The first entry is [`MANIFEST_NAME`], a small JSON document carrying the format version,
//!   the file count, the total size and, per file, its den path, size, `mtime_ms` and SHA-256.
//!   Its last line holds the SHA-256 of all the lines before it.
//! - Then one regular-file entry per file, sorted by path, stored under the den path without
//!   its leading `/` (`drop/sales.csv`). A path that fits ustar's `name` (100 bytes) or
//!   `prefix` + `name` (155 + 100 bytes) fields goes there; a longer one gets a PAX extended
//!   header (`x`) with a `path=` record.
//! - Headers are canonical: mode `0644`, uid/gid `0`, empty user and group names, the mtime in
//!   whole seconds. The archive ends with two zero blocks.
//!
//! [`encode_snapshot`] is deterministic (the same files give the same bytes), and
//! [`decode_snapshot`] accepts only what `encode_snapshot` produces: it checks every header
//! checksum, compares every header byte with the canonical header, verifies the manifest's
//! own hash and every file's SHA-256, the paths, sizes, order and the end of the archive.
//! So every single-byte change and every truncation of a snapshot is refused.

use crate::files::{FileEntry, FileMap, Op};
use crate::paths::normalize_file_path;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// The snapshot format version this build writes and the only one it reads.
pub const FORMAT_VERSION: u32 = 1;

/// Name of the manifest, the first entry of every snapshot.
pub const MANIFEST_NAME: &str = "foxden-manifest.json";

/// Size of a tar block.
const BLOCK: usize = 512;
/// Largest value of an 11-digit octal field (`size`, `mtime`): 8 GiB - 1.
const MAX_OCTAL_11: u64 = 0o777_7777_7777;
/// Every manifest, of every version, starts with these bytes, then the version number.
const MANIFEST_PREFIX: &str = "{\"format\":\"foxden-snapshot\",\"version\":";
/// The last line of a manifest is `"manifest_sha256":"<64 hex>"}` and a newline.
const HASH_LINE_START: &str = "\"manifest_sha256\":\"";
const HASH_LINE_END: &str = "\"}\n";
const HASH_LINE_LEN: usize = HASH_LINE_START.len() + 64 + HASH_LINE_END.len();
/// The longest manifest a den's files can have: per file a path (its `"` escaped), a size, an
/// `f64` mtime spelled out (up to ~330 characters) and a hash. Larger is refused before it is read.
const MAX_MANIFEST_BYTES: u64 =
    (crate::limits::DEFAULT_MAX_FILES * (2 * crate::paths::MAX_PATH_BYTES + 512) + 4096) as u64;
/// The longest PAX extended header data a snapshot needs: one `path` record.
const MAX_PAX_BYTES: u64 = (crate::paths::MAX_PATH_BYTES + 512) as u64;

/// Why a snapshot was refused. [`SnapshotError::code`] is a stable short name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    /// The bytes end before the archive does.
    #[error("snapshot is truncated: {what} needs {needed} bytes at offset {offset}, but the snapshot has only {len} bytes")]
    Truncated {
        /// What was being read.
        what: String,
        /// Where it starts.
        offset: u64,
        /// How many bytes it needs.
        needed: u64,
        /// Length of the input.
        len: u64,
    },
    /// A tar header's checksum does not match its bytes.
    #[error("snapshot is corrupt: the tar header at offset {offset} has checksum field {stored}, but its bytes sum to {computed:06o} (octal)")]
    Checksum {
        /// Offset of the header.
        offset: u64,
        /// The checksum field as found (escaped).
        stored: String,
        /// The sum of the header's bytes.
        computed: u32,
    },
    /// The bytes are not laid out the way foxden writes snapshots.
    #[error("snapshot is not a valid foxden snapshot at offset {offset}: {reason}")]
    Format {
        /// Offset of the first offending byte.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The manifest is missing or malformed.
    #[error("snapshot manifest ({MANIFEST_NAME}) is invalid: {reason}")]
    Manifest {
        /// What is wrong.
        reason: String,
    },
    /// The snapshot was written in a format version this build does not read.
    #[error("snapshot format version {found} is not supported: this foxden reads version {FORMAT_VERSION}")]
    Version {
        /// The version the manifest names.
        found: u32,
    },
    /// The manifest's own SHA-256 does not match its content.
    #[error("snapshot manifest ({MANIFEST_NAME}) is corrupt: it records its SHA-256 as {expected}, but its content hashes to {actual}")]
    ManifestHash {
        /// The hash the manifest records.
        expected: String,
        /// The hash of its content.
        actual: String,
    },
    /// A file's content does not match the SHA-256 in the manifest.
    #[error("snapshot file {path} is corrupt: the manifest records SHA-256 {expected}, but its content hashes to {actual}")]
    HashMismatch {
        /// The file.
        path: String,
        /// The hash the manifest records.
        expected: String,
        /// The hash of the content.
        actual: String,
    },
    /// A file's size in its tar entry differs from the manifest.
    #[error("snapshot file {path} has {actual} bytes in its tar entry, but the manifest records {expected}")]
    SizeMismatch {
        /// The file.
        path: String,
        /// The size the manifest records.
        expected: u64,
        /// The size of the tar entry.
        actual: u64,
    },
    /// A path is not an acceptable den file path.
    #[error("snapshot holds an invalid path {path:?}: {reason}")]
    Path {
        /// The path as found.
        path: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The files add up to more than the allowed size.
    #[error("snapshot holds {total} bytes of files, over the limit of {max} bytes (maxDenBytes)")]
    TooLarge {
        /// Total bytes of the files.
        total: u64,
        /// The limit.
        max: u64,
    },
    /// The page has no memory left for the snapshot's files (the host keeps every den's files
    /// in its one WebAssembly memory, 4 GiB at most).
    #[error("snapshot holds {total} bytes of files, more than the page has memory left for (the host keeps every den's files in its WebAssembly memory, 4 GiB at most)")]
    NoRoom {
        /// Total bytes of the files.
        total: u64,
    },
    /// A path appears twice.
    #[error("snapshot holds {path} more than once ({place})")]
    Duplicate {
        /// The path.
        path: String,
        /// Where the second copy is.
        place: String,
    },
    /// A tar entry that the manifest does not list, or of a kind snapshots do not hold.
    #[error("snapshot has an unexpected tar entry {name:?} at offset {offset}: {reason}")]
    UnexpectedEntry {
        /// Offset of the entry's header.
        offset: u64,
        /// The entry's name.
        name: String,
        /// Why it is unexpected.
        reason: String,
    },
    /// The manifest lists a file the archive does not hold.
    #[error("snapshot manifest lists {path}, but the archive ends at offset {offset} without it")]
    MissingEntry {
        /// The file.
        path: String,
        /// Where the archive ends.
        offset: u64,
    },
}

impl SnapshotError {
    /// Stable short name of the error, as shown to JavaScript in `SnapshotError.code`.
    pub fn code(&self) -> &'static str {
        match self {
            SnapshotError::Truncated { .. } => "truncated",
            SnapshotError::Checksum { .. } => "checksum",
            SnapshotError::Format { .. } => "format",
            SnapshotError::Manifest { .. } => "manifest",
            SnapshotError::Version { .. } => "version",
            SnapshotError::ManifestHash { .. } | SnapshotError::HashMismatch { .. } => {
                "hash-mismatch"
            }
            SnapshotError::SizeMismatch { .. } => "size-mismatch",
            SnapshotError::Path { .. } => "path",
            SnapshotError::TooLarge { .. } | SnapshotError::NoRoom { .. } => "too-large",
            SnapshotError::Duplicate { .. } => "duplicate",
            SnapshotError::UnexpectedEntry { .. } => "unexpected-entry",
            SnapshotError::MissingEntry { .. } => "missing-entry",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/// Packs every file of `files` into a snapshot (see the module docs).
///
/// Deterministic: the same files give the same bytes. The SHA-256 recorded for each file is
/// its [`FileEntry::sha256`] (the [`FileMap`] keeps it equal to the hash of the data).
/// A non-finite `mtime_ms` is stored as `0`.
pub fn encode_snapshot(files: &FileMap) -> Vec<u8> {
    let pieces = snapshot_pieces(files);
    let mut out = Vec::with_capacity(pieces.iter().map(Piece::len).sum());
    for p in &pieces {
        match p {
            Piece::Bytes(b) => out.extend_from_slice(b),
            Piece::File(d) => out.extend_from_slice(d),
            Piece::Zeros(n) => out.resize(out.len() + n, 0),
        }
    }
    out
}

/// A part of a snapshot's bytes, in order (see [`snapshot_pieces`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Piece<'a> {
    /// Headers and the manifest.
    Bytes(Vec<u8>),
    /// A file's content, as the den holds it (not copied).
    File(&'a [u8]),
    /// Zero bytes: padding, and the end-of-archive marker.
    Zeros(usize),
}

impl Piece<'_> {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Piece::Bytes(b) => b.len(),
            Piece::File(d) => d.len(),
            Piece::Zeros(n) => *n,
        }
    }

    /// True when it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The bytes [`encode_snapshot`] gives, as pieces that borrow the files' contents: a caller
/// can write them straight to where the snapshot goes (a JS `Uint8Array`) without a whole copy
/// of the den in between.
pub fn snapshot_pieces(files: &FileMap) -> Vec<Piece<'_>> {
    let list: Vec<ManifestFile<'_>> = files
        .iter()
        .map(|(path, entry)| ManifestFile {
            path: Cow::Borrowed(path.as_str()),
            size: entry.data.len() as u64,
            mtime_ms: clean_mtime(entry.mtime_ms),
            sha256: entry.sha256,
        })
        .collect();
    let manifest = manifest_text(&list);
    let pad = |n: usize| Piece::Zeros(padded_len(n) - n);
    let mut out = Vec::with_capacity(3 * files.len() + 4);
    out.push(Piece::Bytes(
        manifest_header(manifest.len() as u64, &list).to_vec(),
    ));
    let manifest_len = manifest.len();
    out.push(Piece::Bytes(manifest));
    out.push(pad(manifest_len));
    for (index, ((_, entry), file)) in files.iter().zip(&list).enumerate() {
        out.push(Piece::Bytes(file_headers(index, file)));
        out.push(Piece::File(&entry.data));
        out.push(pad(entry.data.len()));
    }
    out.push(Piece::Zeros(2 * BLOCK));
    out.retain(|p| !p.is_empty());
    out
}

/// One file as the manifest describes it.
#[derive(Debug, Clone, PartialEq)]
struct ManifestFile<'a> {
    path: Cow<'a, str>,
    size: u64,
    mtime_ms: f64,
    sha256: [u8; 32],
}

fn clean_mtime(ms: f64) -> f64 {
    if ms.is_finite() {
        ms
    } else {
        0.0
    }
}

/// The header mtime: whole seconds, clamped to what 11 octal digits hold (negative is 0).
fn header_mtime(ms: f64) -> u64 {
    if !ms.is_finite() || ms < 1000.0 {
        return 0;
    }
    let secs = (ms / 1000.0).floor();
    if secs >= MAX_OCTAL_11 as f64 {
        MAX_OCTAL_11
    } else {
        secs as u64
    }
}

fn padded_len(n: usize) -> usize {
    n.div_ceil(BLOCK).saturating_mul(BLOCK)
}

fn pad_to_block(out: &mut Vec<u8>) {
    let rem = out.len() % BLOCK;
    if rem != 0 {
        out.resize(out.len() + BLOCK - rem, 0);
    }
}

/// The manifest body (everything before the hash line).
fn manifest_body(files: &[ManifestFile<'_>]) -> Vec<u8> {
    use std::fmt::Write;
    let total: u64 = files.iter().map(|f| f.size).fold(0, u64::saturating_add);
    let mut s = String::with_capacity(128 + files.len() * 160);
    // Writing to a String cannot fail.
    let _ = write!(
        s,
        "{MANIFEST_PREFIX}{FORMAT_VERSION},\n\"file_count\":{},\"total_bytes\":{total},\n\"files\":[\n",
        files.len()
    );
    for (i, f) in files.iter().enumerate() {
        s.push_str("{\"path\":\"");
        for c in f.path.chars() {
            if c == '"' || c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        let _ = write!(
            s,
            "\",\"size\":{},\"mtime_ms\":{},\"sha256\":\"{}\"}}",
            f.size,
            crate::decimal::show(f.mtime_ms),
            crate::hex(&f.sha256)
        );
        s.push_str(if i + 1 == files.len() { "\n" } else { ",\n" });
    }
    s.push_str("],\n");
    s.into_bytes()
}

/// The whole manifest: body plus the line with the body's SHA-256.
fn manifest_text(files: &[ManifestFile<'_>]) -> Vec<u8> {
    let mut m = manifest_body(files);
    let digest = crate::hex(&crate::sha256(&m));
    m.extend_from_slice(HASH_LINE_START.as_bytes());
    m.extend_from_slice(digest.as_bytes());
    m.extend_from_slice(HASH_LINE_END.as_bytes());
    m
}

fn manifest_header(len: u64, files: &[ManifestFile<'_>]) -> [u8; BLOCK] {
    let mtime = files
        .iter()
        .map(|f| header_mtime(f.mtime_ms))
        .max()
        .unwrap_or(0);
    ustar_header(b"", MANIFEST_NAME.as_bytes(), len, mtime, b'0')
}

/// Writes `value` as zero-padded octal digits followed by a NUL, filling `field`.
fn put_octal(field: &mut [u8], mut value: u64) {
    if let Some((last, digits)) = field.split_last_mut() {
        *last = 0;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (value & 7) as u8;
            value >>= 3;
        }
    }
}

/// Sum of a header's bytes with the checksum field counted as eight spaces.
fn header_sum(h: &[u8]) -> u32 {
    h.iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                b as u32
            }
        })
        .sum()
}

/// A canonical ustar header. `prefix` (at most 155 bytes) and `name` (at most 100) must fit.
fn ustar_header(prefix: &[u8], name: &[u8], size: u64, mtime: u64, typeflag: u8) -> [u8; BLOCK] {
    let mut h = [0u8; BLOCK];
    for (d, s) in h[..100].iter_mut().zip(name) {
        *d = *s;
    }
    put_octal(&mut h[100..108], 0o644);
    put_octal(&mut h[108..116], 0);
    put_octal(&mut h[116..124], 0);
    put_octal(&mut h[124..136], size);
    put_octal(&mut h[136..148], mtime);
    h[156] = typeflag;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    for (d, s) in h[345..500].iter_mut().zip(prefix) {
        *d = *s;
    }
    let sum = header_sum(&h);
    put_octal(&mut h[148..155], sum as u64);
    h[155] = b' ';
    h
}

/// Splits a tar path into ustar `prefix` and `name`, the way GNU tar does: the longest name
/// that fits. `None` when it cannot be split (it then needs a PAX `path` record).
fn split_ustar(path: &[u8]) -> Option<(&[u8], &[u8])> {
    if path.len() <= 100 {
        return Some((&[], path));
    }
    let start = path.len() - 101;
    let i = start + path[start..].iter().position(|&b| b == b'/')?;
    if i == 0 || i > 155 || i + 1 >= path.len() {
        return None;
    }
    Some((&path[..i], &path[i + 1..]))
}

/// The first bytes of a path (at most 100, cut at a character boundary): the ustar `name` of
/// an entry whose real path is in a PAX record, for tools that do not read PAX.
fn fallback_name(path: &str) -> &[u8] {
    let mut end = path.len().min(100);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    &path.as_bytes()[..end]
}

/// One PAX record: `<len> <key>=<value>\n`, where `<len>` counts the whole record.
fn pax_record(out: &mut Vec<u8>, key: &str, value: &[u8]) {
    let base = key.len() + value.len() + 3;
    let mut len = base + 1;
    while base + len.to_string().len() != len {
        len = base + len.to_string().len();
    }
    out.extend_from_slice(len.to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(key.as_bytes());
    out.push(b'=');
    out.extend_from_slice(value);
    out.push(b'\n');
}

/// Everything of a file's entry before its data: an optional PAX header (with its records,
/// padded) and the ustar header.
fn file_headers(index: usize, file: &ManifestFile<'_>) -> Vec<u8> {
    let tar_path = file.path.strip_prefix('/').unwrap_or(&file.path);
    let mtime = header_mtime(file.mtime_ms);
    let mut records = Vec::new();
    let (prefix, name) = match split_ustar(tar_path.as_bytes()) {
        Some(split) => split,
        None => {
            pax_record(&mut records, "path", tar_path.as_bytes());
            (&[][..], fallback_name(tar_path))
        }
    };
    let size_field = if file.size > MAX_OCTAL_11 {
        pax_record(&mut records, "size", file.size.to_string().as_bytes());
        0
    } else {
        file.size
    };
    let mut out = Vec::with_capacity(3 * BLOCK);
    if !records.is_empty() {
        let pax_name = format!("PaxHeaders/{index}");
        out.extend_from_slice(&ustar_header(
            b"",
            pax_name.as_bytes(),
            records.len() as u64,
            mtime,
            b'x',
        ));
        out.extend_from_slice(&records);
        pad_to_block(&mut out);
    }
    out.extend_from_slice(&ustar_header(prefix, name, size_field, mtime, b'0'));
    out
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// Where [`verify_snapshot`] reads an archive from. A byte slice is one; the browser build
/// reads a JavaScript `Uint8Array` through it in pieces, so that checking a snapshot there
/// never copies the whole archive into wasm memory.
pub trait SnapshotSource {
    /// Length of the archive in bytes.
    fn size(&self) -> usize;
    /// The bytes of `range` (inside `0..size()`): borrowed where the source can, else copied.
    fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]>;
    /// The SHA-256 of the bytes of `range` (inside `0..size()`).
    fn sha256(&self, range: Range<usize>) -> [u8; 32];
    /// Where, counted from `range.start`, the first nonzero byte of `range` is, if any.
    fn first_nonzero(&self, range: Range<usize>) -> Option<usize> {
        self.bytes(range).iter().position(|&b| b != 0)
    }
}

impl SnapshotSource for &[u8] {
    fn size(&self) -> usize {
        self.len()
    }
    fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self[range])
    }
    fn sha256(&self, range: Range<usize>) -> [u8; 32] {
        crate::sha256(&self[range])
    }
}

/// One file of a verified snapshot: its den path, where its data lies in the archive, its
/// SHA-256 (checked against the data) and its `mtime_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotFile {
    /// The den path, normalized.
    pub path: String,
    /// The byte range of the file's data in the archive.
    pub data: Range<usize>,
    /// The SHA-256 of that data, equal to what the manifest records.
    pub sha256: [u8; 32],
    /// Last modification, milliseconds since the Unix epoch.
    pub mtime_ms: f64,
}

/// Unpacks a snapshot after verifying all of it (see [`verify_snapshot`]).
pub fn decode_snapshot(bytes: &[u8], max_bytes: u64) -> Result<FileMap, SnapshotError> {
    let files = verify_snapshot(&bytes, max_bytes)?;
    file_map(files, |f| Ok(Arc::from(&bytes[f.data.clone()])))
}

/// The den of the files [`verify_snapshot`] returned, with the data `data` gives for each
/// file (the bytes of its range, that were verified, or bytes of the same SHA-256 the caller
/// already holds); `data` may refuse ([`SnapshotError::NoRoom`]).
pub fn file_map(
    files: Vec<SnapshotFile>,
    mut data: impl FnMut(&SnapshotFile) -> Result<Arc<[u8]>, SnapshotError>,
) -> Result<FileMap, SnapshotError> {
    let ops = files
        .into_iter()
        .map(|f| {
            Ok(Op::Put {
                entry: FileEntry {
                    data: data(&f)?,
                    sha256: f.sha256,
                    mtime_ms: f.mtime_ms,
                },
                path: f.path,
            })
        })
        .collect::<Result<Vec<_>, SnapshotError>>()?;
    let mut map = FileMap::new();
    map.apply(ops, u64::MAX)
        .map_err(|e| SnapshotError::Manifest {
            reason: format!("the files cannot form a den: {e}"),
        })?;
    Ok(map)
}

/// Verifies all of a snapshot (see the module docs and `docs/snapshot-format.md`) and says
/// where each file's data is, without copying it. Refuses, without panicking, anything
/// `encode_snapshot` would not have written, and snapshots whose files add up to more than
/// `max_bytes`. The files it returns can form a den: sorted, unique, normalized paths, none
/// inside another.
pub fn verify_snapshot(
    bytes: &dyn SnapshotSource,
    max_bytes: u64,
) -> Result<Vec<SnapshotFile>, SnapshotError> {
    // The manifest entry.
    let first = match read_entry(bytes, 0)? {
        Some(e) => e,
        None => {
            return Err(manifest_err(format!(
                "the archive is empty: its first entry must be {MANIFEST_NAME}"
            )))
        }
    };
    if first.path != MANIFEST_NAME.as_bytes() || first.start != first.header {
        return Err(manifest_err(format!(
            "the first entry is {:?}, but it must be {MANIFEST_NAME}",
            String::from_utf8_lossy(&first.path)
        )));
    }
    if first.size > MAX_MANIFEST_BYTES {
        return Err(manifest_err(format!(
            "it is {} bytes, more than the manifest of a den's most files can be ({MAX_MANIFEST_BYTES})",
            first.size
        )));
    }
    let manifest_bytes = bytes.bytes(entry_data(bytes, &first)?);
    let manifest = parse_manifest(&manifest_bytes)?;
    let files = &manifest.files;
    expect_canonical(
        &bytes.bytes(first.start..first.data_start),
        &manifest_header(first.size, files),
        first.start,
        0,
        "the manifest's tar header",
    )?;
    check_manifest_files(files, max_bytes)?;

    // One entry per file, in manifest order.
    let mut pos = first.next;
    let mut out = Vec::with_capacity(files.len());
    for (index, file) in files.iter().enumerate() {
        let entry = match read_entry(bytes, pos)? {
            Some(e) => e,
            None => {
                return Err(SnapshotError::MissingEntry {
                    path: file.path.to_string(),
                    offset: pos as u64,
                })
            }
        };
        let path = entry_den_path(&entry)?;
        if path != file.path {
            return Err(
                match files.binary_search_by(|f| f.path.as_ref().cmp(path.as_str())) {
                    Ok(j) if j < index => SnapshotError::Duplicate {
                        place: format!("second entry at offset {}", entry.header),
                        path,
                    },
                    Ok(_) => SnapshotError::Format {
                        offset: entry.header as u64,
                        reason: format!(
                            "entries are out of manifest order: expected {}, found {path}",
                            file.path
                        ),
                    },
                    Err(_) => SnapshotError::UnexpectedEntry {
                        offset: entry.header as u64,
                        name: path,
                        reason: "the manifest does not list it".into(),
                    },
                },
            );
        }
        if entry.size != file.size {
            return Err(SnapshotError::SizeMismatch {
                path,
                expected: file.size,
                actual: entry.size,
            });
        }
        let pax_block = if entry.start != entry.header {
            entry.header - entry.start
        } else {
            0
        };
        expect_canonical(
            &bytes.bytes(entry.start..entry.data_start),
            &file_headers(index, file),
            entry.start,
            pax_block,
            &format!("the tar header of {path}"),
        )?;
        let data = entry_data(bytes, &entry)?;
        let digest = bytes.sha256(data.clone());
        if digest != file.sha256 {
            return Err(SnapshotError::HashMismatch {
                path,
                expected: crate::hex(&file.sha256),
                actual: crate::hex(&digest),
            });
        }
        out.push(SnapshotFile {
            path,
            data,
            sha256: digest,
            mtime_ms: file.mtime_ms,
        });
        pos = entry.next;
    }
    check_end(bytes, pos, files)?;
    Ok(out)
}

fn manifest_err(reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Manifest {
        reason: reason.into(),
    }
}

fn format_err(offset: usize, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Format {
        offset: offset as u64,
        reason: reason.into(),
    }
}

/// One tar entry as read from the input; all offsets are within the input.
struct RawEntry {
    /// Offset of the entry's first header (the PAX header, if any).
    start: usize,
    /// Offset of the ustar header of the file itself.
    header: usize,
    /// Offset of the data.
    data_start: usize,
    /// Size of the data; `data_start + padded(size) <= input length`.
    size: u64,
    /// Offset just after the padded data.
    next: usize,
    /// The path as stored (PAX `path`, or ustar `prefix/name`).
    path: Vec<u8>,
}

/// The 512-byte block at `pos`, or a truncation error naming `what`.
fn block<'a>(
    bytes: &'a dyn SnapshotSource,
    pos: usize,
    what: &str,
) -> Result<Cow<'a, [u8]>, SnapshotError> {
    match pos.checked_add(BLOCK) {
        Some(end) if end <= bytes.size() => Ok(bytes.bytes(pos..end)),
        _ => Err(SnapshotError::Truncated {
            what: what.to_owned(),
            offset: pos as u64,
            needed: BLOCK as u64,
            len: bytes.size() as u64,
        }),
    }
}

fn is_zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// Checks a header's checksum (strictly six octal digits, NUL, space) and magic.
fn check_header(h: &[u8], offset: usize) -> Result<(), SnapshotError> {
    let field = &h[148..156];
    let computed = header_sum(h);
    let well_formed =
        field[..6].iter().all(|b| (b'0'..=b'7').contains(b)) && field[6] == 0 && field[7] == b' ';
    let stored = field[..6].iter().fold(0u32, |acc, &b| {
        acc * 8 + u32::from(b.wrapping_sub(b'0') & 7)
    });
    if !well_formed || stored != computed {
        return Err(SnapshotError::Checksum {
            offset: offset as u64,
            stored: format!("{:?}", String::from_utf8_lossy(field)),
            computed,
        });
    }
    if &h[257..263] != b"ustar\0" || &h[263..265] != b"00" {
        return Err(format_err(
            offset + 257,
            "the header is not a POSIX ustar header (magic \"ustar\\0\" and version \"00\")",
        ));
    }
    Ok(())
}

/// A strict octal field: all digits, then one NUL.
fn octal_field(
    h: &[u8],
    range: std::ops::Range<usize>,
    name: &str,
    offset: usize,
) -> Result<u64, SnapshotError> {
    let field = &h[range.clone()];
    let (last, digits) = field.split_last().unwrap_or((&0, &[]));
    if *last != 0 || !digits.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return Err(format_err(
            offset + range.start,
            format!("the {name} field of the tar header is not octal digits ending in NUL"),
        ));
    }
    Ok(digits
        .iter()
        .fold(0u64, |acc, &b| (acc << 3) | u64::from(b - b'0')))
}

/// A NUL-terminated (or full-width) string field.
fn str_field(field: &[u8]) -> &[u8] {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    &field[..end]
}

fn type_name(t: u8) -> &'static str {
    match t {
        b'1' => "a hard link",
        b'2' => "a symbolic link",
        b'3' => "a character device",
        b'4' => "a block device",
        b'5' => "a directory",
        b'6' => "a FIFO",
        b'7' => "a contiguous file",
        b'g' => "a PAX global header",
        b'L' | b'K' => "a GNU long name",
        _ => "an unknown kind",
    }
}

/// Where the data of an entry of `size` bytes starting at `data_start` ends (padded), or a
/// truncation error. Never trusts `size` beyond the input length.
fn data_end(
    bytes: &dyn SnapshotSource,
    data_start: usize,
    size: u64,
    what: &str,
) -> Result<usize, SnapshotError> {
    let padded = size.div_ceil(BLOCK as u64).checked_mul(BLOCK as u64);
    let end = padded.and_then(|p| p.checked_add(data_start as u64));
    match end {
        Some(end) if end <= bytes.size() as u64 => Ok(end as usize),
        _ => Err(SnapshotError::Truncated {
            what: what.to_owned(),
            offset: data_start as u64,
            needed: padded.unwrap_or(u64::MAX),
            len: bytes.size() as u64,
        }),
    }
}

/// Where the data of an entry is, after checking that its padding is zero.
fn entry_data(bytes: &dyn SnapshotSource, e: &RawEntry) -> Result<Range<usize>, SnapshotError> {
    // read_entry checked data_start + padded(size) == next <= len, so size fits in usize.
    let end = e.data_start + e.size as usize;
    if let Some(i) = bytes.first_nonzero(end..e.next) {
        return Err(format_err(
            end + i,
            "the padding after an entry's data is not zero",
        ));
    }
    Ok(e.data_start..end)
}

/// PAX records this format uses.
#[derive(Default)]
struct Pax {
    path: Option<Vec<u8>>,
    size: Option<u64>,
}

fn parse_pax(data: &[u8], offset: usize) -> Result<Pax, SnapshotError> {
    let mut pax = Pax::default();
    let mut pos = 0;
    while pos < data.len() {
        let rest = &data[pos..];
        let bad = |reason: &str| {
            format_err(
                offset + pos,
                format!("bad extended header record: {reason}"),
            )
        };
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 9 || rest.get(digits) != Some(&b' ') {
            return Err(bad("it does not start with a length and a space"));
        }
        let len = rest[..digits]
            .iter()
            .fold(0usize, |acc, &b| acc * 10 + usize::from(b - b'0'));
        if len > rest.len() || len < digits + 4 || rest[len - 1] != b'\n' {
            return Err(bad("its length is wrong"));
        }
        let record = &rest[digits + 1..len - 1];
        let eq = record
            .iter()
            .position(|&b| b == b'=')
            .ok_or_else(|| bad("it has no '='"))?;
        let (key, value) = (&record[..eq], &record[eq + 1..]);
        match key {
            b"path" if pax.path.is_none() => pax.path = Some(value.to_vec()),
            b"size" if pax.size.is_none() => {
                let size = std::str::from_utf8(value)
                    .ok()
                    .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|s| s.parse::<u64>().ok())
                    .ok_or_else(|| bad("size is not a decimal number"))?;
                pax.size = Some(size);
            }
            _ => {
                return Err(bad(&format!(
                    "keyword {:?} is not used by foxden snapshots or repeated",
                    String::from_utf8_lossy(key)
                )))
            }
        }
        pos += len;
    }
    Ok(pax)
}

/// Reads the entry at `pos`: `None` for a zero block (the end of the archive).
fn read_entry(bytes: &dyn SnapshotSource, pos: usize) -> Result<Option<RawEntry>, SnapshotError> {
    let mut h = block(bytes, pos, "a tar header")?;
    if is_zero(&h) {
        return Ok(None);
    }
    check_header(&h, pos)?;
    let mut header = pos;
    let mut pax = Pax::default();
    if h[156] == b'x' {
        let size = octal_field(&h, 124..136, "size", pos)?;
        if size > MAX_PAX_BYTES {
            return Err(format_err(
                pos + 124,
                format!("an extended header of {size} bytes is more than a den path needs"),
            ));
        }
        let end = data_end(bytes, pos + BLOCK, size, "an extended header")?;
        let data = bytes.bytes(pos + BLOCK..pos + BLOCK + size as usize);
        if let Some(i) = bytes.first_nonzero(pos + BLOCK + data.len()..end) {
            return Err(format_err(
                pos + BLOCK + data.len() + i,
                "the padding after an extended header is not zero",
            ));
        }
        pax = parse_pax(&data, pos + BLOCK)?;
        header = end;
        h = block(bytes, header, "the tar header after an extended header")?;
        if is_zero(&h) {
            return Err(format_err(
                header,
                "an extended header is not followed by an entry",
            ));
        }
        check_header(&h, header)?;
        if h[156] == b'x' {
            return Err(format_err(header + 156, "two extended headers in a row"));
        }
    }
    let path = match pax.path {
        Some(p) => p,
        None => {
            let name = str_field(&h[..100]);
            let prefix = str_field(&h[345..500]);
            let mut p = Vec::with_capacity(prefix.len() + 1 + name.len());
            if !prefix.is_empty() {
                p.extend_from_slice(prefix);
                p.push(b'/');
            }
            p.extend_from_slice(name);
            p
        }
    };
    if h[156] != b'0' {
        return Err(SnapshotError::UnexpectedEntry {
            offset: header as u64,
            name: String::from_utf8_lossy(&path).into_owned(),
            reason: format!(
                "it is {} (type {:?}); a snapshot holds only regular files",
                type_name(h[156]),
                h[156] as char
            ),
        });
    }
    let header_size = octal_field(&h, 124..136, "size", header)?;
    let size = pax.size.unwrap_or(header_size);
    let data_start = header + BLOCK;
    let what = format!("the data of {:?}", String::from_utf8_lossy(&path));
    let next = data_end(bytes, data_start, size, &what)?;
    Ok(Some(RawEntry {
        start: pos,
        header,
        data_start,
        size,
        next,
        path,
    }))
}

/// Checks a path from the archive and returns it as a den path (`/` + the tar path).
fn entry_den_path(e: &RawEntry) -> Result<String, SnapshotError> {
    let tar_path = std::str::from_utf8(&e.path).map_err(|_| SnapshotError::Path {
        path: String::from_utf8_lossy(&e.path).into_owned(),
        reason: "it is not valid UTF-8".into(),
    })?;
    let den = format!("/{tar_path}");
    check_den_path(&den)?;
    Ok(den)
}

/// A den path in a snapshot must be a normalized file path.
fn check_den_path(path: &str) -> Result<(), SnapshotError> {
    match normalize_file_path(path) {
        Ok(n) if n == path => Ok(()),
        Ok(n) => Err(SnapshotError::Path {
            path: path.to_owned(),
            reason: format!("it is not in normalized form (that would be {n:?})"),
        }),
        Err(e) => Err(SnapshotError::Path {
            path: path.to_owned(),
            reason: e.to_string(),
        }),
    }
}

/// Compares header bytes with what `encode_snapshot` writes; names the first differing field.
/// `pax_len` is the length of the PAX header and records before the ustar header (0 if none).
fn expect_canonical(
    actual: &[u8],
    expected: &[u8],
    offset: usize,
    pax_len: usize,
    what: &str,
) -> Result<(), SnapshotError> {
    if actual == expected {
        return Ok(());
    }
    let i = actual
        .iter()
        .zip(expected)
        .position(|(a, b)| a != b)
        .unwrap_or(actual.len().min(expected.len()));
    let place = if i < pax_len.min(BLOCK) {
        format!("the {} field of its extended header", field_name(i))
    } else if i < pax_len {
        "its extended header records".to_owned()
    } else if actual.len() != expected.len() && i >= actual.len().min(expected.len()) {
        "whether it has an extended header".to_owned()
    } else {
        format!("the {} field", field_name(i - pax_len))
    };
    Err(format_err(
        offset + i,
        format!("{what} differs from what foxden writes, in {place}"),
    ))
}

fn field_name(i: usize) -> &'static str {
    const FIELDS: [(usize, &str); 17] = [
        (0, "name"),
        (100, "mode"),
        (108, "uid"),
        (116, "gid"),
        (124, "size"),
        (136, "mtime"),
        (148, "chksum"),
        (156, "typeflag"),
        (157, "linkname"),
        (257, "magic"),
        (263, "version"),
        (265, "uname"),
        (297, "gname"),
        (329, "devmajor"),
        (337, "devminor"),
        (345, "prefix"),
        (500, "padding"),
    ];
    FIELDS
        .iter()
        .rev()
        .find(|(start, _)| *start <= i)
        .map_or("name", |(_, name)| name)
}

/// After the last file: two zero blocks, then nothing but whole zero blocks.
fn check_end(
    bytes: &dyn SnapshotSource,
    pos: usize,
    files: &[ManifestFile<'_>],
) -> Result<(), SnapshotError> {
    let first = block(bytes, pos, "the end-of-archive marker")?;
    if !is_zero(&first) {
        // Another entry: say what it is.
        let err = match read_entry(bytes, pos) {
            Err(e) => e,
            Ok(None) => format_err(pos, "expected the end of the archive"),
            Ok(Some(entry)) => match entry_den_path(&entry) {
                Err(e) => e,
                Ok(path)
                    if files
                        .binary_search_by(|f| f.path.as_ref().cmp(path.as_str()))
                        .is_ok() =>
                {
                    SnapshotError::Duplicate {
                        place: format!("second entry at offset {}", entry.header),
                        path,
                    }
                }
                Ok(path) => SnapshotError::UnexpectedEntry {
                    offset: entry.header as u64,
                    name: path,
                    reason: "the manifest does not list it".into(),
                },
            },
        };
        return Err(err);
    }
    let second = block(bytes, pos + BLOCK, "the end-of-archive marker")?;
    if let Some(i) = second.iter().position(|&b| b != 0) {
        return Err(format_err(
            pos + BLOCK + i,
            "the end-of-archive marker is not two zero blocks",
        ));
    }
    let rest_start = pos + 2 * BLOCK;
    if let Some(i) = bytes.first_nonzero(rest_start..bytes.size()) {
        return Err(format_err(
            rest_start + i,
            "data after the end of the archive",
        ));
    }
    let rest_len = bytes.size() - rest_start;
    let whole = rest_len / BLOCK * BLOCK;
    if whole != rest_len {
        return Err(format_err(
            rest_start + whole,
            "bytes after the end of the archive that are not whole zero blocks",
        ));
    }
    Ok(())
}

/// A parsed manifest.
struct Manifest<'a> {
    files: Vec<ManifestFile<'a>>,
}

fn parse_manifest(data: &[u8]) -> Result<Manifest<'_>, SnapshotError> {
    // 1. The version, whose place every version keeps.
    let rest = data
        .strip_prefix(MANIFEST_PREFIX.as_bytes())
        .ok_or_else(|| manifest_err(format!("it does not start with {MANIFEST_PREFIX}")))?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || (digits > 1 && rest[0] == b'0') {
        return Err(manifest_err("its version is not a number"));
    }
    let version = rest[..digits]
        .iter()
        .fold(0u32, |acc, &b| acc * 10 + u32::from(b - b'0'));
    if version != FORMAT_VERSION {
        return Err(SnapshotError::Version { found: version });
    }

    // 2. The manifest's own hash, on its last line.
    if data.len() < HASH_LINE_LEN {
        return Err(manifest_err(
            "it is too short to hold its manifest_sha256 line",
        ));
    }
    let (body, last) = data.split_at(data.len() - HASH_LINE_LEN);
    let stored = &last[HASH_LINE_START.len()..HASH_LINE_START.len() + 64];
    if !last.starts_with(HASH_LINE_START.as_bytes())
        || !last.ends_with(HASH_LINE_END.as_bytes())
        || !body.ends_with(b"\n")
        || parse_hex32(stored).is_none()
    {
        return Err(manifest_err(format!(
            "its last line must be {HASH_LINE_START}<64 lower-case hex digits>\"}}"
        )));
    }
    let stored = String::from_utf8_lossy(stored).into_owned();
    let actual = crate::hex(&crate::sha256(body));
    if stored != actual {
        return Err(SnapshotError::ManifestHash {
            expected: stored,
            actual,
        });
    }

    // 3. The body, line by line.
    let body = std::str::from_utf8(body).map_err(|_| manifest_err("it is not valid UTF-8"))?;
    // Header line, counts line, "files":[ line, the file lines, then "],\n". The lines are
    // walked one at a time and no more file lines are read than file_count says: a manifest of
    // millions of empty lines costs nothing but its hash.
    let layout = || manifest_err("its lines are not laid out as the format specifies");
    let listed = body.strip_suffix("],\n").ok_or_else(layout)?;
    if !listed.ends_with('\n') {
        return Err(layout());
    }
    let mut lines = listed.split_inclusive('\n');
    let mut next_line = || lines.next().and_then(|l| l.strip_suffix('\n'));
    let (first, counts, open) = match (next_line(), next_line(), next_line()) {
        (Some(a), Some(b), Some(c)) => (a, b, c),
        _ => return Err(layout()),
    };
    if open != "\"files\":[" {
        return Err(layout());
    }
    if first != format!("{MANIFEST_PREFIX}{FORMAT_VERSION},") {
        return Err(manifest_err(
            "its first line is not as the format specifies",
        ));
    }
    let (count, total) = parse_counts(counts).ok_or_else(|| {
        manifest_err("its second line must be \"file_count\":<n>,\"total_bytes\":<n>,")
    })?;
    let mut files = Vec::new();
    let mut line = next_line();
    while let Some(text) = line {
        if files.len() as u64 == count {
            return Err(manifest_err(format!(
                "file_count is {count}, but it lists more files"
            )));
        }
        line = next_line();
        let file = parse_file_line(text, line.is_none()).ok_or_else(|| {
            manifest_err(format!(
                "file line {} is malformed: {text}",
                files.len() + 1
            ))
        })?;
        files.push(file);
    }
    if count != files.len() as u64 {
        return Err(manifest_err(format!(
            "file_count is {count}, but it lists {} files",
            files.len()
        )));
    }
    let sum = files
        .iter()
        .try_fold(0u64, |acc, f| acc.checked_add(f.size))
        .ok_or_else(|| manifest_err("the file sizes overflow"))?;
    if sum != total {
        return Err(manifest_err(format!(
            "total_bytes is {total}, but the file sizes add up to {sum}"
        )));
    }
    // 4. Canonical form: exactly what encode_snapshot writes for these files.
    let canonical = manifest_body(&files);
    if canonical.as_slice() != body.as_bytes() {
        let i = canonical
            .iter()
            .zip(body.as_bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(canonical.len().min(body.len()));
        return Err(manifest_err(format!(
            "it is not in canonical form (byte {i} of the manifest)"
        )));
    }
    Ok(Manifest { files })
}

/// Checks the manifest's list: valid normalized paths, no duplicates, sorted, no path both a
/// file and a folder, and the total within `max_bytes`. Runs before any file data is read.
fn check_manifest_files(files: &[ManifestFile<'_>], max_bytes: u64) -> Result<(), SnapshotError> {
    if files.len() > crate::limits::DEFAULT_MAX_FILES {
        return Err(manifest_err(format!(
            "the files cannot form a den: it lists {} files, more than the {} a den holds",
            files.len(),
            crate::limits::DEFAULT_MAX_FILES
        )));
    }
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_ref()).collect();
    let (seen, repeat) = crate::order::sorted_with_repeats(&paths);
    for (f, repeat) in files.iter().zip(repeat) {
        check_den_path(&f.path)?;
        if repeat {
            return Err(SnapshotError::Duplicate {
                path: f.path.to_string(),
                place: "listed twice in the manifest".into(),
            });
        }
    }
    if let Some(w) = files.windows(2).find(|w| w[0].path >= w[1].path) {
        return Err(manifest_err(format!(
            "its files are not sorted by path: {} comes before {}",
            w[0].path, w[1].path
        )));
    }
    for f in files {
        let mut idx = f.path.len();
        while let Some(pos) = f.path[..idx].rfind('/') {
            if pos == 0 {
                break;
            }
            let ancestor = &f.path[..pos];
            if seen.binary_search_by(|(p, _)| (*p).cmp(ancestor)).is_ok() {
                return Err(SnapshotError::Path {
                    path: f.path.to_string(),
                    reason: format!(
                        "it is inside {ancestor}, which is a file: a path cannot be both a file and a folder"
                    ),
                });
            }
            idx = pos;
        }
    }
    let total = files.iter().map(|f| f.size).fold(0u64, u64::saturating_add);
    if total > max_bytes {
        return Err(SnapshotError::TooLarge {
            total,
            max: max_bytes,
        });
    }
    Ok(())
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_counts(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("\"file_count\":")?;
    let (count, rest) = rest.split_once(',')?;
    let total = rest.strip_prefix("\"total_bytes\":")?.strip_suffix(',')?;
    Some((parse_u64(count)?, parse_u64(total)?))
}

fn parse_hex32(s: &[u8]) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let nibble = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(s.chunks_exact(2)) {
        *o = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

/// `{"path":"…","size":N,"mtime_ms":X,"sha256":"…"}` and a comma unless it is the last.
/// Returns a path borrowing from the line when it has no escapes.
fn parse_file_line(line: &str, last: bool) -> Option<ManifestFile<'_>> {
    let rest = line.strip_prefix("{\"path\":\"")?;
    // The path runs to the first '"' not escaped; only \" and \\ escapes are written, and the
    // normalizer refuses '\\', so a path with an escape is either '"'-bearing or invalid.
    let mut end = None;
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let end = end?;
    let raw = &rest[..end];
    let rest = &rest[end + 1..];
    let rest = rest.strip_prefix(",\"size\":")?;
    let (size, rest) = rest.split_once(',')?;
    let rest = rest.strip_prefix("\"mtime_ms\":")?;
    let (mtime, rest) = rest.split_once(',')?;
    let rest = rest.strip_prefix("\"sha256\":\"")?;
    let sha256 = parse_hex32(rest.get(..64)?.as_bytes())?;
    let rest = rest.get(64..)?.strip_prefix("\"}")?;
    if rest != if last { "" } else { "," } {
        return None;
    }
    if !mtime
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        return None;
    }
    let mtime_ms = crate::decimal::parse_f64(mtime)?;
    if !mtime_ms.is_finite() {
        return None;
    }
    let path = if raw.as_bytes().contains(&b'\\') {
        // Only \" and \\ are written (and the normalizer refuses '\\' anyway).
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next()? {
                    e @ ('"' | '\\') => out.push(e),
                    _ => return None,
                }
            } else {
                out.push(c);
            }
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(raw)
    };
    Some(ManifestFile {
        path,
        size: parse_u64(size)?,
        mtime_ms,
        sha256,
    })
}
