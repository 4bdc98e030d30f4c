//! One compiled copy of the standard library's stable sort for the whole program.
//!
//! `slice::sort_by` is generic: each element type it is used with adds about 3 KB of code to the
//! wasm module. [`sort_by`] sorts a list of indices instead, so the sort itself is compiled once;
//! only the small step that moves the elements into place is generic.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably (equal elements keep their order).
pub fn sort_by<T>(v: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = sorted_indices(v.len(), &|a, b| cmp(&v[a], &v[b]));
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    // `order` is a permutation of 0..len, so every slot is taken exactly once.
    v.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// Sorts `v` by a key, stably.
pub fn sort_by_key<T, K: Ord>(v: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(v, &|a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` in ascending order, stably.
pub fn sort<T: Ord>(v: &mut Vec<T>) {
    sort_by(v, &|a, b| a.cmp(b));
}

/// `keys` sorted, each with its index (equal keys in their order in `keys`), and for each index
/// whether an earlier key is equal to it. For the callers that would otherwise each need a set
/// (every `BTreeSet` type adds kilobytes of code to the wasm module).
pub fn sorted_with_repeats<'a>(keys: &[&'a str]) -> (Vec<(&'a str, usize)>, Vec<bool>) {
    let mut sorted: Vec<(&'a str, usize)> = keys.iter().copied().zip(0..).collect();
    sort_by(&mut sorted, &|a, b| a.0.cmp(b.0));
    let mut repeat = vec![false; keys.len()];
    for w in sorted.windows(2) {
        if w[0].0 == w[1].0 {
            repeat[w[1].1] = true;
        }
    }
    (sorted, repeat)
}

/// The indices 0..n in the order `cmp` sorts them (stable): a bottom-up merge sort, a few
/// hundred bytes of wasm where the standard library's sort (driftsort) is about 4 KB. Runs
/// already in order are not merged (one comparison each), so sorted input costs O(n)
/// comparisons, as with driftsort.
fn sorted_indices(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut from: Vec<usize> = (0..n).collect();
    let mut to = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            if mid < hi && cmp(from[mid - 1], from[mid]) == Ordering::Greater {
                let (mut i, mut j) = (lo, mid);
                for slot in &mut to[lo..hi] {
                    // The left run's element first when equal: stable.
                    if i < mid && (j == hi || cmp(from[i], from[j]) != Ordering::Greater) {
                        *slot = from[i];
                        i += 1;
                    } else {
                        *slot = from[j];
                        j += 1;
                    }
                }
            } else {
                to[lo..hi].copy_from_slice(&from[lo..hi]);
            }
            lo = hi;
        }
        std::mem::swap(&mut from, &mut to);
        width *= 2;
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library() {
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 3, 5, 10, 17, 100, 1000, 1025] {
            let mut v: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 59) as u8, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|p| p.0);
            // Stable: equal keys keep their original order (the second field).
            sort_by_key(&mut v, |p| p.0);
            assert_eq!(v, want);
            // Runs already in order, ascending and descending, and all keys distinct.
            for k in [0u64, 1, u64::MAX] {
                let mut w: Vec<(u64, usize)> = (0..len)
                    .map(|i| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        let key = match k {
                            0 => (i / 7) as u64,
                            1 => (len - i) as u64,
                            _ => seed,
                        };
                        (key, i)
                    })
                    .collect();
                let mut want = w.clone();
                want.sort_by_key(|p| p.0);
                sort_by_key(&mut w, |p| p.0);
                assert_eq!(w, want);
            }
        }
        let (sorted, repeat) = sorted_with_repeats(&["b", "a", "b", "c", "a", "b"]);
        assert_eq!(
            sorted,
            [("a", 1), ("a", 4), ("b", 0), ("b", 2), ("b", 5), ("c", 3)]
        );
        assert_eq!(repeat, [false, false, true, false, true, true]);
        let mut s = vec!["b".to_string(), "a".into(), "c".into(), "a".into()];
        sort(&mut s);
        assert_eq!(s, ["a", "a", "b", "c"]);
        let mut d = vec![3, 1, 2];
        sort_by(&mut d, &|a, b| b.cmp(a));
        assert_eq!(d, [3, 2, 1]);
    }
}
