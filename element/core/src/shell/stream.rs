//! Data flowing through the shell: a [`Rope`] of shared slices (a file's bytes are never
//! copied when `cat` passes them on), line iteration over it, and the capped [`Sink`]
//! that collects what the caller sees.

use std::borrow::Cow;
use std::sync::Arc;

/// Owned bytes kept between two commands above which the run stops (memory guard).
pub(super) const PIPE_OWNED_LIMIT: usize = 256 << 20;

/// Slices smaller than this are copied instead of shared (keeps ropes short).
const SHARE_MIN: usize = 256;

/// A shared slice of bytes.
#[derive(Clone)]
pub(super) struct Seg {
    data: Arc<[u8]>,
    start: usize,
    end: usize,
}

impl Seg {
    /// The whole of `data`.
    pub(super) fn whole(data: Arc<[u8]>) -> Self {
        let end = data.len();
        Seg {
            data,
            start: 0,
            end,
        }
    }

    /// The bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    /// A sub-slice (`a..b` relative to this slice).
    pub(super) fn sub(&self, a: usize, b: usize) -> Seg {
        Seg {
            data: self.data.clone(),
            start: self.start + a,
            end: self.start + b,
        }
    }
}

/// A byte stream made of shared slices.
#[derive(Clone, Default)]
pub(super) struct Rope {
    segs: Vec<Seg>,
    len: usize,
}

impl Rope {
    /// A rope of one whole buffer.
    pub(super) fn from_data(data: Arc<[u8]>) -> Self {
        let len = data.len();
        let segs = if len == 0 {
            Vec::new()
        } else {
            vec![Seg::whole(data)]
        };
        Rope { segs, len }
    }

    /// Total length in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The slices, in order.
    pub(super) fn segs(&self) -> &[Seg] {
        &self.segs
    }

    /// The bytes `a..b` of the stream, as slices.
    pub(super) fn slice(&self, a: usize, b: usize) -> Vec<Seg> {
        let mut out = Vec::new();
        let mut pos = 0;
        for s in &self.segs {
            let n = s.end - s.start;
            let (lo, hi) = (a.max(pos), b.min(pos + n));
            if lo < hi {
                out.push(s.sub(lo - pos, hi - pos));
            }
            pos += n;
            if pos >= b {
                break;
            }
        }
        out
    }
}

/// Builds a [`Rope`] from copied bytes and shared slices.
#[derive(Default)]
pub(super) struct RopeBuilder {
    segs: Vec<Seg>,
    pending: Vec<u8>,
    len: usize,
    owned: usize,
    limit: usize,
}

impl RopeBuilder {
    /// A builder that keeps at most about `limit` bytes of its own.
    pub(super) fn new(limit: usize) -> Self {
        RopeBuilder {
            limit,
            ..Default::default()
        }
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let data: Arc<[u8]> = Arc::from(std::mem::take(&mut self.pending));
            self.segs.push(Seg::whole(data));
        }
    }

    /// Appends copied bytes.
    pub(super) fn push(&mut self, b: &[u8]) {
        if self.owned.saturating_add(b.len()) > self.limit {
            // Over the limit, the write not copied: the run stops after this command.
            self.owned = self.limit.saturating_add(1);
            return;
        }
        self.pending.extend_from_slice(b);
        self.len += b.len();
        self.owned += b.len();
    }

    /// Appends a shared slice.
    pub(super) fn push_seg(&mut self, s: Seg) {
        let n = s.end - s.start;
        if n == 0 {
            return;
        }
        if n < SHARE_MIN || self.owned > self.limit {
            self.push(s.bytes());
            return;
        }
        self.flush();
        self.len += n;
        if let Some(last) = self.segs.last_mut() {
            if Arc::ptr_eq(&last.data, &s.data) && last.end == s.start {
                last.end = s.end;
                return;
            }
        }
        // Each slice costs some memory of its own.
        self.owned += std::mem::size_of::<Seg>();
        self.segs.push(s);
    }

    /// True when more than its limit of bytes of its own were asked for (the excess
    /// was dropped).
    pub(super) fn over_limit(&self) -> bool {
        self.owned > self.limit
    }

    /// The finished rope.
    pub(super) fn finish(mut self) -> Rope {
        self.flush();
        Rope {
            segs: self.segs,
            len: self.len,
        }
    }
}

/// One line of a stream.
pub(super) struct Line<'a> {
    /// The line without its newline.
    pub(super) text: Cow<'a, [u8]>,
    /// True when the line ends with a newline (false only for a last, unterminated line).
    pub(super) newline: bool,
    /// Stream offset just after the line's content (where its newline is, if any).
    pub(super) end: usize,
    /// The line with its newline as one shared slice, when it lies in one slice.
    pub(super) shared: Option<Seg>,
    /// The line lies across slices and is longer than the iterator's `max_copied`: it was not
    /// copied (`text` is empty), and it is the last line given.
    pub(super) too_long: bool,
}

impl Line<'_> {
    fn too_long(start: usize) -> Self {
        Line {
            text: Cow::Borrowed(&[]),
            newline: false,
            end: start,
            shared: None,
            too_long: true,
        }
    }
}

/// Iterates over the lines of a rope (split at `\n`; a last line without newline counts).
/// A line that lies across slices is copied, up to `max_copied` bytes: a longer one ends the
/// lines with a [`Line::too_long`] (the page's memory never shrinks).
pub(super) fn lines(rope: &Rope, max_copied: usize) -> impl Iterator<Item = Line<'_>> + '_ {
    let segs = rope.segs();
    let mut si = 0; // current slice
    let mut off = 0; // offset inside it
    let mut pos = 0; // stream offset
    std::iter::from_fn(move || {
        let mut carry: Option<Vec<u8>> = None;
        let start = pos;
        loop {
            let Some(seg) = segs.get(si) else {
                // End of stream: an unterminated last line, if any.
                return carry.map(|v| Line {
                    end: start + v.len(),
                    text: Cow::Owned(v),
                    newline: false,
                    shared: None,
                    too_long: false,
                });
            };
            let b = seg.bytes();
            let rest = &b[off..];
            match rest.iter().position(|&c| c == b'\n') {
                Some(i) => {
                    let line_start = off;
                    off += i + 1;
                    pos += i + 1;
                    if off == b.len() {
                        si += 1;
                        off = 0;
                    }
                    return Some(match carry {
                        None => Line {
                            text: Cow::Borrowed(&b[line_start..line_start + i]),
                            newline: true,
                            end: start + i,
                            shared: Some(seg.sub(line_start, line_start + i + 1)),
                            too_long: false,
                        },
                        Some(mut v) => {
                            if v.len().saturating_add(i) > max_copied {
                                si = segs.len();
                                return Some(Line::too_long(start));
                            }
                            v.extend_from_slice(&rest[..i]);
                            Line {
                                end: start + v.len(),
                                text: Cow::Owned(v),
                                newline: true,
                                shared: None,
                                too_long: false,
                            }
                        }
                    });
                }
                None if carry.is_none() && si + 1 == segs.len() => {
                    // An unterminated last line inside one slice: not copied, whatever its
                    // length.
                    si += 1;
                    pos += rest.len();
                    return Some(Line {
                        end: start + rest.len(),
                        text: Cow::Borrowed(rest),
                        newline: false,
                        shared: None,
                        too_long: false,
                    });
                }
                None => {
                    let had = carry.as_ref().map_or(0, Vec::len);
                    if had.saturating_add(rest.len()) > max_copied {
                        si = segs.len();
                        return Some(Line::too_long(start));
                    }
                    carry.get_or_insert_with(Vec::new).extend_from_slice(rest);
                    pos += rest.len();
                    si += 1;
                    off = 0;
                }
            }
        }
    })
}

/// The two output streams of a run, capped together.
///
/// Writes are kept in the order they happen until `cap` bytes are kept in all; the
/// write that crosses the cap is cut (never inside a UTF-8 character) and every later
/// write is dropped.
pub(super) struct Sink {
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
    cap: usize,
    pub(super) truncated: bool,
}

impl Sink {
    pub(super) fn new(cap: usize) -> Self {
        Sink {
            stdout: Vec::new(),
            stderr: Vec::new(),
            cap,
            truncated: false,
        }
    }

    fn write(&mut self, to_stderr: bool, b: &[u8]) {
        if b.is_empty() {
            return;
        }
        if self.truncated {
            return;
        }
        let used = self.stdout.len() + self.stderr.len();
        let room = self.cap.saturating_sub(used);
        let keep = if b.len() <= room {
            b.len()
        } else {
            self.truncated = true;
            utf8_cut(b, room)
        };
        let dst = if to_stderr {
            &mut self.stderr
        } else {
            &mut self.stdout
        };
        dst.extend_from_slice(&b[..keep]);
    }

    /// Appends to stdout.
    pub(super) fn out(&mut self, b: &[u8]) {
        self.write(false, b);
    }

    /// Appends to stderr.
    pub(super) fn err(&mut self, b: &[u8]) {
        self.write(true, b);
    }
}

/// The largest cut `<= room` that does not split a valid UTF-8 character of `b`.
fn utf8_cut(b: &[u8], room: usize) -> usize {
    let mut start = room;
    while start > 0 && room - start < 3 && b[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    if start == room {
        return room;
    }
    match super::unicode::decode(&b[start..]) {
        (super::unicode::Unit::Char(_), n) if start + n > room => start,
        _ => room,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rope(parts: &[&[u8]]) -> Rope {
        let mut b = RopeBuilder::new(usize::MAX);
        for p in parts {
            // Force shared slices even for small test data.
            let data: Arc<[u8]> = Arc::from(p.to_vec());
            b.flush();
            b.len += data.len();
            if !data.is_empty() {
                b.segs.push(Seg::whole(data));
            }
        }
        b.finish()
    }

    #[test]
    fn lines_across_slices() {
        let r = rope(&[b"ab\ncd", b"ef\n", b"", b"g"]);
        let got: Vec<(Vec<u8>, bool, usize)> = lines(&r, usize::MAX)
            .map(|l| (l.text.to_vec(), l.newline, l.end))
            .collect();
        assert_eq!(
            got,
            vec![
                (b"ab".to_vec(), true, 2),
                (b"cdef".to_vec(), true, 7),
                (b"g".to_vec(), false, 9)
            ]
        );
        assert_eq!(lines(&Rope::default(), usize::MAX).count(), 0);
        assert_eq!(lines(&rope(&[b"\n"]), usize::MAX).count(), 1);
        let s: Vec<u8> = r
            .slice(1, 8)
            .iter()
            .flat_map(|s| s.bytes().to_vec())
            .collect();
        assert_eq!(s, b"b\ncdef\n");
    }

    #[test]
    fn sink_caps_in_order() {
        let mut s = Sink::new(5);
        s.err(b"ab");
        s.out(b"cdef");
        s.err(b"x");
        assert_eq!(
            (s.stderr.as_slice(), s.stdout.as_slice(), s.truncated),
            (&b"ab"[..], &b"cde"[..], true)
        );
        let mut s = Sink::new(3);
        s.out("aé".as_bytes());
        assert_eq!((s.stdout.as_slice(), s.truncated), ("aé".as_bytes(), false));
        s.out(b"");
        assert!(!s.truncated);
        s.out(b"b");
        assert!(s.truncated);
        let mut s = Sink::new(2);
        s.out("aé".as_bytes());
        assert_eq!((s.stdout.as_slice(), s.truncated), (&b"a"[..], true));
        let mut s = Sink::new(2);
        s.out(b"a\xFF\xFF");
        assert_eq!(s.stdout, b"a\xFF");
    }
}
