//! `echo [-neE]... [STRING]...`: GNU coreutils `echo` (not the dash builtin): `-n` no
//! final newline, `-e` backslash escapes, `-E` none (the default). An argument is an
//! option only if it is `-` followed by `n`, `e`, `E` letters only; the first other
//! argument ends options. `--help` and `--version` are not supported.

use super::{Command, Io};

pub(super) fn prepare(args: &[String]) -> Result<Command, String> {
    if args.len() == 1 && (args[0] == "--help" || args[0] == "--version") {
        return Err(format!(
            "den.sh: echo: unsupported option '{}' (supported: -n, -e, -E)\n",
            args[0]
        ));
    }
    Ok(Command::Echo(args.to_vec()))
}

fn is_option(a: &str) -> bool {
    a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
}

pub(super) fn run(args: &[String], io: &mut Io) -> i32 {
    let mut newline = true;
    let mut escapes = false;
    let mut i = 0;
    while i < args.len() && is_option(&args[i]) {
        for c in args[i][1..].chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        i += 1;
    }
    let mut out = Vec::new();
    for (k, a) in args[i..].iter().enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        if !escapes {
            out.extend_from_slice(a.as_bytes());
            continue;
        }
        if expand(a.as_bytes(), &mut out) {
            // \c: stop here, no newline.
            io.out(&out);
            return 0;
        }
    }
    if newline {
        out.push(b'\n');
    }
    io.out(&out);
    0
}

/// Expands `echo -e` escapes into `out`; true when `\c` ended the output.
fn expand(s: &[u8], out: &mut Vec<u8>) -> bool {
    let octal = |b: Option<&u8>| b.filter(|b| (b'0'..=b'7').contains(b)).map(|b| b - b'0');
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c != b'\\' || i >= s.len() {
            out.push(c);
            continue;
        }
        let e = s[i];
        i += 1;
        let byte = match e {
            b'a' => 0x07,
            b'b' => 0x08,
            b'c' => return true,
            b'e' => 0x1B,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0B,
            b'\\' => b'\\',
            b'x' => match s.get(i).and_then(|b| char::from(*b).to_digit(16)) {
                None => {
                    out.push(b'\\');
                    b'x'
                }
                Some(h) => {
                    i += 1;
                    let mut v = h as u8;
                    if let Some(l) = s.get(i).and_then(|b| char::from(*b).to_digit(16)) {
                        i += 1;
                        v = v * 16 + l as u8;
                    }
                    v
                }
            },
            b'0'..=b'7' => {
                // \0NNN (up to 3 digits after the 0) or \NNN (1-3 digits).
                let mut v: u8 = e - b'0';
                let mut left = 2;
                if e == b'0' {
                    v = 0;
                    left = 3;
                }
                while left > 0 {
                    match octal(s.get(i)) {
                        Some(d) => {
                            v = v.wrapping_mul(8).wrapping_add(d);
                            i += 1;
                            left -= 1;
                        }
                        None => break,
                    }
                }
                v
            }
            other => {
                out.push(b'\\');
                other
            }
        };
        out.push(byte);
    }
    false
}
