//! A map kept as a list sorted by key.
//!
//! `std::collections::HashMap` brings hashbrown and SipHash into the wasm module, and each
//! `BTreeMap` key/value type adds several KB of node-balancing code. The maps foxden keeps
//! (runs in flight, a run's pending requests, the worker's files) are small or change rarely,
//! so a sorted list with binary search is enough, and its code is small.

use std::borrow::Borrow;

/// A map from `K` to `V`, kept sorted by key; iteration is in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VecMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { items: Vec::new() }
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `k` is (`Ok`), or where it would go (`Err`).
    fn find<Q: Ord + ?Sized>(&self, k: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.items.binary_search_by(|(x, _)| x.borrow().cmp(k))
    }

    /// The value of `k`.
    pub fn get<Q: Ord + ?Sized>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| &self.items[i].1)
    }

    /// The value of `k`, to change.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| &mut self.items[i].1)
    }

    /// Whether `k` has a value.
    pub fn contains_key<Q: Ord + ?Sized>(&self, k: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(k).is_ok()
    }

    /// Sets the value of `k`; returns its previous value.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.find(&k) {
            Ok(i) => Some(std::mem::replace(&mut self.items[i].1, v)),
            Err(i) => {
                self.items.insert(i, (k, v));
                None
            }
        }
    }

    /// The value of `k`, made by `make` when it has none.
    pub fn get_or_insert_with(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&k) {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (k, make()));
                i
            }
        };
        &mut self.items[i].1
    }

    /// Removes `k`; returns its value.
    pub fn remove<Q: Ord + ?Sized>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| self.items.remove(i).1)
    }
}

impl<K, V> VecMap<K, V> {
    /// How many keys have a value.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Empties the map.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.items.iter().map(|(k, _)| k)
    }

    /// The entries, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.items.iter().map(|(k, v)| (k, v))
    }

    /// The values, in key order, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.items.iter_mut().map(|(_, v)| v)
    }

    /// The entries, in key order.
    pub fn entries(&self) -> &[(K, V)] {
        &self.items
    }

    /// A map of `items`, which are sorted by key, each key once.
    pub(crate) fn from_sorted(items: Vec<(K, V)>) -> Self {
        VecMap { items }
    }

    /// Empties the map; returns its entries in key order.
    pub fn take_all(&mut self) -> Vec<(K, V)> {
        std::mem::take(&mut self.items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn behaves_like_a_btreemap() {
        let mut seed = 11u64;
        let mut m = VecMap::new();
        let mut want = BTreeMap::new();
        for step in 0..2000u32 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = ((seed >> 33) % 64) as u32;
            match (seed >> 60) % 4 {
                0 | 1 => assert_eq!(m.insert(k, step), want.insert(k, step)),
                2 => assert_eq!(m.remove(&k), want.remove(&k)),
                _ => {
                    *m.get_or_insert_with(k, || step) += 1;
                    *want.entry(k).or_insert(step) += 1;
                }
            }
            assert_eq!(m.get(&k), want.get(&k));
            assert_eq!(m.contains_key(&k), want.contains_key(&k));
            assert_eq!(m.len(), want.len());
        }
        assert!(m.keys().eq(want.keys()));
        let all = m.take_all();
        assert!(m.is_empty());
        assert_eq!(all, want.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn looks_strings_up_by_str() {
        let mut m: VecMap<String, u8> = VecMap::new();
        m.insert("b".into(), 2);
        m.insert("a".into(), 1);
        assert_eq!(m.get("a"), Some(&1));
        *m.get_mut("b").unwrap_or(&mut 0) = 3;
        assert_eq!(m.remove("b"), Some(3));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a"]);
    }
}
