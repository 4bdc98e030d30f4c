//! `grep [-i] [-v] [-c] [-n] [-F] PATTERNS [FILE]...`: GNU grep 3.8 with `-F` (den.sh
//! patterns are always literal). A newline in PATTERNS separates several patterns.
//! Binary data is handled as GNU grep does: a NUL byte makes the rest of the input
//! binary (GNU reads 96 KiB blocks; lines ending in blocks before the one holding the
//! first NUL are printed normally), a selected line with an encoding error is not
//! printed, and either case ends with `grep: NAME: binary file matches` on stderr.

use super::fs::{Errno, Fs, Node};
use super::getopt::getopt;
use super::stream::{lines, Rope};
use super::unicode::{case_variants, decode, has_encoding_error, to_upper, Unit};
use super::{getopt_error, Command, Io};

/// Options of `grep`.
pub(super) struct Opts {
    invert: bool,
    count: bool,
    number: bool,
    matcher: Matcher,
    files: Vec<String>,
}

const USAGE: &str =
    "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n";

/// GNU grep's read size: binary detection happens per block of this many bytes.
const BLOCK: usize = 96 * 1024;

pub(super) fn prepare(args: &[String]) -> Result<Command, String> {
    let spec = [
        ('i', false),
        ('v', false),
        ('c', false),
        ('n', false),
        ('F', false),
    ];
    let p = match getopt(args, &spec, false) {
        Ok(p) => p,
        Err(e) => return getopt_error("grep", e, "-i, -v, -c, -n, -F"),
    };
    let has = |c| p.opts.iter().any(|(o, _)| *o == c);
    let Some((pattern, files)) = p.operands.split_first() else {
        return Ok(Command::Fail(USAGE.into(), 2));
    };
    if pattern.split('\n').all(str::is_empty) && has('v') {
        // Only empty patterns (`''`, or newlines alone, which GNU grep 3.8 dedups to one empty
        // pattern) with -v: GNU grep sees that nothing can be selected and exits at once,
        // silently.
        return Ok(Command::Fail(String::new(), 1));
    }
    Ok(Command::Grep(Opts {
        invert: has('v'),
        count: has('c'),
        number: has('n'),
        matcher: Matcher::new(pattern, has('i')),
        files: files.to_vec(),
    }))
}

/// KMP failure table.
fn failure<T: PartialEq>(p: &[T]) -> Vec<usize> {
    let mut f = vec![0; p.len()];
    let mut k = 0;
    for i in 1..p.len() {
        while k > 0 && p[i] != p[k] {
            k = f[k - 1];
        }
        if p[i] == p[k] {
            k += 1;
        }
        f[i] = k;
    }
    f
}

/// Calls `accept(start)` for each occurrence of `p` in `hay` until it returns true.
fn find<T: PartialEq>(
    hay: &[T],
    p: &[T],
    f: &[usize],
    mut accept: impl FnMut(usize) -> bool,
) -> bool {
    if p.is_empty() {
        return accept(0);
    }
    let mut k = 0;
    for (i, h) in hay.iter().enumerate() {
        while k > 0 && *h != p[k] {
            k = f[k - 1];
        }
        if *h == p[k] {
            k += 1;
        }
        if k == p.len() {
            if accept(i + 1 - k) {
                return true;
            }
            k = f[k - 1];
        }
    }
    false
}

enum Pattern {
    /// Exact bytes (no `-i`).
    Bytes { p: Vec<u8>, fail: Vec<usize> },
    /// `-i`: upper-case keys to find candidates, then the exact case variants.
    Fold {
        keys: Vec<u32>,
        fail: Vec<usize>,
        variants: Vec<Vec<u32>>,
    },
}

/// Literal patterns, matched the way GNU grep -F does in a UTF-8 locale.
struct Matcher {
    patterns: Vec<Pattern>,
    icase: bool,
}

/// Key of a unit for `-i`: characters by their upper case; encoding errors never match.
fn key(u: Unit) -> u32 {
    match u {
        Unit::Char(c) if c <= 0x10FFFF => to_upper(c),
        Unit::Char(c) => c,
        Unit::Byte(b) => 0x8000_0000 | u32::from(b),
    }
}

impl Matcher {
    fn new(patterns: &str, icase: bool) -> Matcher {
        // A pattern given twice matches the same lines: each is searched once.
        let mut unique: Vec<&str> = patterns.split('\n').collect();
        // (crate::order's sort: `sort_unstable` would bring a second sort into the wasm.)
        crate::order::sort(&mut unique);
        unique.dedup();
        let patterns = unique
            .into_iter()
            .map(|p| {
                if icase {
                    let chars: Vec<u32> = p.chars().map(u32::from).collect();
                    let keys: Vec<u32> = chars.iter().map(|&c| to_upper(c)).collect();
                    Pattern::Fold {
                        fail: failure(&keys),
                        keys,
                        variants: chars.iter().map(|&c| case_variants(c)).collect(),
                    }
                } else {
                    let p = p.as_bytes().to_vec();
                    Pattern::Bytes {
                        fail: failure(&p),
                        p,
                    }
                }
            })
            .collect();
        Matcher { patterns, icase }
    }

    /// True when some pattern occurs in `line`. `buf` is scratch space; `work` counts the
    /// characters compared by `-i`'s case checks (a candidate found by upper case is checked
    /// against the pattern's case variants, which some characters that share an upper case
    /// fail, e.g. U+1C80 and `в`: hostile patterns can make that cost the line times the
    /// pattern).
    fn matches(&self, line: &[u8], buf: &mut (Vec<u32>, Vec<u32>), work: &mut usize) -> bool {
        if self.icase {
            let (chars, keys) = buf;
            chars.clear();
            keys.clear();
            let mut i = 0;
            while i < line.len() {
                let b = line[i];
                if b < 0x80 {
                    // ASCII: no table lookups.
                    chars.push(u32::from(b));
                    keys.push(u32::from(b.to_ascii_uppercase()));
                    i += 1;
                    continue;
                }
                let (u, n) = decode(&line[i..]);
                chars.push(match u {
                    Unit::Char(c) => c,
                    Unit::Byte(b) => 0x8000_0000 | u32::from(b),
                });
                keys.push(key(u));
                i += n;
            }
            self.patterns.iter().any(|p| match p {
                Pattern::Fold {
                    keys: pk,
                    fail,
                    variants,
                } => find(keys, pk, fail, |at| {
                    let mut n = 0usize;
                    let all = variants.iter().zip(&chars[at..]).all(|(v, c)| {
                        n += 1;
                        v.contains(c)
                    });
                    *work = work.saturating_add(n * 4);
                    all
                }),
                Pattern::Bytes { .. } => false,
            })
        } else {
            self.patterns.iter().any(|p| match p {
                Pattern::Bytes { p, fail } => find(line, p, fail, |_| true),
                Pattern::Fold { .. } => false,
            })
        }
    }
}

/// What searching one input gave.
struct Found {
    /// Selected lines (GNU's `nlines`).
    selected: u64,
    /// The search stopped at a line too long to fold (`-i`).
    too_long: bool,
}

/// The longest line `-i` folds: folding takes 8 bytes a byte, which past this could exhaust
/// the page's WebAssembly memory.
const MAX_FOLD_LINE: usize = 16 << 20;

/// The longest line grep copies together from the slices of piped data (a line inside one
/// file's bytes is not copied, whatever its length).
const MAX_COPIED_LINE: usize = 64 << 20;

fn search(o: &Opts, rope: &Rope, name: &str, prefix: bool, io: &mut Io) -> Found {
    let mut buf = (Vec::new(), Vec::new());
    // Where binary mode starts: the block holding the first NUL.
    let mut first_nul = None;
    let mut pos = 0;
    for s in rope.segs() {
        if let Some(i) = s.bytes().iter().position(|&b| b == 0) {
            first_nul = Some(pos + i);
            break;
        }
        pos += s.bytes().len();
    }
    let binary_from = first_nul.map(|f| f / BLOCK * BLOCK);
    let mut selected = 0u64;
    let mut selected_at_binary: Option<u64> = None;
    let mut encoding_error = false;
    let mut lineno = 0u64;
    let mut too_long = false;
    let max_line = if o.matcher.icase {
        MAX_FOLD_LINE
    } else {
        MAX_COPIED_LINE
    };
    let mut work = 0usize;
    'lines: for line in lines(rope, max_line) {
        lineno += 1;
        if line.too_long || (o.matcher.icase && line.text.len() > MAX_FOLD_LINE) {
            io.err(&if o.matcher.icase {
                format!(
                    "grep: {name}: line {lineno} is longer than {} MiB, the longest den.sh folds for -i; stopped\n",
                    MAX_FOLD_LINE >> 20
                )
            } else {
                format!(
                    "grep: {name}: line {lineno} runs across piped data for more than {} MiB, the longest den.sh reads as one line; stopped\n",
                    MAX_COPIED_LINE >> 20
                )
            });
            too_long = true;
            break;
        }
        if selected_at_binary.is_none() && binary_from.is_some_and(|b| line.end >= b) {
            selected_at_binary = Some(selected);
        }
        if selected_at_binary.is_some() {
            // NUL bytes end lines; nothing is printed; stop at the first selected line.
            let text: &[u8] = &line.text;
            let mut pieces: Vec<&[u8]> = text.split(|&b| b == 0).collect();
            if !line.newline && pieces.len() > 1 && pieces.last().is_some_and(|p| p.is_empty()) {
                pieces.pop();
            }
            for piece in pieces {
                if o.matcher.matches(piece, &mut buf, &mut work) != o.invert {
                    selected += 1;
                    if !o.count {
                        break 'lines;
                    }
                }
            }
            io.spend(std::mem::take(&mut work));
            if io.exhausted() {
                break;
            }
            continue;
        }
        let found = o.matcher.matches(&line.text, &mut buf, &mut work);
        io.spend(std::mem::take(&mut work));
        if io.exhausted() {
            break;
        }
        if found == o.invert {
            continue;
        }
        selected += 1;
        if o.count {
            continue;
        }
        if io.out_closed() {
            // Nothing more can be seen; the exit status is already known.
            break;
        }
        if has_encoding_error(&line.text) {
            encoding_error = true;
            continue;
        }
        let mut head = String::new();
        if prefix {
            head.push_str(name);
            head.push(':');
        }
        if o.number {
            head.push_str(&lineno.to_string());
            head.push(':');
        }
        io.out(head.as_bytes());
        match line.shared {
            Some(s) => io.out_seg(s),
            None => {
                io.out(&line.text);
                io.out(b"\n");
            }
        }
    }
    if !o.count && (encoding_error || selected_at_binary.is_some_and(|at| at < selected)) {
        io.err(&format!("grep: {name}: binary file matches\n"));
    }
    Found { selected, too_long }
}

impl Opts {
    /// The files named (none: standard input).
    pub(super) fn operands(&self) -> &[String] {
        &self.files
    }

    /// How many times grep goes over its input: once per (distinct) pattern.
    pub(super) fn passes(&self) -> usize {
        self.matcher.patterns.len().max(1)
    }
}

pub(super) fn run(o: &Opts, fs: &Fs, io: &mut Io) -> i32 {
    let stdin = ["-".to_owned()];
    let files = if o.files.is_empty() {
        &stdin[..]
    } else {
        &o.files
    };
    let prefix = files.len() > 1;
    let mut error = false;
    let mut any = false;
    for f in files {
        let (name, rope) = if f == "-" {
            ("(standard input)", Some(io.take_stdin()))
        } else {
            match fs.resolve(f) {
                Ok(Node::File(d)) => (f.as_str(), Some(Rope::from_data(d))),
                Ok(Node::Dir(_)) => (f.as_str(), None),
                Err(e) => {
                    io.err(&format!("grep: {f}: {}\n", e.message()));
                    error = true;
                    continue;
                }
            }
        };
        let selected = match rope {
            Some(r) => {
                let found = search(o, &r, name, prefix, io);
                error |= found.too_long;
                found.selected
            }
            None => {
                io.err(&format!("grep: {name}: {}\n", Errno::IsDir.message()));
                error = true;
                0
            }
        };
        any |= selected > 0;
        if io.exhausted() {
            // Stopped part way (the shell says why): no count, no further file.
            break;
        }
        if o.count {
            let line = if prefix {
                format!("{name}:{selected}\n")
            } else {
                format!("{selected}\n")
            };
            io.out(line.as_bytes());
        }
    }
    if error {
        2
    } else if any {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, icase: bool, line: &str) -> bool {
        Matcher::new(p, icase).matches(line.as_bytes(), &mut (Vec::new(), Vec::new()), &mut 0)
    }

    #[test]
    fn literal_and_folded() {
        assert!(m("b", false, "abc"));
        assert!(m("", false, ""));
        assert!(!m("B", false, "abc"));
        assert!(m("x\nb", false, "abc"));
        assert!(m("aab", false, "aaab"));
        assert!(m("ABC", true, "xabcx"));
        assert!(m("i", true, "\u{131}"));
        assert!(!m("i", true, "\u{130}"));
        assert!(!m("k", true, "\u{212A}"));
        assert!(m("\u{1C80}", true, "\u{432}"));
        assert!(!m("\u{432}", true, "\u{1C80}"));
        assert!(m("σ", true, "ΣΑΣ"));
        assert!(m("straße", true, "STRAßE"));
        assert!(!m("straße", true, "STRASSE"));
    }
}
