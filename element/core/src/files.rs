//! The den's file map: the memory store, and the working copy of an IndexedDB store.
//!
//! Every change goes through [`FileMap::apply`], which checks a whole batch first
//! (paths, folder/file conflicts, the size cap) and then applies all of it or nothing.

use crate::paths::{normalize_file_path, PathError};
use crate::vecmap::VecMap;
use std::sync::Arc;

/// One stored file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    /// The content.
    pub data: Arc<[u8]>,
    /// SHA-256 of `data`.
    pub sha256: [u8; 32],
    /// Last modification, milliseconds since the Unix epoch.
    pub mtime_ms: f64,
}

impl FileEntry {
    /// Builds an entry, hashing the data.
    pub fn new(data: impl Into<Arc<[u8]>>, mtime_ms: f64) -> Self {
        let data = data.into();
        let sha256 = crate::sha256(&data);
        FileEntry {
            data,
            sha256,
            mtime_ms,
        }
    }
}

/// One change in a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Create or replace a file.
    Put {
        /// File path (normalized again by `apply`).
        path: String,
        /// The new entry.
        entry: FileEntry,
    },
    /// Delete a file; deleting a missing file is not an error and changes nothing.
    Delete {
        /// File path.
        path: String,
    },
}

/// What a batch changed, each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// Files that did not exist before.
    pub created: Vec<String>,
    /// Files whose content changed.
    pub changed: Vec<String>,
    /// Files that were removed.
    pub deleted: Vec<String>,
}

impl ChangeSet {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }
}

/// Why a batch was refused. A refused batch changes nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StorageError {
    /// A path broke a rule.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The den would exceed its size cap.
    #[error("the den would hold {needed} bytes, over its cap of {cap} bytes (maxDenBytes); nothing was changed")]
    CapExceeded {
        /// Size the den would have.
        needed: u64,
        /// The cap.
        cap: u64,
    },
    /// The den would hold more files than its cap.
    #[error("the den would hold {count} files, over its cap of {max} files (maxFiles); nothing was changed")]
    TooManyFiles {
        /// Files the den would hold.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// One file would be larger than the per-file cap.
    #[error("{path:?} would hold {size} bytes, over the cap of {max} bytes per file (maxFileBytes); nothing was changed")]
    FileTooBig {
        /// The file.
        path: String,
        /// Its new size.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// The batch would go over the den's writes per minute.
    #[error("{wanted} file writes now would make {total} in the last minute, over the limit of {max} (maxWritesPerMinute); nothing was changed")]
    TooManyWrites {
        /// Files this batch writes (created, changed or deleted).
        wanted: u32,
        /// Writes in the last minute with this batch.
        total: u32,
        /// The limit.
        max: u32,
    },
    /// The page has no memory left for the bytes: every den of a page keeps its files in the
    /// host's one WebAssembly memory (4 GiB at most).
    #[error("the page has no memory left for {bytes} more bytes of files (the host keeps every den's files in its WebAssembly memory, 4 GiB at most); nothing was changed")]
    NoRoom {
        /// The bytes that did not fit.
        bytes: u64,
    },
    /// A file and a folder would share a path (`/work/a` a file and `/work/a/b` a file).
    #[error("{path:?} conflicts with existing {other:?}: a path cannot be both a file and a folder; nothing was changed")]
    Conflict {
        /// The path being written.
        path: String,
        /// The existing path it conflicts with.
        other: String,
    },
}

/// The caps every batch is checked against (the den's `maxDenBytes`, `maxFileBytes`, `maxFiles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteLimits {
    /// Total bytes of all files.
    pub max_den_bytes: u64,
    /// Bytes of one file (checked for files a batch creates or changes).
    pub max_file_bytes: u64,
    /// Number of files.
    pub max_files: usize,
}

impl WriteLimits {
    /// A total-bytes cap with the default file-count cap and no per-file cap.
    pub fn den_bytes(max_den_bytes: u64) -> Self {
        WriteLimits {
            max_den_bytes,
            max_file_bytes: u64::MAX,
            max_files: crate::limits::DEFAULT_MAX_FILES,
        }
    }
}

/// A sliding one-minute window of file writes (`maxWritesPerMinute`); 0 means no limit.
#[derive(Debug, Clone, Default)]
pub struct WriteRate {
    per_minute: u32,
    /// (time in ms, files written), oldest first.
    recent: Vec<(f64, u32)>,
    /// The files written in `recent`, kept as it changes (a check costs no sum over it).
    in_window: u64,
}

impl WriteRate {
    /// A window allowing `per_minute` file writes (0: unlimited).
    pub fn new(per_minute: u32) -> Self {
        WriteRate {
            per_minute,
            recent: Default::default(),
            in_window: 0,
        }
    }

    /// Admits `files` writes at `now_ms`, or refuses them (and records nothing).
    pub fn admit(&mut self, now_ms: f64, files: u32) -> Result<(), StorageError> {
        self.check(now_ms, files)?;
        self.record(now_ms, files);
        Ok(())
    }

    /// Whether `files` writes at `now_ms` are within the limit; records nothing (a batch that
    /// may still fail, e.g. in IndexedDB, is [`Self::record`]ed once it was kept). `now_ms`
    /// must not go back (a monotonic clock: the page's `performance.now()`).
    pub fn check(&mut self, now_ms: f64, files: u32) -> Result<(), StorageError> {
        if self.per_minute == 0 || files == 0 {
            return Ok(());
        }
        // Those that left the window go (a Vec, not a VecDeque: less code in the wasm module).
        let gone = (self.recent.iter())
            .take_while(|&&(t, _)| now_ms - t >= 60_000.0)
            .count();
        for &(_, n) in &self.recent[..gone] {
            self.in_window -= u64::from(n);
        }
        self.recent.drain(..gone);
        let total = self.in_window + u64::from(files);
        if total > u64::from(self.per_minute) {
            return Err(StorageError::TooManyWrites {
                wanted: files,
                total: u32::try_from(total).unwrap_or(u32::MAX),
                max: self.per_minute,
            });
        }
        Ok(())
    }

    /// Counts `files` writes made at `now_ms`.
    pub fn record(&mut self, now_ms: f64, files: u32) {
        if self.per_minute != 0 && files != 0 {
            self.recent.push((now_ms, files));
            self.in_window += u64::from(files);
        }
    }
}

/// The path an op is on.
fn op_path(op: &Op) -> &str {
    match op {
        Op::Put { path, .. } | Op::Delete { path } => path,
    }
}

/// All files of a den, by normalized path.
#[derive(Debug, Clone, Default)]
pub struct FileMap {
    /// (A sorted list, not a `BTreeMap`: a batch is merged in, see [`FileMap::apply_checked`].)
    files: VecMap<String, FileEntry>,
    total: u64,
    /// Bumped by every applied batch (lets the sync state skip comparing unchanged files).
    version: u64,
}

/// Two maps are equal when they hold the same files (whatever their history).
impl PartialEq for FileMap {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files && self.total == other.total
    }
}

impl FileMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entry at a normalized path.
    pub fn get(&self, path: &str) -> Option<&FileEntry> {
        self.files.get(path)
    }

    /// All files, sorted by path.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &FileEntry)> {
        self.files.iter()
    }

    /// The file at the normalized `path`, or the files under the folder `path`, sorted by path
    /// (`""`: every file).
    pub fn under<'a>(&'a self, path: &'a str) -> impl Iterator<Item = (&'a String, &'a FileEntry)> {
        let files = self.files.entries();
        files[files.partition_point(|(p, _)| p.as_str() < path)..]
            .iter()
            .map(|(p, e)| (p, e))
            .take_while(move |(p, _)| p.starts_with(path))
            .filter(move |(p, _)| p.len() == path.len() || p.as_bytes()[path.len()] == b'/')
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Total bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Checks a batch without applying it; returns the normalized batch and what it would change.
    pub fn check(&self, ops: Vec<Op>, cap: u64) -> Result<(Vec<Op>, ChangeSet), StorageError> {
        self.check_limits(ops, &WriteLimits::den_bytes(cap))
    }

    /// Checks a batch against all of `limits` without applying it.
    pub fn check_limits(
        &self,
        ops: Vec<Op>,
        limits: &WriteLimits,
    ) -> Result<(Vec<Op>, ChangeSet), StorageError> {
        let cap = limits.max_den_bytes;
        // Later ops on the same path win; resolve to a final state per path first.
        // (A list sorted by path, not a map: one more BTreeMap type costs kilobytes of wasm.)
        let mut all: Vec<(String, Option<FileEntry>)> = Vec::with_capacity(ops.len());
        for op in ops {
            all.push(match op {
                Op::Put { path, entry } => (normalize_file_path(&path)?, Some(entry)),
                Op::Delete { path } => (normalize_file_path(&path)?, None),
            });
        }
        // Stable: of the ops on one path, the last one sorted is the last one given.
        crate::order::sort_by(&mut all, &|a, b| a.0.cmp(&b.0));
        let mut last: Vec<(String, Option<FileEntry>)> = Vec::with_capacity(all.len());
        for (path, state) in all {
            if last.last().is_some_and(|(p, _)| *p == path) {
                last.pop();
            }
            last.push((path, state));
        }
        let mut total = self.total as i128;
        let mut changes = ChangeSet::default();
        let mut normalized = Vec::with_capacity(last.len());
        for (path, new) in &last {
            let old = self.files.get(path);
            match (old, new) {
                (None, None) => continue,
                (Some(o), None) => {
                    total -= o.data.len() as i128;
                    changes.deleted.push(path.clone());
                }
                (old, Some(n)) => {
                    if let Some(o) = old {
                        if o.sha256 == n.sha256 {
                            // The same content: no change; a new time is still kept (a
                            // restore gives files their snapshot's times, as a write does).
                            if o.mtime_ms != n.mtime_ms {
                                normalized.push(Op::Put {
                                    path: path.clone(),
                                    entry: FileEntry {
                                        data: o.data.clone(),
                                        ..n.clone()
                                    },
                                });
                            }
                            continue;
                        }
                        total -= o.data.len() as i128;
                        changes.changed.push(path.clone());
                    } else {
                        changes.created.push(path.clone());
                    }
                    let size = n.data.len() as u64;
                    if size > limits.max_file_bytes {
                        return Err(StorageError::FileTooBig {
                            path: path.clone(),
                            size,
                            max: limits.max_file_bytes,
                        });
                    }
                    total += n.data.len() as i128;
                }
            }
            normalized.push(match new {
                Some(entry) => Op::Put {
                    path: path.clone(),
                    entry: entry.clone(),
                },
                None => Op::Delete { path: path.clone() },
            });
        }
        // Folder/file conflicts against the state after the batch.
        for path in &changes.created {
            let exists_after = |p: &str| match last.binary_search_by(|(k, _)| k.as_str().cmp(p)) {
                Ok(i) => last[i].1.is_some(),
                Err(_) => self.files.contains_key(p),
            };
            // An ancestor that is a file.
            let mut idx = path.len();
            while let Some(pos) = path[..idx].rfind('/') {
                if pos == 0 {
                    break;
                }
                let ancestor = &path[..pos];
                if exists_after(ancestor) {
                    return Err(StorageError::Conflict {
                        path: path.clone(),
                        other: ancestor.to_owned(),
                    });
                }
                idx = pos;
            }
            // A descendant that is a file.
            let prefix = format!("{path}/");
            let files = self.files.entries();
            let below = files[files.partition_point(|(k, _)| *k < prefix)..]
                .iter()
                .take_while(|(k, _)| k.starts_with(&prefix))
                .map(|(k, _)| k.clone())
                .chain(
                    last[last.partition_point(|(k, _)| *k < prefix)..]
                        .iter()
                        .take_while(|(k, _)| k.starts_with(&prefix))
                        .map(|(k, _)| k.clone()),
                )
                .find(|k| exists_after(k));
            if let Some(other) = below {
                return Err(StorageError::Conflict {
                    path: path.clone(),
                    other,
                });
            }
        }
        let needed = total.max(0) as u64;
        if needed > cap && needed > self.total {
            return Err(StorageError::CapExceeded { needed, cap });
        }
        let count =
            (self.files.len() + changes.created.len()).saturating_sub(changes.deleted.len());
        let max = limits.max_files;
        if count > max && count > self.files.len() {
            return Err(StorageError::TooManyFiles { count, max });
        }
        Ok((normalized, changes))
    }

    /// Applies a batch: all of it, or (on error) nothing.
    pub fn apply(&mut self, ops: Vec<Op>, cap: u64) -> Result<ChangeSet, StorageError> {
        let (ops, changes) = self.check(ops, cap)?;
        self.apply_checked(ops);
        Ok(changes)
    }

    /// Applies a batch returned by [`FileMap::check`] on this same map.
    pub fn apply_checked(&mut self, ops: Vec<Op>) {
        self.version += 1;
        // A large batch is merged in, in one pass (each insertion into the sorted list would
        // move the files after it). A checked batch is sorted by path, each path once.
        if ops.len() > 16 && ops.windows(2).all(|w| op_path(&w[0]) < op_path(&w[1])) {
            self.merge(ops);
            return;
        }
        for op in ops {
            match op {
                Op::Put { path, entry } => {
                    self.total += entry.data.len() as u64;
                    if let Some(old) = self.files.insert(path, entry) {
                        self.total -= old.data.len() as u64;
                    }
                }
                Op::Delete { path } => {
                    if let Some(old) = self.files.remove(&path) {
                        self.total -= old.data.len() as u64;
                    }
                }
            }
        }
    }

    /// [`Self::apply_checked`] for a batch sorted by path, each path once.
    fn merge(&mut self, ops: Vec<Op>) {
        let old = self.files.take_all();
        let mut merged = Vec::with_capacity(old.len() + ops.len());
        let mut old = old.into_iter().peekable();
        for op in ops {
            while let Some(kept) = old.next_if(|(p, _)| p.as_str() < op_path(&op)) {
                merged.push(kept);
            }
            if let Some((_, e)) = old.next_if(|(p, _)| p.as_str() == op_path(&op)) {
                self.total -= e.data.len() as u64;
            }
            if let Op::Put { path, entry } = op {
                self.total += entry.data.len() as u64;
                merged.push((path, entry));
            }
        }
        merged.extend(old);
        self.files = VecMap::from_sorted(merged);
    }

    /// A number that changes whenever a batch is applied.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The batch that turns this map into `other` (used by restore).
    pub fn diff_to(&self, other: &FileMap) -> Vec<Op> {
        let mut ops = Vec::new();
        for path in self.files.keys() {
            if !other.files.contains_key(path.as_str()) {
                ops.push(Op::Delete { path: path.clone() });
            }
        }
        for (path, entry) in other.files.iter() {
            if self
                .files
                .get(path.as_str())
                .map(|e| (e.sha256, e.mtime_ms))
                != Some((entry.sha256, entry.mtime_ms))
            {
                ops.push(Op::Put {
                    path: path.clone(),
                    entry: entry.clone(),
                });
            }
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_large_batch_is_merged_as_its_ops_would_apply_one_by_one() {
        let put = |p: &str, n: usize| Op::Put {
            path: p.into(),
            entry: FileEntry::new(vec![b'x'; n], n as f64),
        };
        let mut merged = FileMap::new();
        let first: Vec<Op> = (0..50).map(|i| put(&format!("/work/f{i:02}"), i)).collect();
        merged.apply(first, u64::MAX).expect("first batch");
        let mut one_by_one = merged.clone();
        let mut batch = Vec::new();
        for i in (0..60).step_by(3) {
            batch.push(put(&format!("/work/f{i:02}"), 100 + i));
            batch.push(Op::Delete {
                path: format!("/work/f{:02}", i + 1),
            });
        }
        batch.push(put("/drop/a", 7));
        batch.push(Op::Delete {
            path: "/out/none".into(),
        });
        let (checked, _) = merged.check(batch, u64::MAX).expect("second batch");
        assert!(checked.len() > 16);
        for op in checked.clone() {
            one_by_one.apply_checked(vec![op]);
        }
        merged.apply_checked(checked);
        assert_eq!(merged, one_by_one);
        assert_eq!(merged.total_bytes(), one_by_one.total_bytes());
        assert!(merged
            .iter()
            .map(|(p, _)| p)
            .eq(one_by_one.iter().map(|(p, _)| p)));
        let sizes: usize = merged.iter().map(|(_, e)| e.data.len()).sum();
        assert_eq!(merged.total_bytes(), sizes as u64);
        assert_eq!(merged.under("/work/f0").count(), 0);
        assert_eq!(merged.under("/work").count(), merged.len() - 1);
    }

    use super::*;

    fn put(p: &str, d: &[u8]) -> Op {
        Op::Put {
            path: p.into(),
            entry: FileEntry::new(d.to_vec(), 1.0),
        }
    }

    #[test]
    fn under_is_the_file_or_the_folder_never_a_name_that_only_begins_alike() {
        let mut m = FileMap::new();
        let paths = [
            "/drop/x",
            "/work/a.txt",
            "/work/a/b",
            "/work/a/c/d",
            "/work/ab",
        ];
        m.apply(paths.iter().map(|p| put(p, b"1")).collect(), 100)
            .unwrap();
        let under = |p: &str| m.under(p).map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(under("/work/a"), ["/work/a/b", "/work/a/c/d"]);
        assert_eq!(under("/work/a.txt"), ["/work/a.txt"]);
        assert_eq!(under("/work/a/c"), ["/work/a/c/d"]);
        assert_eq!(under("/work"), paths[1..].to_vec());
        assert_eq!(under("/drop"), ["/drop/x"]);
        assert!(under("/out").is_empty());
        assert!(under("/work/a/b/c").is_empty());
        assert_eq!(under(""), paths.to_vec());
    }

    #[test]
    fn a_new_time_of_the_same_content_is_kept_but_is_no_change() {
        let mut m = FileMap::new();
        m.apply(vec![put("/drop/a", b"1")], 100).unwrap();
        let mut other = m.clone();
        other
            .apply(
                vec![Op::Put {
                    path: "/drop/a".into(),
                    entry: FileEntry::new(b"1".to_vec(), 5.0),
                }],
                100,
            )
            .unwrap();
        assert_eq!(other.get("/drop/a").map(|e| e.mtime_ms), Some(5.0));
        let ops = m.diff_to(&other);
        assert_eq!(ops.len(), 1);
        let (ops, changes) = m.check(ops, 100).unwrap();
        assert!(changes.is_empty());
        m.apply_checked(ops);
        assert_eq!(m, other);
        assert!(m.diff_to(&other).is_empty());
    }

    #[test]
    fn apply_reports_changes() {
        let mut m = FileMap::new();
        let c = m
            .apply(vec![put("/drop/a", b"1"), put("/work//b/", b"22")], 100)
            .unwrap();
        assert_eq!(c.created, vec!["/drop/a", "/work/b"]);
        assert_eq!(m.total_bytes(), 3);
        let c = m
            .apply(vec![put("/drop/a", b"1"), put("/work/b", b"3")], 100)
            .unwrap();
        assert!(c.created.is_empty() && c.deleted.is_empty());
        assert_eq!(c.changed, vec!["/work/b"]);
        let c = m
            .apply(
                vec![
                    Op::Delete {
                        path: "/drop/a".into(),
                    },
                    Op::Delete {
                        path: "/drop/zz".into(),
                    },
                ],
                100,
            )
            .unwrap();
        assert_eq!(c.deleted, vec!["/drop/a"]);
        assert_eq!(m.total_bytes(), 1);
    }

    #[test]
    fn cap_and_atomicity() {
        let mut m = FileMap::new();
        m.apply(vec![put("/drop/a", b"12345")], 10).unwrap();
        let before = m.clone();
        let e = m
            .apply(vec![put("/drop/b", b"1"), put("/drop/c", b"123456")], 10)
            .unwrap_err();
        assert!(matches!(
            e,
            StorageError::CapExceeded {
                needed: 12,
                cap: 10
            }
        ));
        assert_eq!(m, before);
        let e = m
            .apply(vec![put("/drop/b", b"1"), put("/etc/x", b"1")], 10)
            .unwrap_err();
        assert!(matches!(e, StorageError::Path(_)));
        assert_eq!(m, before);
        // Shrinking is always allowed even when over a (lowered) cap.
        m.apply(vec![put("/drop/a", b"1")], 0).unwrap();
    }

    #[test]
    fn conflicts() {
        let mut m = FileMap::new();
        m.apply(vec![put("/work/a", b"1")], 100).unwrap();
        assert!(matches!(
            m.apply(vec![put("/work/a/b", b"1")], 100),
            Err(StorageError::Conflict { .. })
        ));
        m.apply(vec![put("/work/c/d", b"1")], 100).unwrap();
        assert!(matches!(
            m.apply(vec![put("/work/c", b"1")], 100),
            Err(StorageError::Conflict { .. })
        ));
        // Replacing a file by a folder in one batch is fine.
        m.apply(
            vec![
                Op::Delete {
                    path: "/work/a".into(),
                },
                put("/work/a/b", b"1"),
            ],
            100,
        )
        .unwrap();
    }

    #[test]
    fn diff_round_trip() {
        let mut a = FileMap::new();
        a.apply(vec![put("/drop/a", b"1"), put("/drop/b", b"2")], 100)
            .unwrap();
        let mut b = FileMap::new();
        b.apply(vec![put("/drop/b", b"3"), put("/out/c", b"4")], 100)
            .unwrap();
        let mut x = a.clone();
        x.apply(a.diff_to(&b), 100).unwrap();
        assert_eq!(
            x.iter()
                .map(|(k, v)| (k.clone(), v.sha256))
                .collect::<Vec<_>>(),
            b.iter()
                .map(|(k, v)| (k.clone(), v.sha256))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn per_file_and_file_count_limits() {
        let limits = WriteLimits {
            max_den_bytes: 1 << 20,
            max_file_bytes: 4,
            max_files: 2,
        };
        let mut m = FileMap::new();
        let (ops, _) = m
            .check_limits(vec![put("/work/a", b"1234")], &limits)
            .unwrap();
        m.apply_checked(ops);
        let before = m.clone();
        // One byte over the per-file cap refuses the whole batch.
        let big = m.check_limits(
            vec![put("/work/b", b"1"), put("/work/c", b"12345")],
            &limits,
        );
        assert_eq!(
            big.unwrap_err(),
            StorageError::FileTooBig {
                path: "/work/c".into(),
                size: 5,
                max: 4
            }
        );
        assert!(big_message_names_option(
            &StorageError::FileTooBig {
                path: "/x".into(),
                size: 5,
                max: 4
            },
            "maxFileBytes"
        ));
        // A file already over the cap may stay (or be deleted); only new content is checked.
        let (ops, _) = m.check_limits(vec![put("/work/b", b"x")], &limits).unwrap();
        m.apply_checked(ops);
        let third = m.check_limits(vec![put("/work/c", b"y")], &limits);
        assert!(matches!(
            third,
            Err(StorageError::TooManyFiles { count: 3, max: 2 })
        ));
        // Replacing one file by another keeps the count.
        let swap = vec![
            Op::Delete {
                path: "/work/b".into(),
            },
            put("/work/c", b"y"),
        ];
        assert!(m.check_limits(swap, &limits).is_ok());
        assert_ne!(m, before);
    }

    fn big_message_names_option(e: &StorageError, option: &str) -> bool {
        e.to_string().contains(option) && e.to_string().contains("nothing was changed")
    }

    #[test]
    fn writes_per_minute_slide() {
        let mut r = WriteRate::new(5);
        assert!(r.admit(0.0, 3).is_ok());
        assert!(r.admit(1_000.0, 2).is_ok());
        let e = r.admit(2_000.0, 1).unwrap_err();
        assert_eq!(
            e,
            StorageError::TooManyWrites {
                wanted: 1,
                total: 6,
                max: 5
            }
        );
        assert!(big_message_names_option(&e, "maxWritesPerMinute"));
        // A refused batch is not counted; the first 3 leave the window after a minute.
        assert!(r.admit(59_999.0, 1).is_err());
        assert!(r.admit(60_000.0, 3).is_ok());
        assert!(r.admit(60_001.0, 1).is_err());
        // Unlimited.
        let mut off = WriteRate::new(0);
        assert!(off.admit(0.0, 1_000_000).is_ok());
        // One batch bigger than the limit is refused outright.
        assert!(WriteRate::new(2).admit(0.0, 3).is_err());
        // check() alone records nothing: a batch that failed later costs no budget.
        let mut r = WriteRate::new(3);
        for _ in 0..10 {
            assert!(r.check(0.0, 3).is_ok());
        }
        r.record(0.0, 3);
        assert!(r.check(1.0, 1).is_err());
    }

    #[test]
    fn file_count_is_capped() {
        let mut m = FileMap::new();
        let max = crate::limits::DEFAULT_MAX_FILES;
        let ops: Vec<Op> = (0..max)
            .map(|i| Op::Put {
                path: format!("/work/f{i}"),
                entry: FileEntry::new(Vec::new(), 0.0),
            })
            .collect();
        assert!(m.apply(ops, 1 << 20).is_ok());
        let one_more = vec![Op::Put {
            path: "/work/extra".into(),
            entry: FileEntry::new(Vec::new(), 0.0),
        }];
        let before = m.clone();
        assert!(matches!(
            m.apply(one_more, 1 << 20),
            Err(StorageError::TooManyFiles { count, max: cap }) if count == max + 1 && cap == max
        ));
        assert_eq!(m, before);
        // Replacing and deleting still work at the cap.
        let swap = vec![
            Op::Delete {
                path: "/work/f0".into(),
            },
            Op::Put {
                path: "/work/extra".into(),
                entry: FileEntry::new(vec![1], 0.0),
            },
        ];
        assert!(m.apply(swap, 1 << 20).is_ok());
        assert_eq!(m.len(), max);
    }
}
