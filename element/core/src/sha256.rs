//! SHA-256 (FIPS 180-4), our own: every file's digest, snapshot verification and the warm
//! cache's checks go through it, in wasm, where there is no SHA extension or SIMD to use.
//!
//! Written for that: the 64 rounds are unrolled by macro over eight plain locals (each round
//! renames them instead of moving values) and the message schedule is a rolling window of 16
//! words. It runs as fast at `opt-level = "z"` (the rest of the wasm module) as at 3: about
//! 260 MiB/s in V8, where the `sha2` crate's portable code gave 130 MiB/s at `z` and needed a
//! per-package `opt-level = 3`. Checked against the FIPS 180-4 examples and, in the property
//! tests, against the `sha2` crate for random data split at random places.

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// Compresses `blocks` (64 bytes each) into `state`.
fn compress(state: &mut [u32; 8], blocks: &[u8]) {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for block in blocks.chunks_exact(64) {
        let mut w = [0u32; 16];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        let (sa, sb, sc, sd, se, sf, sg, sh) = (a, b, c, d, e, f, g, h);
        // One round; the caller rotates the names instead of moving the values.
        macro_rules! round {
            ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $i:expr, $w:expr) => {
                let t1 = $h
                    .wrapping_add($e.rotate_right(6) ^ $e.rotate_right(11) ^ $e.rotate_right(25))
                    .wrapping_add(($e & $f) ^ (!$e & $g))
                    .wrapping_add(K[$i])
                    .wrapping_add($w);
                let t2 = ($a.rotate_right(2) ^ $a.rotate_right(13) ^ $a.rotate_right(22))
                    .wrapping_add(($a & $b) ^ ($a & $c) ^ ($b & $c));
                $d = $d.wrapping_add(t1);
                $h = t1.wrapping_add(t2);
            };
        }
        // Word i of the schedule (i >= 16), kept in w[i % 16].
        macro_rules! sched {
            ($i:expr) => {{
                let w15 = w[($i - 15) & 15];
                let w2 = w[($i - 2) & 15];
                let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
                let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
                w[$i & 15] = w[$i & 15]
                    .wrapping_add(s0)
                    .wrapping_add(w[($i - 7) & 15])
                    .wrapping_add(s1);
                w[$i & 15]
            }};
        }
        macro_rules! eight {
            ($i:expr, $get:ident) => {
                round!(a, b, c, d, e, f, g, h, $i, $get!($i));
                round!(h, a, b, c, d, e, f, g, $i + 1, $get!($i + 1));
                round!(g, h, a, b, c, d, e, f, $i + 2, $get!($i + 2));
                round!(f, g, h, a, b, c, d, e, $i + 3, $get!($i + 3));
                round!(e, f, g, h, a, b, c, d, $i + 4, $get!($i + 4));
                round!(d, e, f, g, h, a, b, c, $i + 5, $get!($i + 5));
                round!(c, d, e, f, g, h, a, b, $i + 6, $get!($i + 6));
                round!(b, c, d, e, f, g, h, a, $i + 7, $get!($i + 7));
            };
        }
        macro_rules! load {
            ($i:expr) => {
                w[$i]
            };
        }
        eight!(0, load);
        eight!(8, load);
        eight!(16, sched);
        eight!(24, sched);
        eight!(32, sched);
        eight!(40, sched);
        eight!(48, sched);
        eight!(56, sched);
        a = a.wrapping_add(sa);
        b = b.wrapping_add(sb);
        c = c.wrapping_add(sc);
        d = d.wrapping_add(sd);
        e = e.wrapping_add(se);
        f = f.wrapping_add(sf);
        g = g.wrapping_add(sg);
        h = h.wrapping_add(sh);
    }
    *state = [a, b, c, d, e, f, g, h];
}

/// An incremental SHA-256.
#[derive(Clone)]
pub struct Sha256 {
    state: [u32; 8],
    buf: [u8; 64],
    buf_len: usize,
    total: u64,
}

impl Default for Sha256 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sha256 {
    /// A hasher of nothing yet.
    pub fn new() -> Self {
        Sha256 {
            state: H0,
            buf: [0; 64],
            buf_len: 0,
            total: 0,
        }
    }

    /// Adds `data`.
    pub fn update(&mut self, mut data: &[u8]) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.buf_len > 0 {
            let take = (64 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 64 {
                return;
            }
            let block = self.buf;
            compress(&mut self.state, &block);
            self.buf_len = 0;
        }
        let whole = data.len() - data.len() % 64;
        compress(&mut self.state, &data[..whole]);
        let rest = &data[whole..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// The digest of everything added.
    pub fn finalize(mut self) -> [u8; 32] {
        let bits = self.total.wrapping_mul(8);
        let mut pad = [0u8; 72];
        pad[0] = 0x80;
        let pad_len = if self.buf_len < 56 {
            56 - self.buf_len
        } else {
            120 - self.buf_len
        };
        self.update(&pad[..pad_len]);
        self.update(&bits.to_be_bytes());
        debug_assert_eq!(self.buf_len, 0);
        let mut out = [0u8; 32];
        for (i, word) in self.state.iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

/// SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(data);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hex;

    #[test]
    fn fips_180_4_examples() {
        let cases: [(&[u8], &str); 3] = [
            (
                b"",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                b"abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            ),
        ];
        for (data, want) in cases {
            assert_eq!(hex(&sha256(data)), want);
        }
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            hex(&sha256(&million)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn pieces_give_the_same_digest_at_every_length_around_a_block() {
        // Lengths where the padding needs one block or two, fed whole and byte by byte.
        let data: Vec<u8> = (0..300u32).map(|i| (i * 31 + 7) as u8).collect();
        for len in 0..data.len() {
            let whole = sha256(&data[..len]);
            let mut h = Sha256::new();
            for b in &data[..len] {
                h.update(std::slice::from_ref(b));
            }
            assert_eq!(h.finalize(), whole, "length {len}");
            let mut h = Sha256::new();
            let (a, b) = data[..len].split_at(len / 3);
            h.update(a);
            h.update(&[]);
            h.update(b);
            assert_eq!(h.finalize(), whole, "length {len}, two pieces");
        }
    }
}
