//! `wc [-l] [-w] [-c] [FILE]...`: newline, word and byte counts (all three by default),
//! a `total` line for several operands, columns as wide as GNU wc 9.1 makes them.

use super::fs::{Errno, Fs, Node};
use super::getopt::getopt;
use super::quote::quotef;
use super::stream::Rope;
use super::unicode::{decode, is_print, is_space, Unit};
use super::{getopt_error, Command, Io};

/// Options of `wc`.
pub(super) struct Opts {
    lines: bool,
    words: bool,
    bytes: bool,
    operands: Vec<String>,
}

pub(super) fn prepare(args: &[String]) -> Result<Command, String> {
    let p = match getopt(args, &[('l', false), ('w', false), ('c', false)], false) {
        Ok(p) => p,
        Err(e) => return getopt_error("wc", e, "-l, -w, -c"),
    };
    let has = |c| p.opts.iter().any(|(o, _)| *o == c);
    let (mut lines, mut words, mut bytes) = (has('l'), has('w'), has('c'));
    if !(lines || words || bytes) {
        (lines, words, bytes) = (true, true, true);
    }
    Ok(Command::Wc(Opts {
        lines,
        words,
        bytes,
        operands: p.operands,
    }))
}

#[derive(Default, Clone, Copy)]
struct Counts {
    lines: u64,
    words: u64,
    bytes: u64,
}

/// Word counting state across slices: GNU wc 9.1 in a UTF-8 locale. A word is a run of
/// printable non-space characters; white space (and no-break spaces) ends a word;
/// non-printable characters and encoding errors neither start nor end one.
#[derive(Default)]
struct WordCounter {
    in_word: bool,
    words: u64,
    carry: Vec<u8>,
}

impl WordCounter {
    fn unit(&mut self, u: Unit) {
        let Unit::Char(c) = u else { return };
        match c {
            0x0A | 0x0D | 0x0C | 0x09 | 0x20 | 0x0B => self.in_word = false,
            _ if c < 0x80 => {
                if (0x21..0x7F).contains(&c) && !self.in_word {
                    self.words += 1;
                    self.in_word = true;
                }
            }
            _ => {
                if is_print(c) {
                    if is_space(c) || matches!(c, 0xA0 | 0x2007 | 0x202F | 0x2060) {
                        self.in_word = false;
                    } else if !self.in_word {
                        self.words += 1;
                        self.in_word = true;
                    }
                }
            }
        }
    }

    /// Feeds bytes; an incomplete character at the end waits for the next slice.
    fn feed(&mut self, b: &[u8]) {
        let mut buf = std::mem::take(&mut self.carry);
        let data: &[u8] = if buf.is_empty() {
            b
        } else {
            buf.extend_from_slice(b);
            &buf
        };
        let mut i = 0;
        while i < data.len() {
            if data[i] < 0x80 {
                self.unit(Unit::Char(u32::from(data[i])));
                i += 1;
                continue;
            }
            // A possibly incomplete sequence near the end: keep it for the next slice.
            if data.len() - i < 6 && could_continue(&data[i..]) {
                self.carry = data[i..].to_vec();
                return;
            }
            let (u, n) = decode(&data[i..]);
            self.unit(u);
            i += n;
        }
    }

    fn finish(&mut self) -> u64 {
        let rest = std::mem::take(&mut self.carry);
        let mut i = 0;
        while i < rest.len() {
            let (u, n) = decode(&rest[i..]);
            self.unit(u);
            i += n;
        }
        self.words
    }
}

/// True when `b` is a proper prefix of some valid sequence (more bytes could complete it).
fn could_continue(b: &[u8]) -> bool {
    let need = match b[0] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        0xF8..=0xFB => 5,
        0xFC..=0xFD => 6,
        _ => return false,
    };
    if b.len() >= need {
        return false;
    }
    // Check the prefix with the decoder by padding with continuation bytes.
    let mut probe = b.to_vec();
    probe.resize(need, 0x80);
    if b.len() == 1 {
        // The second byte decides for E0, ED, F0, F8, FC: try its whole range.
        return (0x80..=0xBFu8).any(|c| {
            probe[1] = c;
            matches!(decode(&probe), (Unit::Char(_), n) if n == need)
        });
    }
    matches!(decode(&probe), (Unit::Char(_), n) if n == need)
}

fn count(rope: &Rope, words: bool) -> Counts {
    let mut c = Counts::default();
    let mut wc = WordCounter::default();
    for s in rope.segs() {
        let b = s.bytes();
        c.bytes += b.len() as u64;
        c.lines += b.iter().filter(|&&x| x == b'\n').count() as u64;
        if words {
            wc.feed(b);
        }
    }
    c.words = wc.finish();
    c
}

enum Input {
    File(Rope),
    Stdin,
    Dir,
    Failed(Errno),
}

impl Opts {
    /// The files named (none: standard input).
    pub(super) fn operands(&self) -> &[String] {
        &self.operands
    }
}

pub(super) fn run(o: &Opts, fs: &Fs, io: &mut Io) -> i32 {
    let implicit = o.operands.is_empty();
    let stdin = ["-".to_owned()];
    let operands = if implicit { &stdin[..] } else { &o.operands };
    let nfields = [o.lines, o.words, o.bytes].iter().filter(|&&x| x).count();

    // Resolve everything first: the column width depends on all operands.
    let mut inputs = Vec::with_capacity(operands.len());
    for name in operands {
        inputs.push(if name == "-" {
            Input::Stdin // read when its turn comes
        } else {
            match fs.resolve(name) {
                Ok(Node::File(d)) => Input::File(Rope::from_data(d)),
                Ok(Node::Dir(_)) => Input::Dir,
                Err(e) => Input::Failed(e),
            }
        });
    }
    let width = if operands.len() == 1 && nfields == 1 {
        1
    } else {
        let mut min = 1;
        let mut total: u64 = 0;
        for i in &inputs {
            match i {
                Input::File(r) => total = total.saturating_add(r.len() as u64),
                Input::Stdin | Input::Dir => min = 7,
                Input::Failed(_) => {}
            }
        }
        total.to_string().len().max(min)
    };

    let line = |c: &Counts, name: Option<&str>| {
        let mut s = String::new();
        for (on, v) in [(o.lines, c.lines), (o.words, c.words), (o.bytes, c.bytes)] {
            if on {
                if !s.is_empty() {
                    s.push(' ');
                }
                s.push_str(&format!("{v:>width$}"));
            }
        }
        if let Some(n) = name {
            s.push(' ');
            s.push_str(n);
        }
        s.push('\n');
        s
    };

    let mut status = 0;
    let mut total = Counts::default();
    for (name, input) in operands.iter().zip(inputs) {
        let counts = match input {
            Input::File(rope) => count(&rope, o.words),
            Input::Stdin => count(&io.take_stdin(), o.words),
            Input::Dir => {
                io.err(&format!(
                    "wc: {}: {}\n",
                    quotef(name),
                    Errno::IsDir.message()
                ));
                status = 1;
                Counts::default()
            }
            Input::Failed(e) => {
                io.err(&format!("wc: {}: {}\n", quotef(name), e.message()));
                status = 1;
                continue;
            }
        };
        total.lines += counts.lines;
        total.words += counts.words;
        total.bytes += counts.bytes;
        let shown = (!implicit).then_some(name.as_str());
        io.out(line(&counts, shown).as_bytes());
    }
    if operands.len() > 1 {
        io.out(line(&total, Some("total")).as_bytes());
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(b: &[u8]) -> u64 {
        let mut w = WordCounter::default();
        w.feed(b);
        w.finish()
    }

    #[test]
    fn words_like_wc_9_1() {
        // Observed with GNU wc 9.1 in C.UTF-8.
        for (s, n) in [
            (&b"a\x01b"[..], 1),
            (b"\x01", 0),
            (b"\xff", 0),
            (b"a\xffb", 1),
            (b" \xff ", 0),
            (b"a\x00b", 1),
            ("a\u{a0}b".as_bytes(), 2),
            ("a\u{2003}b".as_bytes(), 2),
            ("a\u{200b}b".as_bytes(), 1),
            ("\u{200b}".as_bytes(), 1),
            (b"x\xCEy", 1),
            ("a\u{2028}b".as_bytes(), 1),
            ("\u{378}".as_bytes(), 0),
            ("a\u{2060}b".as_bytes(), 2),
        ] {
            assert_eq!(words(s), n, "{s:?}");
        }
        // Split across slices.
        let mut w = WordCounter::default();
        w.feed("a\u{3000}".as_bytes().split_at(2).0);
        w.feed(&"a\u{3000}".as_bytes()[2..]);
        w.feed(b"b");
        assert_eq!(w.finish(), 2);
        let mut w = WordCounter::default();
        w.feed(b"\xE2\x80");
        w.feed(b"x");
        assert_eq!(w.finish(), 1);
    }
}
