#![no_main]
//! The snapshot codec never panics; what it accepts is exactly what it would write; and a den
//! built from the input round-trips, while one changed byte or a truncation is refused.
use foxden_core::snapshot::{decode_snapshot, encode_snapshot};
use foxden_core::{FileEntry, FileMap, Op};
use libfuzzer_sys::fuzz_target;

/// Raw bytes: decode must not panic; if it accepts, the input is the canonical encoding of
/// what it returned, followed only by whole zero blocks.
fn raw(data: &[u8]) {
    let cap = data.len() as u64 / 2;
    if let Ok(map) = decode_snapshot(data, cap) {
        let again = encode_snapshot(&map);
        assert!(
            data.starts_with(&again),
            "accepted a non-canonical snapshot"
        );
        let rest = &data[again.len()..];
        assert!(rest.len() % 512 == 0 && rest.iter().all(|&b| b == 0));
        assert!(map.total_bytes() <= cap);
    }
}

/// Builds a den from the input: records separated by 0xff, each `<path>\0<content>`.
fn den(data: &[u8]) -> FileMap {
    let mut map = FileMap::new();
    for (i, record) in data.split(|&b| b == 0xff).enumerate() {
        let (path, content) = match record.iter().position(|&b| b == 0) {
            Some(p) => (&record[..p], &record[p + 1..]),
            None => (record, &[][..]),
        };
        let root = ["/drop/", "/out/", "/work/"][i % 3];
        let path = format!("{root}{}", String::from_utf8_lossy(path));
        let mtime = (i as f64) * 1_234_567.125;
        // Invalid or conflicting paths are refused by the map; skip them.
        let _ = map.apply(
            vec![Op::Put {
                path,
                entry: FileEntry::new(content.to_vec(), mtime),
            }],
            u64::MAX,
        );
    }
    map
}

fn structured(selector: &[u8], data: &[u8]) {
    let map = den(data);
    let bytes = encode_snapshot(&map);
    let back = decode_snapshot(&bytes, map.total_bytes()).expect("round trip");
    assert_eq!(back, map);
    if map.total_bytes() > 0 {
        assert!(decode_snapshot(&bytes, map.total_bytes() - 1).is_err());
    }
    let pick = u64::from_le_bytes(selector[..8].try_into().expect("8 bytes"));
    let at = (pick % bytes.len() as u64) as usize;
    let x = selector[8].max(1);
    let mut bad = bytes.clone();
    bad[at] ^= x;
    assert!(
        decode_snapshot(&bad, u64::MAX).is_err(),
        "change at offset {at} accepted"
    );
    assert!(decode_snapshot(&bytes[..at], u64::MAX).is_err());
}

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((0, rest)) if rest.len() >= 9 => structured(&rest[..9], &rest[9..]),
        _ => raw(data),
    }
});
