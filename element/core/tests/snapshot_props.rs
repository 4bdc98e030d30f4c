//! Tests of the snapshot codec (`foxden_core::snapshot`, specified in docs/snapshot-format.md):
//! round trips, every single-byte change and every truncation refused, each check with its
//! error code, conformance with an independent writer that follows the spec, and the archive
//! opened by the system's `tar`.
#![allow(clippy::unwrap_used)]

use foxden_core::snapshot::{
    encode_snapshot, verify_snapshot, SnapshotError, SnapshotSource, FORMAT_VERSION, MANIFEST_NAME,
};
use foxden_core::{hex, sha256, FileEntry, FileMap, Op};
use proptest::prelude::*;
use std::borrow::Cow;
use std::ops::Range;
use std::path::PathBuf;
use std::process::Command;

const NO_CAP: u64 = u64::MAX;

/// A source that lends nothing: every read is a copy and every hash is fed 7 bytes at a time,
/// as the browser build reads a snapshot that stays in JavaScript memory.
struct Pieces<'a>(&'a [u8]);

impl SnapshotSource for Pieces<'_> {
    fn size(&self) -> usize {
        self.0.len()
    }
    fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]> {
        Cow::Owned(self.0[range].to_vec())
    }
    fn sha256(&self, range: Range<usize>) -> [u8; 32] {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        for piece in self.0[range].chunks(7) {
            h.update(piece);
        }
        h.finalize().into()
    }
}

/// `decode_snapshot`, checked against `verify_snapshot` over [`Pieces`]: both must agree on
/// every input, error for error and file for file.
fn decode_snapshot(bytes: &[u8], max: u64) -> Result<FileMap, SnapshotError> {
    let decoded = foxden_core::snapshot::decode_snapshot(bytes, max);
    let verified = verify_snapshot(&Pieces(bytes), max);
    match (&decoded, &verified) {
        (Ok(m), Ok(files)) => {
            let listed: Vec<_> = files
                .iter()
                .map(|f| (f.path.clone(), bytes[f.data.clone()].to_vec(), f.mtime_ms))
                .collect();
            assert_eq!(files_of(m), listed);
            for f in files {
                assert_eq!(f.sha256, sha256(&bytes[f.data.clone()]));
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("decode and verify disagree: {decoded:?} / {verified:?}"),
    }
    decoded
}

fn map_of(files: &[(&str, &[u8], f64)]) -> FileMap {
    let mut m = FileMap::new();
    let ops = files
        .iter()
        .map(|(p, d, t)| Op::Put {
            path: p.to_string(),
            entry: FileEntry::new(d.to_vec(), *t),
        })
        .collect();
    m.apply(ops, NO_CAP).unwrap();
    m
}

fn long_dir() -> String {
    // 120 bytes: too long for the ustar name field, fits in prefix.
    format!("/work/{}", "d".repeat(114))
}

fn pax_path() -> String {
    // 300+ bytes in segments of at most 255: needs a PAX path record.
    format!(
        "/drop/{}/{}/ünï-{}.bin",
        "p".repeat(200),
        "q".repeat(60),
        "r".repeat(40)
    )
}

/// A small den that exercises every layout: plain, empty, binary, unicode with a quote,
/// ustar prefix split, PAX path, fractional and negative mtimes.
fn sample() -> FileMap {
    let bin: Vec<u8> = (0..=255u8).collect();
    let split = format!("{}/file.txt", long_dir());
    let pax = pax_path();
    map_of(&[
        (
            "/drop/sales.csv",
            b"region,total\nnorth,12\n",
            1_700_000_000_123.0,
        ),
        ("/drop/empty", b"", 0.0),
        ("/out/bin.dat", &bin, 1_700_000_000_999.5),
        (
            "/work/ünï cödé/\"quoted\".txt",
            "héllo\n".as_bytes(),
            -1500.0,
        ),
        (&split, b"split", 86_400_000.0),
        (&pax, b"pax", 1_234_567_890_000.0),
    ])
}

// ---------------------------------------------------------------------------------------------
// An independent writer that follows docs/snapshot-format.md, with knobs for tampering.
// ---------------------------------------------------------------------------------------------

mod spec {
    use super::*;

    pub fn octal(field: &mut [u8], v: u64) {
        let n = field.len() - 1;
        let s = format!("{v:0n$o}");
        assert_eq!(s.len(), n);
        field[..n].copy_from_slice(s.as_bytes());
        field[n] = 0;
    }

    pub fn fix_checksum(h: &mut [u8]) {
        h[148..156].fill(b' ');
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    }

    pub fn header(prefix: &[u8], name: &[u8], size: u64, mtime: u64, typeflag: u8) -> Vec<u8> {
        let mut h = vec![0u8; 512];
        h[..name.len()].copy_from_slice(name);
        octal(&mut h[100..108], 0o644);
        octal(&mut h[108..116], 0);
        octal(&mut h[116..124], 0);
        octal(&mut h[124..136], size);
        octal(&mut h[136..148], mtime);
        h[156] = typeflag;
        h[257..265].copy_from_slice(b"ustar\x0000");
        h[345..345 + prefix.len()].copy_from_slice(prefix);
        fix_checksum(&mut h);
        h
    }

    pub fn pad(v: &mut Vec<u8>) {
        let len = v.len().div_ceil(512) * 512;
        v.resize(len, 0);
    }

    /// Whole seconds, clamped to 0..=8^11-1 (what 11 octal digits hold).
    pub fn mtime_secs(ms: f64) -> u64 {
        if ms.is_nan() || ms < 1000.0 {
            0
        } else {
            ((ms / 1000.0).floor() as u64).min(0o777_7777_7777)
        }
    }

    /// A manifest line-for-line as the spec writes it, with its self-hash.
    pub fn manifest(version: u32, files: &[(String, u64, f64, [u8; 32])]) -> Vec<u8> {
        let total: u64 = files.iter().map(|f| f.1).sum();
        let mut s = format!(
            "{{\"format\":\"foxden-snapshot\",\"version\":{version},\n\"file_count\":{},\"total_bytes\":{total},\n\"files\":[\n",
            files.len()
        );
        for (i, (p, size, mtime, sha)) in files.iter().enumerate() {
            let p = p.replace('"', "\\\"");
            let comma = if i + 1 < files.len() { "," } else { "" };
            s += &format!(
                "{{\"path\":\"{p}\",\"size\":{size},\"mtime_ms\":{mtime},\"sha256\":\"{}\"}}{comma}\n",
                hex(sha)
            );
        }
        s += "],\n";
        let digest = hex(&sha256(s.as_bytes()));
        s += &format!("\"manifest_sha256\":\"{digest}\"}}\n");
        s.into_bytes()
    }

    /// One tar entry to write.
    pub struct Entry {
        pub tar_path: String,
        pub data: Vec<u8>,
        pub mtime: u64,
        pub typeflag: u8,
        pub pax_name: Option<String>,
    }

    impl Entry {
        pub fn file(den_path: &str, data: &[u8], mtime_ms: f64) -> Entry {
            Entry {
                tar_path: den_path[1..].to_owned(),
                data: data.to_vec(),
                mtime: mtime_secs(mtime_ms),
                typeflag: b'0',
                pax_name: None,
            }
        }
    }

    fn split(p: &[u8]) -> Option<(&[u8], &[u8])> {
        if p.len() <= 100 {
            return Some((b"", p));
        }
        // The longest name of at most 100 bytes after a '/', with a prefix of at most 155.
        (p.len() - 101..p.len())
            .find(|&i| p[i] == b'/')
            .filter(|&i| i > 0 && i <= 155 && i + 1 < p.len())
            .map(|i| (&p[..i], &p[i + 1..]))
    }

    pub fn entry_bytes(out: &mut Vec<u8>, e: &Entry) {
        let p = e.tar_path.as_bytes();
        let (prefix, name) = match split(p) {
            Some(s) => s,
            None => {
                let rec_base = "path=".len() + p.len() + 2;
                let mut len = rec_base + 1;
                while rec_base + len.to_string().len() != len {
                    len = rec_base + len.to_string().len();
                }
                let mut rec = format!("{len} path=").into_bytes();
                rec.extend_from_slice(p);
                rec.push(b'\n');
                let pax_name = e.pax_name.clone().unwrap_or_default();
                out.extend(header(
                    b"",
                    pax_name.as_bytes(),
                    rec.len() as u64,
                    e.mtime,
                    b'x',
                ));
                out.extend(rec);
                pad(out);
                let mut end = 100;
                while !e.tar_path.is_char_boundary(end) {
                    end -= 1;
                }
                (&b""[..], &p[..end])
            }
        };
        out.extend(header(
            prefix,
            name,
            e.data.len() as u64,
            e.mtime,
            e.typeflag,
        ));
        out.extend(&e.data);
        pad(out);
    }

    pub fn archive(manifest: &[u8], manifest_mtime: u64, entries: &[Entry]) -> Vec<u8> {
        let mut out = header(
            b"",
            MANIFEST_NAME.as_bytes(),
            manifest.len() as u64,
            manifest_mtime,
            b'0',
        );
        out.extend(manifest);
        pad(&mut out);
        for e in entries {
            entry_bytes(&mut out, e);
        }
        out.extend([0u8; 1024]);
        out
    }

    /// The snapshot of `files` (sorted den paths), built from the spec alone.
    pub fn snapshot(files: &[(String, Vec<u8>, f64)]) -> Vec<u8> {
        let list: Vec<_> = files
            .iter()
            .map(|(p, d, t)| (p.clone(), d.len() as u64, *t, sha256(d)))
            .collect();
        let m = manifest(FORMAT_VERSION, &list);
        let entries: Vec<Entry> = files
            .iter()
            .enumerate()
            .map(|(i, (p, d, t))| Entry {
                pax_name: Some(format!("PaxHeaders/{i}")),
                ..Entry::file(p, d, *t)
            })
            .collect();
        let mtime = files.iter().map(|f| mtime_secs(f.2)).max().unwrap_or(0);
        archive(&m, mtime, &entries)
    }
}

fn files_of(m: &FileMap) -> Vec<(String, Vec<u8>, f64)> {
    m.iter()
        .map(|(p, e)| (p.clone(), e.data.to_vec(), e.mtime_ms))
        .collect()
}

fn code(bytes: &[u8]) -> &'static str {
    match decode_snapshot(bytes, NO_CAP) {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

/// A tampered snapshot of `files` whose checksums and manifest hash are all valid.
fn forged(files: &[(&str, &[u8])], entries: Vec<spec::Entry>) -> Vec<u8> {
    let list: Vec<_> = files
        .iter()
        .map(|(p, d)| (p.to_string(), d.len() as u64, 0.0, sha256(d)))
        .collect();
    spec::archive(&spec::manifest(FORMAT_VERSION, &list), 0, &entries)
}

// ---------------------------------------------------------------------------------------------
// Round trips and conformance
// ---------------------------------------------------------------------------------------------

#[test]
fn empty_den_round_trips() {
    let bytes = encode_snapshot(&FileMap::new());
    assert_eq!(
        bytes.len(),
        2048,
        "manifest header, manifest block, two zero blocks"
    );
    assert!(bytes.ends_with(&[0u8; 1024]));
    let back = decode_snapshot(&bytes, 0).unwrap();
    assert!(back.is_empty());
}

#[test]
fn sample_round_trips_exactly() {
    let m = sample();
    let bytes = encode_snapshot(&m);
    let back = decode_snapshot(&bytes, m.total_bytes()).unwrap();
    assert_eq!(back, m);
    for (p, e) in back.iter() {
        assert_eq!(
            e.mtime_ms.to_bits(),
            m.get(p).unwrap().mtime_ms.to_bits(),
            "{p}"
        );
    }
    assert_eq!(encode_snapshot(&back), bytes, "deterministic");
}

#[test]
fn encoder_matches_the_written_spec() {
    for m in [FileMap::new(), sample()] {
        assert_eq!(encode_snapshot(&m), spec::snapshot(&files_of(&m)));
    }
}

#[test]
fn manifest_is_the_first_entry_and_readable() {
    let bytes = encode_snapshot(&sample());
    assert_eq!(&bytes[..MANIFEST_NAME.len()], MANIFEST_NAME.as_bytes());
    let size = usize::from_str_radix(std::str::from_utf8(&bytes[124..135]).unwrap(), 8).unwrap();
    let text = std::str::from_utf8(&bytes[512..512 + size]).unwrap();
    assert!(
        text.starts_with("{\"format\":\"foxden-snapshot\",\"version\":1,\n"),
        "{text}"
    );
    assert!(text.contains("\"file_count\":6,"), "{text}");
    assert!(
        text.contains("\"path\":\"/work/ünï cödé/\\\"quoted\\\".txt\""),
        "{text}"
    );
    assert!(text.contains("\"mtime_ms\":1700000000999.5,"), "{text}");
    assert!(text.contains(&hex(&sha256(b"pax"))), "{text}");
}

#[test]
fn odd_mtimes() {
    let m = map_of(&[
        ("/drop/a", b"1", f64::NAN),
        ("/drop/b", b"2", -0.0),
        ("/drop/c", b"3", 1e300),
        ("/drop/d", b"4", 5e-324),
        ("/drop/e", b"5", f64::NEG_INFINITY),
    ]);
    let back = decode_snapshot(&encode_snapshot(&m), NO_CAP).unwrap();
    assert_eq!(
        back.get("/drop/a").unwrap().mtime_ms,
        0.0,
        "non-finite is stored as 0"
    );
    assert_eq!(back.get("/drop/c").unwrap().mtime_ms, 1e300);
    assert_eq!(back.get("/drop/d").unwrap().mtime_ms, 5e-324);
    assert_eq!(back.get("/drop/e").unwrap().mtime_ms, 0.0);
    let again = encode_snapshot(&back);
    assert_eq!(decode_snapshot(&again, NO_CAP).unwrap(), back);
}

// ---------------------------------------------------------------------------------------------
// Corruption and truncation
// ---------------------------------------------------------------------------------------------

/// Changes the byte at each offset in `offsets` to each of `values(orig)`; all must be refused.
fn assert_changes_refused(
    bytes: &[u8],
    offsets: impl Iterator<Item = usize>,
    values: impl Fn(u8) -> Vec<u8>,
) -> usize {
    let mut buf = bytes.to_vec();
    let mut tried = 0;
    for i in offsets {
        let orig = bytes[i];
        for v in values(orig) {
            if v == orig {
                continue;
            }
            buf[i] = v;
            // The pieced reader is compared on one change in eight (it doubles the work).
            let back = if tried % 8 == 0 {
                decode_snapshot(&buf, NO_CAP)
            } else {
                foxden_core::snapshot::decode_snapshot(&buf, NO_CAP)
            };
            if let Ok(back) = back {
                panic!("change at offset {i} ({orig:#04x} -> {v:#04x}) was accepted: {back:?}");
            }
            tried += 1;
        }
        buf[i] = orig;
    }
    tried
}

/// Every bit flip, and a replacement by a byte that means something in tar, JSON or a path.
fn flips_and_specials(orig: u8) -> Vec<u8> {
    let mut v: Vec<u8> = (0..8).map(|b| orig ^ (1 << b)).collect();
    v.extend([0x00, 0xff, b'0', b'"']);
    v
}

// Every offset of the sample, interleaved over two tests so that they run in parallel.
#[test]
fn every_single_byte_change_is_refused_even_offsets() {
    let bytes = encode_snapshot(&sample());
    let n = bytes.len();
    assert!(assert_changes_refused(&bytes, (0..n).step_by(2), flips_and_specials) >= n / 2 * 8);
}

#[test]
fn every_single_byte_change_is_refused_odd_offsets() {
    let bytes = encode_snapshot(&sample());
    let n = bytes.len();
    assert!(assert_changes_refused(&bytes, (1..n).step_by(2), flips_and_specials) >= n / 2 * 8);
}

/// All 255 other values at one offset of each header field of each kind of header, and of
/// each other region (manifest version, body, hash line; file data; PAX records; padding; end).
#[test]
fn every_value_in_every_field_is_refused() {
    let bytes = encode_snapshot(&sample());
    let find = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
    };
    let fields = [
        0, 100, 108, 116, 124, 135, 136, 148, 154, 155, 156, 157, 257, 263, 265, 297, 329, 337,
        345, 500, 511,
    ];
    let pax_header = find(b"PaxHeaders/");
    let pax_record = find(b" path=");
    let split_header = find(b"file.txt\0");
    let plain_header = find(b"drop/sales.csv\0");
    // The file's own header follows the PAX header and its one block of records.
    let pax_file_header = pax_header / 512 * 512 + 1024;
    let mut offsets: Vec<usize> = Vec::new();
    for h in [0, plain_header, pax_header, pax_file_header, split_header] {
        let base = h / 512 * 512;
        offsets.extend(fields.iter().map(|f| base + f));
    }
    offsets.extend([
        512 + 38,                          // manifest version digit
        512 + 45,                          // manifest body
        find(b"\"manifest_sha256\"") + 20, // manifest hash
        find(b"north"),                    // file data
        find(b"north,12\n") + 9,           // padding after data
        pax_record - 2,                    // PAX record length
        pax_record + 7,                    // PAX path
        bytes.len() - 1000,                // end marker
        bytes.len() - 1,
    ]);
    let all = |_: u8| (0..=255).collect::<Vec<u8>>();
    assert!(assert_changes_refused(&bytes, offsets.into_iter(), all) > 110 * 254);
}

#[test]
fn every_truncation_is_refused() {
    for m in [FileMap::new(), sample()] {
        let bytes = encode_snapshot(&m);
        for len in 0..bytes.len() {
            let e = decode_snapshot(&bytes[..len], NO_CAP).unwrap_err();
            assert_eq!(e.code(), "truncated", "at {len}: {e}");
        }
    }
}

#[test]
fn corruption_is_reported_where_it_is() {
    let m = sample();
    let bytes = encode_snapshot(&m);
    let find = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
    };

    // File content: names the file and both hashes.
    let mut b = bytes.clone();
    let i = find(b"north,12");
    b[i] = b'N';
    let e = decode_snapshot(&b, NO_CAP).unwrap_err();
    assert_eq!(e.code(), "hash-mismatch");
    let msg = e.to_string();
    assert!(msg.contains("/drop/sales.csv"), "{msg}");
    assert!(
        msg.contains(&hex(&sha256(b"region,total\nnorth,12\n"))),
        "{msg}"
    );
    assert!(
        msg.contains(&hex(&sha256(b"region,total\nNorth,12\n"))),
        "{msg}"
    );

    // A header: the checksum catches it, with the header's offset.
    let mut b = bytes.clone();
    b[100] = b'1'; // manifest mode
    let e = decode_snapshot(&b, NO_CAP).unwrap_err();
    assert_eq!(e.code(), "checksum");
    assert!(e.to_string().contains("offset 0"), "{e}");

    // The manifest: its own hash catches it.
    let mut b = bytes.clone();
    let i = find(b"1700000000999.5");
    b[i + 12] = b'8';
    assert_eq!(code(&b), "hash-mismatch");

    // Padding after data, and the end marker.
    let mut b = bytes.clone();
    b[find(b"north,12\n") + 9] = 1;
    assert_eq!(code(&b), "format");
    let mut b = bytes.clone();
    let n = b.len();
    b[n - 200] = 1;
    assert_eq!(code(&b), "format");
    let mut b = bytes.clone();
    b[n - 700] = 1; // first end block: read as a header, whose checksum fails
    assert_eq!(code(&b), "checksum");
}

#[test]
fn tampering_with_valid_checksums_is_refused() {
    let bytes = encode_snapshot(&sample());
    // Change the manifest's mode to 0755 and fix the checksum: only canonical headers pass.
    let mut b = bytes.clone();
    b[100..108].copy_from_slice(b"0000755\0");
    spec::fix_checksum(&mut b[..512]);
    let e = decode_snapshot(&b, NO_CAP).unwrap_err();
    assert_eq!(e.code(), "format");
    assert!(e.to_string().contains("mode"), "{e}");

    // Change the manifest, fix its self-hash but not the tar entry: still refused.
    let files = [("/drop/a", &b"1"[..])];
    let ok = forged(&files, vec![spec::Entry::file("/drop/a", b"1", 0.0)]);
    assert_eq!(code(&ok), "ok");
    let bad = forged(
        &[("/drop/a", &b"2"[..])],
        vec![spec::Entry::file("/drop/a", b"1", 0.0)],
    );
    assert_eq!(code(&bad), "hash-mismatch");
}

// ---------------------------------------------------------------------------------------------
// Each check, with a snapshot forged to pass all the others
// ---------------------------------------------------------------------------------------------

#[test]
fn refuses_other_versions() {
    let list = vec![("/drop/a".to_string(), 1, 0.0, sha256(b"1"))];
    for v in [0, 2, 999] {
        let m = spec::manifest(v, &list);
        let b = spec::archive(&m, 0, &[spec::Entry::file("/drop/a", b"1", 0.0)]);
        let e = decode_snapshot(&b, NO_CAP).unwrap_err();
        assert_eq!(e.code(), "version");
        assert!(e.to_string().contains(&format!("version {v} ")), "{e}");
    }
}

#[test]
fn refuses_bad_paths() {
    for p in [
        "/etc/passwd",
        "/drop/../x",
        "/drop//a",
        "/drop",
        "/drop/a\u{7f}b",
        "/drop/./a",
        "/drop/a/",
    ] {
        let b = forged(&[(p, b"1")], vec![spec::Entry::file(p, b"1", 0.0)]);
        assert_eq!(code(&b), "path", "{p:?}");
    }
    // A newline cannot even be written in the manifest's line layout.
    let p = "/drop/a\nb";
    let b = forged(&[(p, b"1")], vec![spec::Entry::file(p, b"1", 0.0)]);
    assert_eq!(code(&b), "manifest");
    // A file that is also a folder.
    let b = forged(
        &[("/work/a", b"1"), ("/work/a/b", b"2")],
        vec![
            spec::Entry::file("/work/a", b"1", 0.0),
            spec::Entry::file("/work/a/b", b"2", 0.0),
        ],
    );
    assert_eq!(code(&b), "path");
    // An entry path that is not valid (even if the manifest is fine).
    let mut entry = spec::Entry::file("/drop/a", b"1", 0.0);
    entry.tar_path = "../../etc/passwd".into();
    assert_eq!(code(&forged(&[("/drop/a", b"1")], vec![entry])), "path");
}

#[test]
fn refuses_duplicates_missing_and_unexpected_entries() {
    let a = || spec::Entry::file("/drop/a", b"1", 0.0);
    let b = || spec::Entry::file("/drop/b", b"2", 0.0);
    let two = [("/drop/a", &b"1"[..]), ("/drop/b", &b"2"[..])];
    assert_eq!(code(&forged(&two, vec![a(), b()])), "ok");
    assert_eq!(code(&forged(&two, vec![a(), a(), b()])), "duplicate");
    assert_eq!(code(&forged(&two, vec![a(), b(), b()])), "duplicate");
    assert_eq!(
        code(&forged(
            &[("/drop/a", b"1"), ("/drop/a", b"1")],
            vec![a(), a()]
        )),
        "duplicate"
    );
    assert_eq!(code(&forged(&two, vec![a()])), "missing-entry");
    assert_eq!(code(&forged(&two, vec![b(), a()])), "format");
    assert_eq!(code(&forged(&two[..1], vec![a(), b()])), "unexpected-entry");
    let e = decode_snapshot(&forged(&two[..1], vec![a(), b()]), NO_CAP).unwrap_err();
    assert!(e.to_string().contains("/drop/b"), "{e}");
    // Not a regular file.
    let mut link = b();
    link.typeflag = b'2';
    let e = decode_snapshot(&forged(&two, vec![a(), link]), NO_CAP).unwrap_err();
    assert_eq!(e.code(), "unexpected-entry");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    // Size differs from the manifest.
    let e = decode_snapshot(&forged(&[("/drop/a", b"12")], vec![a()]), NO_CAP).unwrap_err();
    assert_eq!(e.code(), "size-mismatch");
    // First entry not the manifest.
    let mut no_manifest = Vec::new();
    spec::entry_bytes(&mut no_manifest, &a());
    no_manifest.extend([0u8; 1024]);
    assert_eq!(code(&no_manifest), "manifest");
    assert_eq!(code(&[0u8; 1024]), "manifest");
}

#[test]
fn enforces_the_size_limit_before_reading_files() {
    let m = sample();
    let bytes = encode_snapshot(&m);
    let total = m.total_bytes();
    assert!(decode_snapshot(&bytes, total).is_ok());
    let e = decode_snapshot(&bytes, total - 1).unwrap_err();
    assert_eq!(e.code(), "too-large");
    assert!(e.to_string().contains(&total.to_string()), "{e}");
    // The limit is checked from the manifest, before any file is read: a truncated archive
    // that claims too much is refused as too large.
    let cut = &bytes[..bytes.len() - 2048];
    assert_eq!(
        decode_snapshot(cut, total - 1).unwrap_err().code(),
        "too-large"
    );
}

#[test]
fn huge_size_fields_do_not_allocate() {
    // A file entry claiming 8 GiB - 1 bytes, with a valid checksum, on a tiny input.
    let mut b = forged(
        &[("/drop/a", b"1")],
        vec![spec::Entry::file("/drop/a", b"1", 0.0)],
    );
    let h = 1024; // the manifest fits one block
    b[h + 124..h + 136].copy_from_slice(b"77777777777\0");
    spec::fix_checksum(&mut b[h..h + 512]);
    assert_eq!(code(&b), "truncated");
    // The same for the manifest's own size.
    let mut b = encode_snapshot(&FileMap::new());
    b[124..136].copy_from_slice(b"77777777777\0");
    spec::fix_checksum(&mut b[..512]);
    assert_eq!(code(&b), "truncated");
}

#[test]
fn trailing_data() {
    let bytes = encode_snapshot(&sample());
    let mut b = bytes.clone();
    b.extend([0u8; 512 * 18]); // padded to a 10 KiB tar record, as some tools do
    assert_eq!(code(&b), "ok");
    let mut b = bytes.clone();
    b.extend([0u8; 100]);
    assert_eq!(code(&b), "format");
    let mut b = bytes.clone();
    b.extend(b"junk");
    assert_eq!(code(&b), "format");
    let mut b = bytes.clone();
    b.extend([0u8; 512]);
    b.push(1);
    assert_eq!(code(&b), "format");
}

#[test]
fn garbage_is_refused() {
    for b in [&b""[..], b"hello", &[0xffu8; 4096], &[0u8; 512]] {
        assert!(decode_snapshot(b, NO_CAP).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// Ordinary tools
// ---------------------------------------------------------------------------------------------

fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let d = std::env::temp_dir().join(format!(
        "foxden-snapshot-{tag}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .expect("`tar` must be installed to run this test");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?} failed: {stderr}");
    assert!(stderr.trim().is_empty(), "{cmd:?} warned: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn system_tar_lists_and_extracts() {
    let m = sample();
    let dir = temp_dir("tar");
    let file = dir.join("den.tar");
    std::fs::write(&file, encode_snapshot(&m)).unwrap();

    let listing = run(Command::new("tar").arg("-tvf").arg(&file));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 1 + m.len(), "{listing}");
    assert!(lines[0].contains(MANIFEST_NAME), "{listing}");
    assert!(lines[0].starts_with("-rw-r--r--"), "{listing}");
    for p in ["drop/sales.csv", "drop/empty", "out/bin.dat"] {
        assert!(lines.iter().any(|l| l.ends_with(p)), "{p} in {listing}");
    }

    let out = dir.join("x");
    std::fs::create_dir_all(&out).unwrap();
    run(Command::new("tar")
        .arg("-xf")
        .arg(&file)
        .arg("-C")
        .arg(&out));
    let manifest = std::fs::read_to_string(out.join(MANIFEST_NAME)).unwrap();
    assert!(manifest.contains("\"version\":1"));
    for (p, e) in m.iter() {
        let on_disk = out.join(&p[1..]);
        assert_eq!(std::fs::read(&on_disk).unwrap(), &*e.data, "{p}");
        let mtime = std::fs::metadata(&on_disk)
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert_eq!(mtime, spec::mtime_secs(e.mtime_ms), "{p}");
    }
    let count = walk(&out);
    assert_eq!(count, m.len() + 1, "no other files were extracted");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(&e.path())
            } else {
                1
            }
        })
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Properties on random dens
// ---------------------------------------------------------------------------------------------

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z0-9_.-]{1,12}",
        2 => "[a-zé ü漢\"'#=-]{1,10}",
        1 => "[a-z]{90,255}",
    ]
    .prop_filter("not . or ..", |s| s != "." && s != "..")
}

fn den_path() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just("drop"), Just("out"), Just("work")],
        prop::collection::vec(segment(), 1..5),
    )
        .prop_map(|(root, segs)| format!("/{root}/{}", segs.join("/")))
        .prop_filter("at most 1024 bytes", |p| p.len() <= 1024)
}

fn mtime() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u64..5_000_000_000_000).prop_map(|v| v as f64),
        (-1e15f64..1e15f64),
        Just(0.0),
    ]
}

fn den() -> impl Strategy<Value = FileMap> {
    prop::collection::vec(
        (
            den_path(),
            prop::collection::vec(any::<u8>(), 0..700),
            mtime(),
        ),
        0..8,
    )
    .prop_map(|files| {
        let mut m = FileMap::new();
        for (p, d, t) in files {
            // A path that conflicts with an earlier one (file vs folder) is skipped.
            let _ = m.apply(
                vec![Op::Put {
                    path: p,
                    entry: FileEntry::new(d, t),
                }],
                NO_CAP,
            );
        }
        m
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn round_trip(m in den()) {
        let bytes = encode_snapshot(&m);
        prop_assert_eq!(bytes.len() % 512, 0);
        let back = decode_snapshot(&bytes, m.total_bytes()).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(encode_snapshot(&back), bytes.clone());
        prop_assert_eq!(spec::snapshot(&files_of(&m)), bytes);
    }

    #[test]
    fn random_corruption_is_refused(m in den(), at in any::<prop::sample::Index>(), x in 1u8..=255) {
        let mut bytes = encode_snapshot(&m);
        let i = at.index(bytes.len());
        bytes[i] ^= x;
        prop_assert!(decode_snapshot(&bytes, NO_CAP).is_err(), "change at {} accepted", i);
    }

    #[test]
    fn random_truncation_is_refused(m in den(), at in any::<prop::sample::Index>()) {
        let bytes = encode_snapshot(&m);
        let len = at.index(bytes.len());
        let e = decode_snapshot(&bytes[..len], NO_CAP).unwrap_err();
        prop_assert_eq!(e.code(), "truncated");
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..3000), cap in any::<u64>()) {
        let _ = decode_snapshot(&data, cap);
    }
}

#[test]
fn more_files_than_a_den_holds_are_refused_before_any_is_read() {
    let names: Vec<String> = (0..10_001).map(|i| format!("/work/{i:05}")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    let entries = names
        .iter()
        .map(|n| spec::Entry::file(n, b"", 0.0))
        .collect();
    let e = decode_snapshot(&forged(&files, entries), NO_CAP).unwrap_err();
    assert_eq!(e.code(), "manifest", "{e}");
    assert!(
        e.to_string().contains("10001 files, more than the 10000"),
        "{e}"
    );
}

#[test]
fn a_manifest_longer_than_any_den_needs_is_refused_before_it_is_copied() {
    // The manifest's header claims 64 MiB, and the input really is that long.
    let mut b = encode_snapshot(&FileMap::new());
    let claimed: u64 = 64 << 20;
    spec::octal(&mut b[124..136], claimed);
    spec::fix_checksum(&mut b[..512]);
    b.resize(512 + claimed as usize + 1024, 0);
    let e = decode_snapshot(&b, NO_CAP).unwrap_err();
    assert_eq!(e.code(), "manifest", "{e}");
    assert!(
        e.to_string()
            .contains("more than the manifest of a den's most files can be"),
        "{e}"
    );
}

#[test]
fn an_extended_header_longer_than_a_path_needs_is_refused() {
    let m = map_of(&[(&pax_path(), b"x", 0.0)]);
    let mut b = encode_snapshot(&m);
    // The file's PAX header comes after the manifest entry; give it a 1 MiB size.
    let pos = (0..b.len())
        .step_by(512)
        .find(|&p| b[p + 156] == b'x' && &b[p + 257..p + 263] == b"ustar\0")
        .unwrap();
    spec::octal(&mut b[pos + 124..pos + 136], 1 << 20);
    spec::fix_checksum(&mut b[pos..pos + 512]);
    let e = decode_snapshot(&b, NO_CAP).unwrap_err();
    assert_eq!(e.code(), "format", "{e}");
    assert!(e.to_string().contains("more than a den path needs"), "{e}");
}

/// A manifest of a million empty lines, hashed correctly, is refused after file_count lines,
/// without collecting the lines first (the old decoder reserved 64 bytes per line: 25 MB of
/// newlines, under the manifest cap, asked for 1.6 GB).
#[test]
fn refuses_more_file_lines_than_file_count_without_reading_them_all() {
    let mut s = String::from(
        "{\"format\":\"foxden-snapshot\",\"version\":1,\n\"file_count\":0,\"total_bytes\":0,\n\"files\":[\n",
    );
    s.push_str(&"\n".repeat(1_000_000));
    s.push_str("],\n");
    let digest = hex(&sha256(s.as_bytes()));
    s += &format!("\"manifest_sha256\":\"{digest}\"}}\n");
    let b = spec::archive(s.as_bytes(), 0, &[]);
    let e = decode_snapshot(&b, NO_CAP).unwrap_err();
    assert_eq!(e.code(), "manifest");
    assert!(
        e.to_string()
            .contains("file_count is 0, but it lists more files"),
        "{e}"
    );
    // With a count, the first bad line is named.
    let s = s.replace("\"file_count\":0", "\"file_count\":3");
    let body_end = s.find("\"manifest_sha256\"").unwrap_or(0);
    let body = &s[..body_end];
    let fixed = format!(
        "{body}\"manifest_sha256\":\"{}\"}}\n",
        hex(&sha256(body.as_bytes()))
    );
    let e = decode_snapshot(&spec::archive(fixed.as_bytes(), 0, &[]), NO_CAP).unwrap_err();
    assert!(e.to_string().contains("file line 1 is malformed"), "{e}");
}

/// The pieces a caller writes one by one are the encoder's bytes, the files' contents shared.
#[test]
fn snapshot_pieces_are_the_encoded_bytes() {
    use foxden_core::snapshot::{snapshot_pieces, Piece};
    use foxden_core::{FileEntry, FileMap, Op};
    let mut m = FileMap::new();
    let long = format!("/work/{}/x.bin", "d".repeat(150));
    for (p, d) in [
        ("/drop/a.csv", &b"a,b\n1,2\n"[..]),
        ("/work/empty", b""),
        (long.as_str(), &[7u8; 1000][..]),
    ] {
        m.apply(
            vec![Op::Put {
                path: p.into(),
                entry: FileEntry::new(d.to_vec(), 1_700_000_000_123.0),
            }],
            1 << 20,
        )
        .unwrap();
    }
    let pieces = snapshot_pieces(&m);
    let mut joined = Vec::new();
    for p in &pieces {
        match p {
            Piece::Bytes(b) => joined.extend_from_slice(b),
            Piece::File(d) => joined.extend_from_slice(d),
            Piece::Zeros(n) => joined.resize(joined.len() + n, 0),
        }
    }
    assert_eq!(joined, encode_snapshot(&m));
    assert!(pieces.iter().all(|p| !p.is_empty()));
    // The files' bytes are borrowed, not copied.
    let shared = pieces.iter().filter_map(|p| match p {
        Piece::File(d) => Some(d.as_ptr()),
        _ => None,
    });
    let held: Vec<*const u8> = m
        .iter()
        .filter(|(_, e)| !e.data.is_empty())
        .map(|(_, e)| e.data.as_ptr())
        .collect();
    assert_eq!(shared.collect::<Vec<_>>(), held);
}
