//! What the sandbox's worker already holds, so a run ships only differences.
//!
//! The host keeps, per path, the SHA-256 of the content it believes the worker has
//! (`None`: the worker has *something* there that the host did not accept, so the
//! host's version must be sent again or the file deleted). A worker restart empties it.

use crate::files::FileMap;
use std::collections::HashMap;

/// The host's view of the worker's files.
#[derive(Debug, Clone, Default)]
pub struct SyncState {
    worker: HashMap<String, Option<[u8; 32]>>,
}

/// What to send before a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncPlan {
    /// Files to write into the worker (the store's content).
    pub put: Vec<String>,
    /// Files to delete in the worker.
    pub delete: Vec<String>,
}

impl SyncState {
    /// Empty: the worker holds no files (new or restarted worker).
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything (the worker restarted).
    pub fn reset(&mut self) {
        self.worker.clear();
    }

    /// The differences between `files` and the worker; cost is O(number of files), never O(bytes).
    pub fn plan(&self, files: &FileMap) -> SyncPlan {
        let mut plan = SyncPlan::default();
        for (path, entry) in files.iter() {
            if self.worker.get(path) != Some(&Some(entry.sha256)) {
                plan.put.push(path.clone());
            }
        }
        for path in self.worker.keys() {
            if files.get(path).is_none() {
                plan.delete.push(path.clone());
            }
        }
        plan.delete.sort();
        plan
    }

    /// Records that `plan` was delivered.
    pub fn delivered(&mut self, plan: &SyncPlan, files: &FileMap) {
        for path in &plan.delete {
            self.worker.remove(path);
        }
        for path in &plan.put {
            if let Some(e) = files.get(path) {
                self.worker.insert(path.clone(), Some(e.sha256));
            }
        }
    }

    /// Records that the worker holds `sha` at `path` (`None`: unknown content).
    pub fn set(&mut self, path: &str, sha: Option<[u8; 32]>) {
        self.worker.insert(path.to_owned(), sha);
    }

    /// Records that the worker has no file at `path`.
    pub fn remove(&mut self, path: &str) {
        self.worker.remove(path);
    }

    /// The hash the worker is believed to hold at `path`.
    pub fn get(&self, path: &str) -> Option<Option<[u8; 32]>> {
        self.worker.get(path).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{FileEntry, Op};

    #[test]
    fn ships_only_differences() {
        let mut files = FileMap::new();
        let put = |p: &str, d: &[u8]| Op::Put {
            path: p.into(),
            entry: FileEntry::new(d.to_vec(), 0.0),
        };
        files
            .apply(vec![put("/drop/a", b"1"), put("/drop/b", b"2")], 1 << 20)
            .unwrap();
        let mut s = SyncState::new();
        let p = s.plan(&files);
        assert_eq!(p.put, vec!["/drop/a", "/drop/b"]);
        s.delivered(&p, &files);
        assert_eq!(s.plan(&files), SyncPlan::default());
        files
            .apply(
                vec![
                    put("/drop/a", b"9"),
                    Op::Delete {
                        path: "/drop/b".into(),
                    },
                ],
                1 << 20,
            )
            .unwrap();
        let p = s.plan(&files);
        assert_eq!(p.put, vec!["/drop/a"]);
        assert_eq!(p.delete, vec!["/drop/b"]);
        s.delivered(&p, &files);
        s.set("/out/x", None);
        assert_eq!(s.plan(&files).delete, vec!["/out/x"]);
        s.reset();
        assert_eq!(s.plan(&files).put, vec!["/drop/a"]);
    }
}
