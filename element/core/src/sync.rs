//! What the sandbox's worker already holds, so a run ships only differences.
//!
//! The host keeps, per path, the SHA-256 of the content it believes the worker has
//! (`None`: the worker has *something* there that the host did not accept, so the
//! host's version must be sent again or the file deleted). A worker restart empties it.

use crate::files::{FileEntry, FileMap, Op};
use crate::paths::{normalize_file_path, visible_path, PathError};
use crate::protocol::ChangedFile;
use crate::readonly::ReadOnlyPaths;
use crate::vecmap::VecMap;

/// Changes to read-only paths named one by one in a run's notes; the rest are counted.
pub const MAX_READ_ONLY_NOTES: usize = 20;

/// Paths that broke a rule, noted by name (at most 120 characters of each); the others are
/// counted. A den page may name 20 000 paths of 4 096 UTF-16 units each: noted in full, that
/// would be over a gigabyte of notes.
pub const MAX_PATH_NOTES: usize = 20;

/// The host's view of the worker's files.
#[derive(Debug, Clone, Default)]
pub struct SyncState {
    worker: VecMap<String, Option<[u8; 32]>>,
    /// The store's version when the worker was last known to hold exactly its files: while the
    /// store has not changed since, a plan is empty without comparing every file.
    clean: Option<u64>,
    /// Counts the worker's restarts: each value is one interpreter.
    interpreter: u64,
}

/// What to send before a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncPlan {
    /// Files to write into the worker (the store's content).
    pub put: Vec<String>,
    /// Files to delete in the worker.
    pub delete: Vec<String>,
}

/// What a run handed back, as a batch for the store.
#[derive(Debug, Clone, Default)]
pub struct Returned {
    /// Store operations: content that differs from the store's, and deletions.
    pub ops: Vec<Op>,
    /// One line per path that was not kept (it broke a path rule), for the run's stderr.
    pub notes: String,
    /// (path, hash the worker now holds; `None` for a deletion), for each op.
    held: Vec<(String, Option<[u8; 32]>)>,
}

impl SyncState {
    /// Turns a run's reported changes into store operations. Paths are normalized (one that breaks
    /// a rule is noted and not kept); content equal to the store's is dropped and recorded as
    /// held by the worker, so it is not shipped back next run. A change to a read-only path is
    /// not kept either: it is noted (the first [`MAX_READ_ONLY_NOTES`] by name), and the
    /// worker's copy is marked unknown, so the den's version goes back before the next run.
    pub fn returned(
        &mut self,
        files: &FileMap,
        changed: Vec<ChangedFile>,
        deleted: Vec<String>,
        now_ms: f64,
        read_only: &ReadOnlyPaths,
    ) -> Returned {
        let mut r = Returned::default();
        let mut guarded = 0usize;
        let mut guard = |r: &mut Returned, what: &str, path: &str| {
            guarded += 1;
            if guarded <= MAX_READ_ONLY_NOTES {
                let why = read_only.why_guarded(path);
                r.notes.push_str(&format!(
                    "foxden: {what}{path:?} was not kept: {why}; the den's version is back before the next run\n"
                ));
            }
        };
        let mut broken = 0usize;
        let mut broke = |r: &mut Returned, what: &str, e: &PathError, outcome: &str| {
            broken += 1;
            if broken <= MAX_PATH_NOTES {
                let shown: String = visible_path(&e.path).chars().take(120).collect();
                r.notes.push_str(&format!(
                    "foxden: {what}{shown:?} {outcome}: invalid path ({}): {}\n",
                    e.rule.code(),
                    e.rule.explain()
                ));
            }
        };
        for f in changed {
            let path = match normalize_file_path(&f.path) {
                Ok(p) => p,
                Err(e) => {
                    broke(&mut r, "", &e, "was not kept");
                    continue;
                }
            };
            // Not copied (too big): the content is unknown, so is the worker's copy (shipped
            // again before the next run). The wire keeps only those it would not keep anyway.
            let Some(data) = f.data else {
                if read_only.guards_file(&path) {
                    guard(&mut r, "", &path);
                } else {
                    r.notes.push_str(&format!(
                        "foxden: {path:?} was not kept: it is larger than maxFileBytes\n"
                    ));
                }
                self.set(&path, None);
                continue;
            };
            let entry = FileEntry::new(data, now_ms);
            if files.get(&path).map(|e| e.sha256) == Some(entry.sha256) {
                self.set(&path, Some(entry.sha256));
                continue;
            }
            if read_only.guards_file(&path) {
                guard(&mut r, "", &path);
                self.set(&path, None);
                continue;
            }
            r.held.push((path.clone(), Some(entry.sha256)));
            r.ops.push(Op::Put { path, entry });
        }
        for p in deleted {
            match normalize_file_path(&p) {
                Ok(path) if read_only.covers(&path) => {
                    guard(&mut r, "the deletion of ", &path);
                    self.set(&path, None);
                }
                Ok(path) => {
                    r.held.push((path.clone(), None));
                    r.ops.push(Op::Delete { path });
                }
                Err(e) => broke(&mut r, "the deletion of ", &e, "was ignored"),
            }
        }
        if broken > MAX_PATH_NOTES {
            r.notes.push_str(&format!(
                "foxden: {} more invalid paths were not kept\n",
                broken - MAX_PATH_NOTES
            ));
        }
        if guarded > MAX_READ_ONLY_NOTES {
            r.notes.push_str(&format!(
                "foxden: {} more changes to read-only paths were not kept\n",
                guarded - MAX_READ_ONLY_NOTES
            ));
        }
        r
    }

    /// The store accepted a returned batch: the worker holds what the store now holds.
    pub fn committed(&mut self, r: &Returned) {
        for (path, sha) in &r.held {
            match sha {
                Some(s) => self.set(path, Some(*s)),
                None => self.remove(path),
            }
        }
    }

    /// The store refused a returned batch: the worker holds content the store does not have,
    /// so those paths are shipped (or deleted) again before the next run.
    pub fn refused(&mut self, r: &Returned) {
        for (path, _) in &r.held {
            self.set(path, None);
        }
    }

    /// The run's changes were refused without being read (over the byte cap): every path it named
    /// holds unknown content in the worker, to be shipped again (or deleted) before the next run.
    pub fn refused_paths<'a>(&mut self, paths: impl IntoIterator<Item = &'a str>) {
        for p in paths {
            if let Ok(path) = normalize_file_path(p) {
                self.set(&path, None);
            }
        }
    }

    /// Empty: the worker holds no files (new or restarted worker).
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything (the worker restarted).
    pub fn reset(&mut self) {
        self.worker.clear();
        self.clean = None;
        self.interpreter += 1;
    }

    /// Which interpreter the worker runs (a new number after each [`Self::reset`]).
    pub fn interpreter(&self) -> u64 {
        self.interpreter
    }

    /// The differences between `files` and the worker; cost is O(number of files), never O(bytes).
    pub fn plan(&self, files: &FileMap) -> SyncPlan {
        let mut plan = SyncPlan::default();
        if self.clean == Some(files.version()) {
            return plan;
        }
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
        crate::order::sort(&mut plan.delete);
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
        // A full plan was delivered: the worker now holds exactly the store's files.
        self.clean = Some(files.version());
    }

    /// Records that the worker holds `sha` at `path` (`None`: unknown content).
    pub fn set(&mut self, path: &str, sha: Option<[u8; 32]>) {
        if self.worker.get(path) != Some(&sha) {
            self.clean = None;
            self.worker.insert(path.to_owned(), sha);
        }
    }

    /// Records that the worker has no file at `path`.
    pub fn remove(&mut self, path: &str) {
        if self.worker.remove(path).is_some() {
            self.clean = None;
        }
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

    #[test]
    fn returned_changes_become_one_batch() {
        let mut files = FileMap::new();
        files
            .apply(
                vec![Op::Put {
                    path: "/work/same".into(),
                    entry: FileEntry::new(b"a".to_vec(), 0.0),
                }],
                1 << 20,
            )
            .unwrap();
        let mut sync = SyncState::new();
        let changed = vec![
            ChangedFile {
                path: "/work/same".into(),
                data: Some(b"a".as_slice().into()),
            },
            ChangedFile {
                path: "/work/new".into(),
                data: Some(b"b".as_slice().into()),
            },
            ChangedFile {
                path: "/etc/passwd".into(),
                data: Some(b"x".as_slice().into()),
            },
            ChangedFile {
                path: "/drop/../x".into(),
                data: Some(b"x".as_slice().into()),
            },
        ];
        let deleted = vec!["/work/gone".into(), "relative".into()];
        let r = sync.returned(&files, changed, deleted, 1.0, &ReadOnlyPaths::default());
        assert_eq!(r.ops.len(), 2, "{:?}", r.ops);
        assert!(matches!(&r.ops[0], Op::Put { path, .. } if path == "/work/new"));
        assert!(matches!(&r.ops[1], Op::Delete { path } if path == "/work/gone"));
        assert_eq!(r.notes.lines().count(), 3, "{}", r.notes);
        // Unchanged content is recorded as held, not shipped back.
        assert_eq!(sync.get("/work/same"), Some(Some(crate::sha256(b"a"))));
        let mut refused = sync.clone();
        refused.refused(&r);
        assert_eq!(refused.get("/work/new"), Some(None));
        assert_eq!(refused.get("/work/gone"), Some(None));
        sync.set("/work/gone", Some([0; 32]));
        sync.committed(&r);
        assert_eq!(sync.get("/work/new"), Some(Some(crate::sha256(b"b"))));
        assert_eq!(sync.get("/work/gone"), None);
    }

    #[test]
    fn invalid_paths_are_noted_short_and_at_most_twenty_by_name() {
        // 20 000 paths of 4 096 format characters (8 bytes each in a note, `\u{200b}`) once
        // made over a gigabyte of notes; now 20 lines of 120 characters and a count.
        let long = format!("/work/{}", "\u{200b}".repeat(4090));
        let changed = (0..10_000)
            .map(|_| ChangedFile {
                path: long.clone(),
                data: Some(b"x".as_slice().into()),
            })
            .collect();
        let deleted = vec![long.clone(); 10_000];
        let mut sync = SyncState::new();
        let r = sync.returned(
            &FileMap::new(),
            changed,
            deleted,
            1.0,
            &ReadOnlyPaths::default(),
        );
        assert!(r.ops.is_empty());
        let lines: Vec<&str> = r.notes.lines().collect();
        assert_eq!(lines.len(), MAX_PATH_NOTES + 1);
        assert!(r.notes.len() < 40_000, "{} bytes of notes", r.notes.len());
        assert!(lines[0].starts_with("foxden: \"/work/"), "{}", lines[0]);
        assert!(
            lines[0].ends_with(
                "was not kept: invalid path (too-long): a path must be at most 1024 bytes"
            ),
            "{}",
            lines[0]
        );
        assert_eq!(lines[20], "foxden: 19980 more invalid paths were not kept");
    }

    #[test]
    fn changes_to_read_only_paths_are_not_kept_and_go_back() {
        let mut files = FileMap::new();
        let put = |p: &str, d: &[u8]| Op::Put {
            path: p.into(),
            entry: FileEntry::new(d.to_vec(), 0.0),
        };
        files
            .apply(
                vec![put("/work/data/a.csv", b"1,2"), put("/work/free.txt", b"x")],
                1 << 20,
            )
            .unwrap();
        let ro = ReadOnlyPaths::parse(&["/work/data"]).unwrap();
        let mut sync = SyncState::new();
        let plan = sync.plan(&files);
        sync.delivered(&plan, &files);
        let file = |p: &str, d: &[u8]| ChangedFile {
            path: p.into(),
            data: Some(d.to_vec().into()),
        };
        let changed = vec![
            file("/work/data/a.csv", b"changed"),
            file("/work/data/new.csv", b"made"),
            file("/work/data/a.csv.bak", b"copy"),
            file("/work/free.txt", b"y"),
            file("/work/datafile", b"z"),
        ];
        let deleted = vec!["/work/data/a.csv".into()];
        let r = sync.returned(&files, changed, deleted, 1.0, &ro);
        let kept: Vec<&str> = r
            .ops
            .iter()
            .map(|o| match o {
                Op::Put { path, .. } | Op::Delete { path } => path.as_str(),
            })
            .collect();
        assert_eq!(kept, ["/work/free.txt", "/work/datafile"]);
        assert_eq!(r.notes.lines().count(), 4, "{}", r.notes);
        assert!(r.notes.contains(
            "foxden: \"/work/data/a.csv\" was not kept: it is read-only (readOnlyPaths)"
        ));
        assert!(r
            .notes
            .contains("foxden: the deletion of \"/work/data/a.csv\" was not kept"));
        files.apply(r.ops.clone(), 1 << 20).unwrap();
        sync.committed(&r);
        // Before the next run, the den's version goes back and what the code made goes away.
        let next = sync.plan(&files);
        assert_eq!(next.put, ["/work/data/a.csv"]);
        assert_eq!(next.delete, ["/work/data/a.csv.bak", "/work/data/new.csv"]);
        // Rewriting a read-only file with its own content is no change and no note.
        let r = sync.returned(
            &files,
            vec![file("/work/data/a.csv", b"1,2")],
            vec![],
            1.0,
            &ro,
        );
        assert!(r.ops.is_empty() && r.notes.is_empty());
        // Many changes: the first ones are named, the rest counted.
        let many = (0..30)
            .map(|i| file(&format!("/work/data/{i}"), b"n"))
            .collect();
        let r = sync.returned(&files, many, vec![], 1.0, &ro);
        assert_eq!(r.notes.lines().count(), MAX_READ_ONLY_NOTES + 1);
        assert!(r
            .notes
            .ends_with("foxden: 10 more changes to read-only paths were not kept\n"));
    }

    #[test]
    fn a_file_replacing_a_folder_that_holds_a_read_only_file_is_not_kept_alone() {
        // The code removed /work/data (holding the read-only a.csv) and wrote a file there:
        // that file once went into the batch, which then failed as a file/folder conflict,
        // and the run's other changes were lost with it.
        let mut files = FileMap::new();
        files
            .apply(
                vec![Op::Put {
                    path: "/work/data/a.csv".into(),
                    entry: FileEntry::new(b"keep".to_vec(), 0.0),
                }],
                1 << 20,
            )
            .unwrap();
        let ro = ReadOnlyPaths::parse(&["/work/data/a.csv"]).unwrap();
        let mut sync = SyncState::new();
        let file = |p: &str, d: &[u8]| ChangedFile {
            path: p.into(),
            data: Some(d.to_vec().into()),
        };
        let changed = vec![file("/work/data", b"x"), file("/work/result.txt", b"ok")];
        let deleted = vec!["/work/data/a.csv".to_owned()];
        let r = sync.returned(&files, changed, deleted, 1.0, &ro);
        assert!(files.check(r.ops.clone(), 1 << 20).is_ok());
        assert_eq!(r.ops.len(), 1);
        assert!(
            r.notes.contains(
                "\"/work/data\" was not kept: read-only paths (readOnlyPaths) lie inside it"
            ),
            "{}",
            r.notes
        );
        // Before the next run the worker's file goes and the den's a.csv comes back.
        let next = sync.plan(&files);
        assert_eq!(
            (next.delete, next.put),
            (
                vec!["/work/data".to_owned()],
                vec!["/work/data/a.csv".to_owned()]
            )
        );
    }

    #[test]
    fn a_file_not_copied_is_never_taken_for_the_dens_version() {
        // A read-only empty file the code made too big to copy: its content is unknown, not
        // empty (the wire sends no data for it), so it is noted and shipped again.
        let mut files = FileMap::new();
        let put = |p: &str, d: &[u8]| Op::Put {
            path: p.into(),
            entry: FileEntry::new(d.to_vec(), 0.0),
        };
        files
            .apply(vec![put("/work/data/empty.txt", b"")], 1 << 20)
            .unwrap();
        let ro = ReadOnlyPaths::parse(&["/work/data"]).unwrap();
        let mut sync = SyncState::new();
        let plan = sync.plan(&files);
        sync.delivered(&plan, &files);
        let changed = vec![ChangedFile {
            path: "/work/data/empty.txt".into(),
            data: None,
        }];
        let r = sync.returned(&files, changed, vec![], 1.0, &ro);
        assert!(r.ops.is_empty());
        assert!(r.notes.contains(
            "foxden: \"/work/data/empty.txt\" was not kept: it is read-only (readOnlyPaths)"
        ));
        assert_eq!(sync.plan(&files).put, ["/work/data/empty.txt"]);
        // Anywhere else (the wire refuses such a reply first), it is not kept either.
        let changed = vec![ChangedFile {
            path: "/work/big.bin".into(),
            data: None,
        }];
        let r = sync.returned(&files, changed, vec![], 1.0, &ro);
        assert!(r.ops.is_empty());
        assert!(r
            .notes
            .contains("\"/work/big.bin\" was not kept: it is larger than maxFileBytes"));
    }

    #[test]
    fn an_unchanged_store_plans_nothing_without_comparing() {
        let mut files = FileMap::new();
        let ops = (0..3)
            .map(|i| Op::Put {
                path: format!("/work/{i}"),
                entry: FileEntry::new(vec![i as u8], 0.0),
            })
            .collect();
        files.apply(ops, 1 << 20).unwrap();
        let mut sync = SyncState::new();
        let plan = sync.plan(&files);
        assert_eq!(plan.put.len(), 3);
        sync.delivered(&plan, &files);
        assert_eq!(sync.plan(&files), SyncPlan::default());
        // The worker's copy changed (a refused run): shipped again although the store did not change.
        sync.set("/work/1", None);
        assert_eq!(sync.plan(&files).put, vec!["/work/1".to_owned()]);
        let plan = sync.plan(&files);
        sync.delivered(&plan, &files);
        // The store changed: compared again.
        files
            .apply(
                vec![Op::Delete {
                    path: "/work/0".into(),
                }],
                1 << 20,
            )
            .unwrap();
        assert_eq!(sync.plan(&files).delete, vec!["/work/0".to_owned()]);
        sync.reset();
        assert_eq!(sync.plan(&files).put.len(), 2);
    }
}
