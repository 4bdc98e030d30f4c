//! `head [-n [-]N | -N] [-q|-v] [FILE]...`: the first N lines (10 by default), or with
//! `-n -N` all but the last N; headers `==> NAME <==` when there are several operands.

use super::fs::{Fs, Node};
use super::getopt::getopt_partial;
use super::quote::{quote, quoteaf};
use super::stream::Rope;
use super::{getopt_error, unsupported_option, Command, Io};

/// Options of `head`.
pub(super) struct Opts {
    lines: u64,
    /// `-n -N`: all but the last N lines.
    elide: bool,
    /// `None`: headers when there are several operands; `-v`: always; `-q`: never.
    headers: Option<bool>,
    operands: Vec<String>,
}

const SUPPORTED: &str = "-n N, -n -N, -N (first), -q, -v";

/// GNU head 9.1's multiplier suffixes for `-n` (R and Q came later), which den.sh does not
/// support.
const SUFFIXES: &str = "bkKmMGTPEZY";

/// Parses a line count as GNU head does (`xstrtoumax`): leading white space, an
/// optional `+`, decimal digits. `Err(Ok(msg))` is GNU's error, `Err(Err(msg))` an
/// unsupported form.
fn parse_count(s: &str) -> Result<u64, Result<String, String>> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0B', '\x0C', '\r']);
    let t = t.strip_prefix('+').unwrap_or(t);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &t[digits..];
    if rest.starts_with(|c| SUFFIXES.chars().any(|s| s == c)) {
        return Err(Err(unsupported_option(
            "head",
            &format!("-n {s}"),
            "plain numbers, no size suffixes",
        )));
    }
    if digits == 0 || !rest.is_empty() {
        return Err(Ok(format!("head: invalid number of lines: {}\n", quote(s))));
    }
    t[..digits].parse::<u64>().map_err(|_| {
        Ok(format!(
            "head: invalid number of lines: {}: Value too large for defined data type\n",
            quote(s)
        ))
    })
}

pub(super) fn prepare(args: &[String]) -> Result<Command, String> {
    let mut lines = 10;
    let mut elide = false;
    let mut rest = args;
    // Obsolete form: `head -5 FILE`, only as the first argument.
    if let Some(first) = args.first() {
        let b = first.as_bytes();
        if b.len() > 1 && b[0] == b'-' && b[1].is_ascii_digit() {
            if !b[1..].iter().all(u8::is_ascii_digit) {
                return Err(unsupported_option("head", first, SUPPORTED));
            }
            match parse_count(&first[1..]) {
                Ok(n) => lines = n,
                Err(Ok(msg)) => return Ok(Command::Fail(msg, 1)),
                Err(Err(msg)) => return Err(msg),
            }
            rest = &args[1..];
        }
    }
    // GNU head acts on each option as getopt returns it: a bad `-n` is reported before a bad
    // option that comes later.
    let (p, error) = getopt_partial(rest, &[('n', true), ('q', false), ('v', false)], true);
    let mut headers = None;
    for (c, v) in p.opts {
        match (c, v) {
            ('n', Some(v)) => {
                let (e, s) = match v.strip_prefix('-') {
                    Some(s) => (true, s),
                    None => (false, v.as_str()),
                };
                match parse_count(s) {
                    Ok(n) => {
                        lines = n;
                        elide = e;
                    }
                    Err(Ok(msg)) => return Ok(Command::Fail(msg, 1)),
                    Err(Err(msg)) => return Err(msg),
                }
            }
            ('q', _) => headers = Some(false),
            ('v', _) => headers = Some(true),
            _ => {}
        }
    }
    if let Some(e) = error {
        return getopt_error("head", e, SUPPORTED);
    }
    Ok(Command::Head(Opts {
        lines,
        elide,
        headers,
        operands: p.operands,
    }))
}

/// Offset just after the `k`-th newline of `rope`, or its length if it has fewer.
fn after_lines(rope: &Rope, k: u64) -> usize {
    if k == 0 {
        return 0;
    }
    let mut seen = 0u64;
    let mut pos = 0;
    for s in rope.segs() {
        for (i, &c) in s.bytes().iter().enumerate() {
            if c == b'\n' {
                seen += 1;
                if seen == k {
                    return pos + i + 1;
                }
            }
        }
        pos += s.bytes().len();
    }
    rope.len()
}

/// Number of lines (a last line without newline counts).
fn count_lines(rope: &Rope) -> u64 {
    let mut n = 0u64;
    let mut last = b'\n';
    for s in rope.segs() {
        n += s.bytes().iter().filter(|&&c| c == b'\n').count() as u64;
        if let Some(&c) = s.bytes().last() {
            last = c;
        }
    }
    n + u64::from(last != b'\n')
}

impl Opts {
    /// The files named (none: standard input).
    pub(super) fn operands(&self) -> &[String] {
        &self.operands
    }
}

pub(super) fn run(o: &Opts, fs: &Fs, io: &mut Io) -> i32 {
    let stdin = ["-".to_owned()];
    let operands = if o.operands.is_empty() {
        &stdin[..]
    } else {
        &o.operands
    };
    let headers = o.headers.unwrap_or(operands.len() > 1);
    let mut first = true;
    let mut status = 0;
    for name in operands {
        let (shown, data) = if name == "-" {
            ("standard input", Some(io.take_stdin()))
        } else {
            match fs.resolve(name) {
                Ok(Node::File(d)) => (name.as_str(), Some(Rope::from_data(d))),
                Ok(Node::Dir(_)) => (name.as_str(), None),
                Err(e) => {
                    io.err(&format!(
                        "head: cannot open {} for reading: {}\n",
                        quoteaf(name),
                        e.message()
                    ));
                    status = 1;
                    continue;
                }
            }
        };
        if headers {
            let sep = if first { "" } else { "\n" };
            io.out(format!("{sep}==> {shown} <==\n").as_bytes());
            first = false;
        }
        let Some(rope) = data else {
            if o.elide || o.lines > 0 {
                io.err(&format!(
                    "head: error reading {}: Is a directory\n",
                    quoteaf(name)
                ));
                status = 1;
            }
            continue;
        };
        let end = if o.elide {
            let total = count_lines(&rope);
            after_lines(&rope, total.saturating_sub(o.lines))
        } else {
            after_lines(&rope, o.lines)
        };
        for s in rope.slice(0, end) {
            io.out_seg(s);
        }
    }
    status
}
