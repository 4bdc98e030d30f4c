//! Decimal text to `f64`, correctly rounded, without the standard library's parser.
//!
//! `str::parse::<f64>` carries a 10 KB table of powers of five (Eisel-Lemire) and its slow path:
//! about 15 KB of the gzipped wasm module, for the few numbers foxden reads from text (a
//! snapshot's `mtime_ms`, number attributes, a `Content-Length`). [`parse_f64`] gives the same
//! value for every finite decimal: a fast exact path for short numbers (Clinger's), else an
//! estimate in `f64` arithmetic that is corrected one step at a time by comparing the decimal
//! with the halfway points between neighbouring doubles exactly, in big integers (ties to even).
//! It is compared with the standard parser in the tests below (every finite double's shortest
//! and exponent forms, and random decimals).

use std::cmp::Ordering;

/// Parses `[+-]digits[.digits][(e|E)[+-]digits]` (at least one digit before or after the
/// point) as the nearest `f64`, ties to even. `None` for anything else, and for a value whose
/// magnitude rounds to infinity; `inf` and `nan` are not accepted.
pub fn parse_f64(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let (negative, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    // Significant digits (leading zeros dropped) and the power of ten they are scaled by.
    let mut digits: Vec<u8> = Vec::new();
    let mut exp: i64 = 0;
    let mut seen = false;
    while i < b.len() && b[i].is_ascii_digit() {
        seen = true;
        if !(digits.is_empty() && b[i] == b'0') {
            digits.push(b[i] - b'0');
        }
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            seen = true;
            if !(digits.is_empty() && b[i] == b'0') {
                digits.push(b[i] - b'0');
            }
            exp -= 1;
            i += 1;
        }
    }
    if !seen {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let sign = match b.get(i) {
            Some(b'-') => {
                i += 1;
                -1
            }
            Some(b'+') => {
                i += 1;
                1
            }
            _ => 1,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            // Saturates far beyond any exponent that could matter.
            e = (e * 10 + i64::from(b[i] - b'0')).min(1 << 40);
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += sign * e;
    }
    if i != b.len() {
        return None;
    }
    let magnitude = magnitude(&mut digits, exp)?;
    Some(if negative { -magnitude } else { magnitude })
}

/// `v` as the standard library's `{}` writes it: the fewest significant digits that read back
/// as `v` ([`parse_f64`]), written out without an exponent (`1700000000999.5`, `0.001`, `-0`,
/// `1e300` as `1` and 300 zeros); `NaN`, `inf`, `-inf`. Like [`parse_f64`], it spares the
/// wasm module the standard library's float formatting (Grisu with a Dragon4 fallback, about
/// 6 KB gzipped): the exact decimal expansion of `v` is rounded to 1, 2, … digits until one
/// reads back; of the two numbers of that length around `v`, the nearer is tried first, as the
/// standard library chooses (the tests compare the two).
pub fn show(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let a = v.abs();
    if a.is_infinite() {
        return format!("{sign}inf");
    }
    if a.fract() == 0.0 && a < 9_007_199_254_740_992.0 {
        // Below 2^53 every whole number is a double and its neighbours are at most 1 away.
        return format!("{sign}{}", a as u64);
    }
    let (digits, exp) = exact_decimal(a);
    let reads_back = |(kept, e): &(Vec<u8>, i64)| {
        let mut text = digit_text(kept);
        text.push('e');
        text.push_str(&e.to_string());
        parse_f64(&text).map(f64::to_bits) == Some(a.to_bits())
    };
    let mut n = 1;
    let (kept, exp) = loop {
        if n >= digits.len() {
            break round_digits(&digits, exp, n, false); // all of them: exact
        }
        // The two numbers of n digits around `a`, the nearer first (ties away from zero, as
        // the standard library's shortest form). Next to a power of two the double below is
        // twice as near, so the farther one may read back when the nearer does not.
        let up = digits[n] >= 5;
        let nearer = round_digits(&digits, exp, n, up);
        if reads_back(&nearer) {
            break nearer;
        }
        let farther = round_digits(&digits, exp, n, !up);
        if reads_back(&farther) {
            break farther;
        }
        n += 1;
    };
    let mut out = String::from(sign);
    positional(&mut out, &kept, exp);
    out
}

/// The exact decimal of a finite, non-negative double: its digits (no leading zeros; `[]` for
/// zero) and the power of ten they are scaled by.
fn exact_decimal(a: f64) -> (Vec<u8>, i64) {
    let (m, e) = split(a);
    let mut n = Big::from_u128(u128::from(m));
    if e >= 0 {
        n.shl(e as u32);
    } else {
        // m / 2^k = m × 5^k / 10^k
        let mut k = e.unsigned_abs();
        while k > 0 {
            let step = k.min(13); // 5^13 < 2^32
            n.mul_add(5u32.pow(step), 0);
            k -= step;
        }
    }
    let mut digits = Vec::new();
    while !n.0.is_empty() {
        let mut chunk = n.div_small(1_000_000_000);
        for _ in 0..9 {
            digits.push((chunk % 10) as u8);
            chunk /= 10;
        }
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    digits.reverse();
    (digits, i64::from(e.min(0)))
}

/// `digits × 10^exp` cut to `n` significant digits, plus one unit in the last place if `up`,
/// trailing zeros dropped.
fn round_digits(digits: &[u8], exp: i64, n: usize, up: bool) -> (Vec<u8>, i64) {
    let mut kept: Vec<u8> = digits[..n.min(digits.len())].to_vec();
    let mut exp = exp + (digits.len() - kept.len()) as i64;
    if up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                kept.pop();
                exp += 1;
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    while kept.last() == Some(&0) {
        kept.pop();
        exp += 1;
    }
    (kept, exp)
}

/// Decimal digits (0..=9) as text.
fn digit_text(digits: &[u8]) -> String {
    digits.iter().map(|&d| char::from(b'0' + d)).collect()
}

/// Writes `digits × 10^exp` without an exponent.
fn positional(out: &mut String, digits: &[u8], exp: i64) {
    if digits.is_empty() {
        out.push('0');
    } else if exp >= 0 {
        out.push_str(&digit_text(digits));
        out.extend(std::iter::repeat_n('0', exp as usize));
    } else {
        let point = digits.len() as i64 + exp;
        if point > 0 {
            out.push_str(&digit_text(&digits[..point as usize]));
            out.push('.');
            out.push_str(&digit_text(&digits[point as usize..]));
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            out.push_str(&digit_text(digits));
        }
    }
}

/// The nearest double to `digits × 10^exp` (digits without leading zeros), or `None` if it
/// rounds to infinity.
fn magnitude(digits: &mut Vec<u8>, mut exp: i64) -> Option<f64> {
    while digits.last() == Some(&0) {
        digits.pop();
        exp += 1;
    }
    if digits.is_empty() {
        return Some(0.0);
    }
    // A halfway point between two doubles has at most 767 significant digits: past 800, only
    // whether any dropped digit is non-zero can matter (kept as a final 1), and the big
    // integers below stay small whatever the text's length.
    if digits.len() > MAX_DIGITS {
        let sticky = digits[MAX_DIGITS..].iter().any(|&d| d != 0);
        exp += (digits.len() - MAX_DIGITS) as i64;
        digits.truncate(MAX_DIGITS);
        if sticky {
            digits.push(1);
            exp -= 1;
        }
    }
    // Far outside the range of doubles: 10^-343 is below half the smallest subnormal, and
    // 10^310 is above the largest double.
    let scale = exp + digits.len() as i64; // the value is in [10^(scale-1), 10^scale)
    if scale < -343 {
        return Some(0.0);
    }
    if scale > 310 {
        return None;
    }
    let exp = exp as i32;
    // Exact: at most 15 digits (below 2^53) times an exact power of ten, one rounding.
    if digits.len() <= 15 && exp.abs() <= 22 {
        let m = digits.iter().fold(0u64, |m, &d| m * 10 + u64::from(d)) as f64;
        let p = POW10[exp.unsigned_abs() as usize];
        return Some(if exp < 0 { m / p } else { m * p });
    }
    // An estimate from the first 19 digits, then corrected against the exact value.
    let lead = digits.len().min(19);
    let m = digits[..lead]
        .iter()
        .fold(0u64, |m, &d| m * 10 + u64::from(d)) as f64;
    let e = exp + (digits.len() - lead) as i32;
    let half = e / 2;
    let estimate = m * 10f64.powi(half) * 10f64.powi(e - half);
    let mut x = if estimate.is_finite() {
        estimate
    } else {
        f64::MAX
    };
    let value = Exact::new(digits, exp);
    loop {
        // The halfway point to the next double up (for f64::MAX, to 2^1024).
        let up = match value.cmp_mid(x, next_up(x)) {
            Ordering::Less => false,
            Ordering::Equal => x.to_bits() & 1 == 1,
            Ordering::Greater => true,
        };
        if up {
            if x == f64::MAX {
                return None;
            }
            x = next_up(x).0;
            continue;
        }
        if x > 0.0 {
            let below = f64::from_bits(x.to_bits() - 1);
            let down = match value.cmp_mid(below, (x, false)) {
                Ordering::Less => true,
                Ordering::Equal => x.to_bits() & 1 == 1,
                Ordering::Greater => false,
            };
            if down {
                x = below;
                continue;
            }
        }
        return Some(x);
    }
}

/// The double after `x` (finite, not negative), and whether it is 2^1024 (past f64::MAX).
fn next_up(x: f64) -> (f64, bool) {
    if x == f64::MAX {
        (x, true)
    } else {
        (f64::from_bits(x.to_bits() + 1), false)
    }
}

/// `x` (finite, not negative) as `mantissa × 2^exponent`.
fn split(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    }
}

/// Significant digits kept (see [`magnitude`]).
const MAX_DIGITS: usize = 800;

/// `10^0 ..= 10^22`, all exact in `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The decimal `digits × 10^exp`, kept exactly.
struct Exact {
    digits: Big,
    exp: i32,
}

impl Exact {
    fn new(digits: &[u8], exp: i32) -> Self {
        let mut n = Big::default();
        for &d in digits {
            n.mul_add(10, u32::from(d));
        }
        Exact { digits: n, exp }
    }

    /// Compares the decimal with the point halfway between `low` and `high` (adjacent finite
    /// doubles, not negative; `high.1` means `high` is 2^1024).
    fn cmp_mid(&self, low: f64, high: (f64, bool)) -> Ordering {
        let (ml, el) = split(low);
        let (mh, eh) = if high.1 {
            (1u64 << 52, 972)
        } else {
            split(high.0)
        };
        // mid = (ml·2^(el-m) + mh·2^(eh-m)) · 2^(m-1), adjacent doubles differ by one exponent.
        let m = el.min(eh);
        let sum = (u128::from(ml) << (el - m)) + (u128::from(mh) << (eh - m));
        let mut left = self.digits.clone();
        let mut right = Big::from_u128(sum);
        if self.exp >= 0 {
            left.mul_pow10(self.exp as u32);
        } else {
            right.mul_pow10(self.exp.unsigned_abs());
        }
        let p = m - 1;
        if p >= 0 {
            right.shl(p as u32);
        } else {
            left.shl(p.unsigned_abs());
        }
        left.cmp(&right)
    }
}

/// A non-negative big integer, 32-bit limbs, least significant first, no high zero limbs.
#[derive(Clone, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u128(mut v: u128) -> Self {
        let mut n = Big::default();
        while v > 0 {
            n.0.push(v as u32);
            v >>= 32;
        }
        n
    }

    /// `self = self × m + a`.
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// `self = self / d`, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*limb);
            *limb = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        rem as u32
    }

    fn mul_pow10(&mut self, mut e: u32) {
        while e >= 9 {
            self.mul_add(1_000_000_000, 0);
            e -= 9;
        }
        self.mul_add(10u32.pow(e), 0);
    }

    fn shl(&mut self, bits: u32) {
        if self.0.is_empty() {
            return;
        }
        let (limbs, bits) = ((bits / 32) as usize, bits % 32);
        if bits > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = (*limb << bits) | carry;
                carry = *limb >> (32 - bits);
                *limb = v;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the standard parser gives, with foxden's refusals of infinity.
    fn std_parse(s: &str) -> Option<f64> {
        s.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    fn same(s: &str) {
        let ours = parse_f64(s);
        let theirs = std_parse(s);
        assert_eq!(
            ours.map(f64::to_bits),
            theirs.map(f64::to_bits),
            "{s:?}: ours {ours:?}, std {theirs:?}"
        );
    }

    #[test]
    fn edge_cases_match_the_standard_parser() {
        for s in [
            "0", "-0", "+0", "0.0", ".5", "5.", "-.5", "1e3", "1E3", "1e+3", "1e-3", "007", "1.50",
            "1700000000123", "1700000000999.5", "-1700000000123.25", "9007199254740993",
            "9007199254740992.5", "123456789012345678901234567890",
            "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
            "2.2250738585072011e-308", "2.2250738585072014e-308", "4.9406564584124654e-324",
            "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
            "1e400", "1e-400", "0e999999999999", "1e-99999999999999", "0.1", "0.3",
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368",
            "0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000005",
        ] {
            same(s);
        }
    }

    /// `show` against the standard library's `{}`: the same text, and it reads back.
    fn shows_like_std(v: f64) {
        let ours = show(v);
        let theirs = format!("{v}");
        assert_eq!(ours, theirs, "{v:e}");
        if v.is_finite() {
            assert_eq!(
                parse_f64(&ours).map(f64::to_bits),
                Some(v.to_bits()),
                "{ours}"
            );
        }
    }

    #[test]
    fn shows_numbers_as_the_standard_library_does() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            0.1,
            0.3,
            1.5,
            1e-7,
            123.456,
            1700000000123.0,
            1700000000999.5,
            -1700000000123.25,
            9007199254740992.0,
            9007199254740993.0,
            18446744073709551616.0,
            1e21,
            1e22,
            1e23,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::from_bits(0x000f_ffff_ffff_ffff), // the largest subnormal
            0.1 + 0.2,
            2.5,
            1234.5e-10,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            shows_like_std(v);
        }
        assert_eq!(show(1700000000999.5), "1700000000999.5");
        // Next to a power of two the double below is twice as near as the one above.
        let subnormal = (0..52).map(|k| 1u64 << k);
        let normal = (1..2047u64).map(|e| e << 52);
        for bits in subnormal.chain(normal) {
            for b in [bits - 1, bits, bits + 1] {
                shows_like_std(f64::from_bits(b));
            }
        }
        assert_eq!(show(-0.0), "-0");
        assert_eq!(show(0.001), "0.001");
    }

    #[test]
    fn refuses_what_is_not_a_decimal() {
        for s in [
            "", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "1 ", " 1", "inf", "NaN", "infinity",
            "0x10", "1_000", "--1", "1e5e5", "١",
        ] {
            assert_eq!(parse_f64(s), None, "{s:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]
        #[test]
        fn every_double_round_trips(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite());
            // The shortest form foxden writes (Display), and the exponent form.
            for s in [format!("{v}"), format!("{v:e}"), format!("{v:.3e}"), format!("{v:.25e}")] {
                same(&s);
            }
            prop_assert_eq!(parse_f64(&format!("{v}")).map(f64::to_bits), Some(bits));
        }

        #[test]
        fn shows_every_double(bits in any::<u64>()) {
            shows_like_std(f64::from_bits(bits));
        }

        #[test]
        fn shows_short_decimals(int in 0u64..10_000_000_000_000, frac in 0u32..1000) {
            shows_like_std(int as f64 + f64::from(frac) / 1000.0);
        }

        #[test]
        fn random_decimals_match(int in "[0-9]{0,30}", frac in "[0-9]{0,30}", e in -400i32..400, neg: bool) {
            prop_assume!(!(int.is_empty() && frac.is_empty()));
            let s = format!("{}{int}.{frac}e{e}", if neg { "-" } else { "" });
            same(&s);
        }

        #[test]
        fn halfway_points_round_to_even(bits in any::<u64>()) {
            let v = f64::from_bits(bits & !(1 << 63));
            prop_assume!(v.is_finite() && v < f64::MAX);
            // The exact decimal of the midpoint between v and the next double.
            let (ml, el) = split(v);
            let (mh, eh) = split(f64::from_bits(v.to_bits() + 1));
            let m = el.min(eh);
            let sum = (u128::from(ml) << (el - m)) + (u128::from(mh) << (eh - m));
            // sum · 2^(m-1) in decimal: sum · 5^(1-m) · 10^(m-1) when m < 1.
            let mut n = Big::from_u128(sum);
            let p = m - 1;
            let s = if p >= 0 {
                n.shl(p as u32);
                n.to_decimal()
            } else {
                for _ in 0..p.unsigned_abs() { n.mul_add(5, 0); }
                format!("{}e{p}", n.to_decimal())
            };
            same(&s);
        }
    }

    impl Big {
        fn to_decimal(&self) -> String {
            let mut limbs = self.0.clone();
            let mut out = Vec::new();
            while !limbs.is_empty() {
                let mut rem = 0u64;
                for limb in limbs.iter_mut().rev() {
                    let v = (rem << 32) | u64::from(*limb);
                    *limb = (v / 10) as u32;
                    rem = v % 10;
                }
                out.push(b'0' + rem as u8);
                while limbs.last() == Some(&0) {
                    limbs.pop();
                }
            }
            if out.is_empty() {
                out.push(b'0');
            }
            out.reverse();
            String::from_utf8(out).unwrap_or_default()
        }
    }
}
