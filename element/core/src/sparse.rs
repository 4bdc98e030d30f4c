//! The warm cache's storage form of a memory snapshot: its all-zero pages left out.
//!
//! A fresh interpreter's snapshot is mostly WebAssembly memory, and about half of its 4 KiB
//! pages are all zero. The warm cache stores it without them, so a later visit reads, hashes and
//! hands over about half the bytes; the den's worker puts the zero pages back (a new buffer is
//! already zero) by copying each run of kept pages to its place.
//!
//! Layout (all integers little-endian):
//! ```text
//! magic "FXZP" | version u8 = 1 | 3 zero bytes | total length u64 | page size u32 | runs u32
//! runs × (first page u32, pages u32)     ascending, neither overlapping nor touching
//! the kept bytes of each run, in order   (a run at the end stops at the total length)
//! ```
//! [`Layout::parse`] checks every field against the bytes it describes, so the worker can copy
//! the runs without checking anything itself.

/// Size of the fixed part of the header.
pub const FIXED: usize = 24;
const MAGIC: &[u8; 4] = b"FXZP";
const VERSION: u8 = 1;
/// The page size the host packs with (WebAssembly's own page is 64 KiB; 4 KiB finds more zero).
pub const PAGE: u32 = 4096;
/// Largest snapshot described: the host refuses larger ones from a den page.
pub const MAX_TOTAL: u64 = 512 << 20;

/// A packed form that cannot be unpacked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SparseError {
    /// Too short for its header, or not this format.
    #[error("not a packed snapshot (bad header)")]
    Header,
    /// Its runs are out of order, overlap, or lie past its end.
    #[error("packed snapshot: run {0} is out of order or out of range")]
    Run(usize),
    /// Its length is not that of the header plus the runs' bytes.
    #[error("packed snapshot: {got} bytes where the header describes {want}")]
    Length {
        /// Bytes present.
        got: u64,
        /// Bytes the header describes.
        want: u64,
    },
}

/// One run of kept pages: `len` bytes at `from` in the packed form go to `to` in the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy {
    /// Offset in the packed bytes.
    pub from: u64,
    /// Offset in the unpacked snapshot.
    pub to: u64,
    /// Length in bytes.
    pub len: u64,
}

/// Which pages of a snapshot are kept: built page by page while packing ([`Layout::scan`]), or
/// read back from a packed header ([`Layout::parse`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    total: u64,
    /// (first page, pages), ascending, not touching.
    runs: Vec<(u32, u32)>,
}

/// Whether a header of `len` bytes holds the fixed part and `runs` runs. In u64: on wasm32,
/// `8 * runs` of a hostile count overflows usize.
fn header_holds(len: usize, runs: u32) -> bool {
    len as u64 >= FIXED as u64 + 8 * u64::from(runs)
}

impl Layout {
    /// An empty layout for a snapshot of `total` bytes (at most [`MAX_TOTAL`]).
    pub fn new(total: u64) -> Option<Self> {
        (total <= MAX_TOTAL).then(|| Layout {
            total,
            runs: Vec::new(),
        })
    }

    /// Records the pages of `chunk`, which starts at byte `offset` of the snapshot: `offset`
    /// must be a multiple of [`PAGE`], and chunks must come in order without gaps.
    pub fn scan(&mut self, offset: u64, chunk: &[u8]) {
        debug_assert_eq!(offset % PAGE as u64, 0);
        for (i, page) in chunk.chunks(PAGE as usize).enumerate() {
            if is_zero(page) {
                continue;
            }
            let n = (offset / PAGE as u64) as u32 + i as u32;
            match self.runs.last_mut() {
                Some((first, len)) if *first + *len == n => *len += 1,
                _ => self.runs.push((n, 1)),
            }
        }
    }

    /// The snapshot's length.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The header of the packed form (its runs' bytes follow it).
    pub fn header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(FIXED + 8 * self.runs.len());
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&[VERSION, 0, 0, 0]);
        h.extend_from_slice(&self.total.to_le_bytes());
        h.extend_from_slice(&PAGE.to_le_bytes());
        h.extend_from_slice(&(self.runs.len() as u32).to_le_bytes());
        for (first, len) in &self.runs {
            h.extend_from_slice(&first.to_le_bytes());
            h.extend_from_slice(&len.to_le_bytes());
        }
        h
    }

    /// The header's length: [`FIXED`] plus 8 bytes a run.
    pub fn header_len(&self) -> u64 {
        FIXED as u64 + 8 * self.runs.len() as u64
    }

    /// The copies that make the snapshot from the packed form (or the packed form's runs from
    /// the snapshot, with `from` and `to` swapped).
    pub fn copies(&self) -> Vec<Copy> {
        let mut from = self.header_len();
        let mut out = Vec::with_capacity(self.runs.len());
        for &(first, len) in &self.runs {
            let to = first as u64 * PAGE as u64;
            let len = (len as u64 * PAGE as u64).min(self.total - to);
            out.push(Copy { from, to, len });
            from += len;
        }
        out
    }

    /// The packed form's length: header plus kept bytes.
    pub fn packed_len(&self) -> u64 {
        self.copies()
            .last()
            .map_or(self.header_len(), |c| c.from + c.len)
    }

    /// How many runs a header declares, from its first [`FIXED`] bytes (to know how much of the
    /// header to read before [`Layout::parse`]).
    pub fn runs_declared(fixed: &[u8]) -> Result<u32, SparseError> {
        if fixed.len() < FIXED || &fixed[..4] != MAGIC || fixed[4..8] != [VERSION, 0, 0, 0] {
            return Err(SparseError::Header);
        }
        Ok(u32::from_le_bytes(word(fixed, 20)))
    }

    /// Reads a packed form's header (`header`: at least [`FIXED`] + 8 × runs bytes) and checks
    /// it against `packed_len`, the whole packed form's length.
    pub fn parse(header: &[u8], packed_len: u64) -> Result<Layout, SparseError> {
        let n = Layout::runs_declared(header)? as usize;
        let total = u64::from_le_bytes(header[8..16].try_into().map_err(|_| SparseError::Header)?);
        if u32::from_le_bytes(word(header, 16)) != PAGE
            || total > MAX_TOTAL
            || !header_holds(header.len(), n as u32)
        {
            return Err(SparseError::Header);
        }
        let pages = total.div_ceil(PAGE as u64);
        let mut runs = Vec::with_capacity(n);
        let mut next = 0u64; // first page a run may start at
        for i in 0..n {
            let first = u32::from_le_bytes(word(header, FIXED + 8 * i));
            let len = u32::from_le_bytes(word(header, FIXED + 8 * i + 4));
            let end = first as u64 + len as u64;
            if len == 0 || (first as u64) < next || end > pages {
                return Err(SparseError::Run(i));
            }
            next = end + 1;
            runs.push((first, len));
        }
        let layout = Layout { total, runs };
        let want = layout.packed_len();
        if want != packed_len {
            return Err(SparseError::Length {
                got: packed_len,
                want,
            });
        }
        Ok(layout)
    }
}

fn word(b: &[u8], at: usize) -> [u8; 4] {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    w
}

/// Whether every byte is zero (eight at a time).
fn is_zero(b: &[u8]) -> bool {
    let mut words = b.chunks_exact(8);
    let wide = words
        .by_ref()
        .all(|w| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]) == 0);
    wide && words.remainder().iter().all(|&x| x == 0)
}

/// Packs `data` whole (the host packs in chunks with [`Layout::scan`]; this is the same).
pub fn pack(data: &[u8]) -> Vec<u8> {
    let mut layout = Layout::new(data.len() as u64).expect("snapshot too large");
    layout.scan(0, data);
    let mut out = layout.header();
    for c in layout.copies() {
        out.extend_from_slice(&data[c.to as usize..(c.to + c.len) as usize]);
    }
    out
}

/// Unpacks a packed form whole (the worker does the same copies on JS buffers).
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>, SparseError> {
    let layout = Layout::parse(packed, packed.len() as u64)?;
    let mut out = vec![0u8; layout.total as usize];
    for c in layout.copies() {
        out[c.to as usize..(c.to + c.len) as usize]
            .copy_from_slice(&packed[c.from as usize..(c.from + c.len) as usize]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pages(spec: &[u8], tail: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for &b in spec {
            v.extend(std::iter::repeat_n(b, PAGE as usize));
        }
        v.truncate(v.len().saturating_sub(tail));
        v
    }

    #[test]
    fn zero_pages_are_left_out() {
        let data = pages(&[0, 1, 2, 0, 0, 3, 0], 0);
        let packed = pack(&data);
        let layout = Layout::parse(&packed, packed.len() as u64).unwrap();
        assert_eq!(layout.runs, vec![(1, 2), (5, 1)]);
        assert_eq!(packed.len(), FIXED + 16 + 3 * PAGE as usize);
        assert_eq!(unpack(&packed).unwrap(), data);
    }

    #[test]
    fn header_lengths_are_counted_without_overflow() {
        // 2^29 runs are 4 GiB of header: in 32-bit arithmetic that wraps to 0 and "fits".
        assert!(!header_holds(FIXED + 8, 1 << 29));
        assert!(!header_holds(FIXED + 8, u32::MAX));
        assert!(header_holds(FIXED + 8, 1));
        assert!(!header_holds(FIXED + 7, 1));
    }

    #[test]
    fn a_huge_run_count_is_refused_before_allocating() {
        // 2^29 runs and more overflowed `8 * n` in a 32-bit usize (wasm): a header of a
        // few bytes passed the length check and the allocation aborted the module.
        let mut packed = pack(&pages(&[1], 0));
        for runs in [1u32 << 29, u32::MAX] {
            packed[20..24].copy_from_slice(&runs.to_le_bytes());
            assert_eq!(
                Layout::parse(&packed, packed.len() as u64),
                Err(SparseError::Header)
            );
        }
    }

    #[test]
    fn a_short_last_page_is_kept_short() {
        let data = pages(&[0, 7, 9], 100);
        let packed = pack(&data);
        assert_eq!(packed.len(), FIXED + 8 + 2 * PAGE as usize - 100);
        assert_eq!(unpack(&packed).unwrap(), data);
    }

    #[test]
    fn chunked_scan_equals_whole() {
        let data = pages(&[1, 0, 1, 1, 0, 0, 1, 0], 0);
        let mut l = Layout::new(data.len() as u64).unwrap();
        for (i, c) in data.chunks(3 * PAGE as usize).enumerate() {
            l.scan((i * 3 * PAGE as usize) as u64, c);
        }
        let mut whole = Layout::new(data.len() as u64).unwrap();
        whole.scan(0, &data);
        assert_eq!(l, whole);
        assert_eq!(l.runs, vec![(0, 1), (2, 2), (6, 1)]);
    }

    #[test]
    fn empty_and_all_zero() {
        assert_eq!(unpack(&pack(&[])).unwrap(), Vec::<u8>::new());
        let z = vec![0u8; 5 * PAGE as usize + 3];
        let packed = pack(&z);
        assert_eq!(packed.len(), FIXED);
        assert_eq!(unpack(&packed).unwrap(), z);
    }

    #[test]
    fn bad_headers_are_refused() {
        let packed = pack(&pages(&[1, 0, 2], 0));
        assert_eq!(unpack(&packed[..10]), Err(SparseError::Header));
        let mut bad = packed.clone();
        bad[0] = b'X';
        assert_eq!(unpack(&bad), Err(SparseError::Header));
        let mut bad = packed.clone();
        bad[17] = 0; // page size 4096 -> 0

        assert_eq!(unpack(&bad), Err(SparseError::Header));
        // Runs out of order, touching, overlapping, empty or past the end.
        for runs in [
            [(2u32, 1u32), (0, 1)],
            [(0, 1), (1, 1)],
            [(0, 2), (1, 1)],
            [(0, 0), (2, 1)],
            [(0, 1), (2, 2)],
        ] {
            let mut h = packed[..FIXED].to_vec();
            for (a, b) in runs {
                h.extend_from_slice(&a.to_le_bytes());
                h.extend_from_slice(&b.to_le_bytes());
            }
            h.extend_from_slice(&packed[FIXED + 16..]);
            assert!(matches!(unpack(&h), Err(SparseError::Run(_))), "{runs:?}");
        }
        // More runs declared than the header holds, and a byte missing or extra.
        let mut bad = packed.clone();
        bad[20] = 200;
        assert!(unpack(&bad).is_err());
        assert!(matches!(
            unpack(&packed[..packed.len() - 1]),
            Err(SparseError::Length { .. })
        ));
        let mut long = packed.clone();
        long.push(0);
        assert!(matches!(unpack(&long), Err(SparseError::Length { .. })));
        // A total past the limit.
        let mut bad = packed;
        bad[8..16].copy_from_slice(&(MAX_TOTAL + 1).to_le_bytes());
        assert_eq!(unpack(&bad), Err(SparseError::Header));
    }

    proptest! {
        #[test]
        fn round_trip(spec in proptest::collection::vec(0u8..3, 0..40), tail in 0usize..4096, noise in any::<u8>()) {
            let mut data = pages(&spec, tail.min(spec.len() * PAGE as usize));
            // A single non-zero byte anywhere keeps its page.
            if !data.is_empty() && noise != 0 {
                let at = noise as usize * 997 % data.len();
                data[at] = noise;
            }
            let packed = pack(&data);
            prop_assert!(packed.len() <= data.len() + FIXED + 8 * spec.len().div_ceil(2) + 8);
            prop_assert_eq!(unpack(&packed).unwrap(), data);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut b = bytes;
            if b.len() >= 8 {
                b[..8].copy_from_slice(b"FXZP\x01\0\0\0");
            }
            let _ = unpack(&b);
        }
    }
}
