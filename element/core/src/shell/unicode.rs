//! Characters the way glibc sees them in the C.UTF-8 locale: decoding (which byte
//! sequences are characters), `iswprint`, `iswspace`, `towupper`/`towlower`, and the
//! case variants GNU grep matches under `-i`.

use super::tables;

/// One decoded unit of a byte string: a character, or a byte that is not part of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    /// A character as glibc's `mbrtowc` decodes it (may be above U+10FFFF: glibc accepts
    /// the old 5- and 6-byte forms).
    Char(u32),
    /// A byte that starts no valid character (an encoding error).
    Byte(u8),
}

/// Decodes the unit at the start of `b` (which must not be empty); returns it and its length.
///
/// Follows glibc's UTF-8 decoder: no overlong forms, no surrogates, but sequences of up
/// to 6 bytes (values up to 0x7FFFFFFF) are characters. A truncated sequence is an error
/// on its first byte.
pub(super) fn decode(b: &[u8]) -> (Unit, usize) {
    let b0 = b[0];
    if b0 < 0x80 {
        return (Unit::Char(u32::from(b0)), 1);
    }
    // (length, allowed range of the second byte)
    let (n, lo, hi): (usize, u8, u8) = match b0 {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF7 => (4, 0x80, 0xBF),
        0xF8 => (5, 0x88, 0xBF),
        0xF9..=0xFB => (5, 0x80, 0xBF),
        0xFC => (6, 0x84, 0xBF),
        0xFD => (6, 0x80, 0xBF),
        _ => return (Unit::Byte(b0), 1),
    };
    if b.len() < n || !(lo..=hi).contains(&b[1]) {
        return (Unit::Byte(b0), 1);
    }
    if b[2..n].iter().any(|&c| !(0x80..=0xBF).contains(&c)) {
        return (Unit::Byte(b0), 1);
    }
    let mask: u8 = 0x7F >> n;
    let mut v = u32::from(b0 & mask);
    for &c in &b[1..n] {
        v = (v << 6) | u32::from(c & 0x3F);
    }
    (Unit::Char(v), n)
}

/// True when the bytes hold an encoding error (what GNU grep calls binary data in a line).
pub(super) fn has_encoding_error(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        if b[i] < 0x80 {
            i += 1;
            continue;
        }
        match decode(&b[i..]) {
            (Unit::Byte(_), _) => return true,
            (Unit::Char(_), n) => i += n,
        }
    }
    false
}

/// glibc `iswprint` in C.UTF-8.
pub(super) fn is_print(c: u32) -> bool {
    let t = tables::PRINT;
    match t.binary_search_by(|&(a, _)| a.cmp(&c)) {
        Ok(_) => true,
        Err(0) => false,
        Err(i) => c <= t[i - 1].1,
    }
}

/// glibc `iswspace` in C.UTF-8.
pub(super) fn is_space(c: u32) -> bool {
    tables::SPACE.binary_search(&c).is_ok()
}

fn map(t: &[(u32, u16, u8, i32)], c: u32) -> u32 {
    let i = match t.binary_search_by(|&(s, ..)| s.cmp(&c)) {
        Ok(i) => i,
        Err(0) => return c,
        Err(i) => i - 1,
    };
    let (start, count, stride, delta) = t[i];
    let off = c - start;
    let stride = u32::from(stride);
    let k = off / stride;
    if k * stride == off && k < u32::from(count) {
        c.wrapping_add_signed(delta)
    } else {
        c
    }
}

/// glibc `towupper` in C.UTF-8.
pub(super) fn to_upper(c: u32) -> u32 {
    map(tables::UPPER, c)
}

/// glibc `towlower` in C.UTF-8.
pub(super) fn to_lower(c: u32) -> u32 {
    map(tables::LOWER, c)
}

/// Lower-case characters whose upper case does not map back to them; GNU grep (through
/// gnulib's `case_folded_counterparts`) adds them to the case variants of their upper case.
const LONESOME_LOWER: [u32; 18] = [
    0x00B5, 0x0131, 0x017F, 0x01C5, 0x01C8, 0x01CB, 0x01F2, 0x0345, 0x03C2, 0x03D0, 0x03D1, 0x03D5,
    0x03D6, 0x03F0, 0x03F1, 0x03F5, 0x1E9B, 0x1FBE,
];

/// The characters a pattern character `c` matches under `grep -i` (always includes `c`).
///
/// This relation is not symmetric: `ᲀ` (U+1C80) matches `в` but `в` does not match `ᲀ`,
/// exactly as in GNU grep 3.8.
pub(super) fn case_variants(c: u32) -> Vec<u32> {
    let mut out = vec![c];
    let uc = to_upper(c);
    let lc = to_lower(uc);
    if uc != c {
        out.push(uc);
    }
    if lc != uc && lc != c && to_upper(lc) == uc {
        out.push(lc);
    }
    for li in LONESOME_LOWER {
        if li != lc && li != uc && li != c && to_upper(li) == uc {
            out.push(li);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_follows_glibc() {
        assert_eq!(decode(b"a"), (Unit::Char(97), 1));
        assert_eq!(decode("é".as_bytes()), (Unit::Char(0xE9), 2));
        assert_eq!(decode("😀".as_bytes()), (Unit::Char(0x1F600), 4));
        assert_eq!(decode(b"\xC0\x80"), (Unit::Byte(0xC0), 1));
        assert_eq!(decode(b"\xE0\x80\x80"), (Unit::Byte(0xE0), 1));
        assert_eq!(decode(b"\xED\xA0\x80"), (Unit::Byte(0xED), 1));
        assert_eq!(decode(b"\xF4\x90\x80\x80"), (Unit::Char(0x110000), 4));
        assert_eq!(decode(b"\xF8\x88\x80\x80\x80"), (Unit::Char(0x200000), 5));
        assert_eq!(
            decode(b"\xFD\xBF\xBF\xBF\xBF\xBF"),
            (Unit::Char(0x7FFF_FFFF), 6)
        );
        assert_eq!(decode(b"\xFC\x83\xBF\xBF\xBF\xBF"), (Unit::Byte(0xFC), 1));
        assert_eq!(decode(b"\xE1\x80"), (Unit::Byte(0xE1), 1));
        assert_eq!(decode(b"\xFF"), (Unit::Byte(0xFF), 1));
        assert!(has_encoding_error(b"a\xFFb"));
        assert!(!has_encoding_error("aé\u{10FFFF}".as_bytes()));
    }

    #[test]
    fn classes_and_case() {
        assert!(is_print(0x20) && is_print(0xE9) && !is_print(0x2028) && !is_print(0x7F));
        assert!(is_space(0x3000) && !is_space(0xA0));
        assert_eq!(to_upper(u32::from('a')), u32::from('A'));
        assert_eq!(to_lower(0x212A), u32::from('k'));
        assert_eq!(to_upper(0x212A), 0x212A);
        assert_eq!(to_upper(0x0131), u32::from('I'));
        let mut v = case_variants(u32::from('i'));
        v.sort_unstable();
        assert_eq!(v, vec![u32::from('I'), u32::from('i'), 0x0131]);
        assert_eq!(case_variants(0x212A), vec![0x212A]);
        let mut v = case_variants(0x1C80);
        v.sort_unstable();
        assert_eq!(v, vec![0x0412, 0x0432, 0x1C80]);
        assert_eq!(case_variants(0x0432).len(), 2);
    }
}
