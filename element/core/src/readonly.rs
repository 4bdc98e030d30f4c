//! Read-only paths: files and folders a den's code may read but not change
//! (`openDen({ readOnlyPaths })`, the element's `read-only-paths` attribute).
//!
//! The host keeps them: a run's change to a covered path (a write, a new file in a covered
//! folder, a deletion) is not kept, the run's stderr says so, and the den's own version is put
//! back in the sandbox before the next run ([`crate::sync::SyncState::returned`]). The worker
//! also marks covered files read-only (mode 0444, folders 0555), so an ordinary write fails at
//! once with `PermissionError`; code that changes the mode back still cannot change the den's
//! files. The host's own calls (`writeFile`, `deleteFile`, `restore`) are not limited: the host
//! owns the files.

use crate::paths::{is_within, normalize_path, PathError};
use std::fmt;

/// At most this many read-only paths per den.
pub const MAX_READ_ONLY_PATHS: usize = 256;

/// The normalized read-only paths of a den; each covers itself and, as a folder, all it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOnlyPaths {
    entries: Vec<String>,
}

/// A read-only path that is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyError {
    /// More than [`MAX_READ_ONLY_PATHS`].
    TooMany(usize),
    /// An entry is not a den path (a file or a folder under `/drop`, `/out` or `/work`).
    Path(PathError),
}

impl fmt::Display for ReadOnlyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadOnlyError::TooMany(n) => write!(
                f,
                "{n} read-only paths, more than {MAX_READ_ONLY_PATHS}: name the folders that hold them"
            ),
            ReadOnlyError::Path(e) => write!(f, "a read-only path must be a den path: {e}"),
        }
    }
}

impl std::error::Error for ReadOnlyError {}

impl ReadOnlyPaths {
    /// Normalizes and checks `list` (each entry a file or a folder, e.g. `/work/data` or
    /// `/drop/config.json`); duplicates and entries inside another entry are dropped.
    pub fn parse<S: AsRef<str>>(list: &[S]) -> Result<ReadOnlyPaths, ReadOnlyError> {
        if list.len() > MAX_READ_ONLY_PATHS {
            return Err(ReadOnlyError::TooMany(list.len()));
        }
        let mut entries = Vec::with_capacity(list.len());
        for raw in list {
            entries.push(normalize_path(raw.as_ref()).map_err(ReadOnlyError::Path)?);
        }
        // Shortest first, so an entry inside an earlier one is seen as covered.
        crate::order::sort_by(&mut entries, &|a, b| {
            a.len().cmp(&b.len()).then_with(|| a.cmp(b))
        });
        let mut kept: Vec<String> = Vec::with_capacity(entries.len());
        for e in entries {
            if !kept.iter().any(|k| is_within(&e, k)) {
                kept.push(e);
            }
        }
        crate::order::sort(&mut kept);
        Ok(ReadOnlyPaths { entries: kept })
    }

    /// True when the den's code may not change `path` (normalized).
    pub fn covers(&self, path: &str) -> bool {
        self.entries.iter().any(|e| is_within(path, e))
    }

    /// True when the den's code may not make a file at `path` (normalized): it is covered,
    /// or a read-only path lies inside it (a file there would replace that folder's files).
    pub fn guards_file(&self, path: &str) -> bool {
        self.entries
            .iter()
            .any(|e| is_within(path, e) || is_within(e, path))
    }

    /// Why [`Self::guards_file`] holds for `path`, for a note: "it is read-only", or that
    /// read-only paths lie inside it.
    pub fn why_guarded(&self, path: &str) -> &'static str {
        if self.covers(path) {
            "it is read-only (readOnlyPaths)"
        } else {
            "read-only paths (readOnlyPaths) lie inside it"
        }
    }

    /// No read-only paths.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The normalized entries, sorted (what the worker is told).
    pub fn entries(&self) -> &[String] {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::PathRule;

    #[test]
    fn entries_are_normalized_and_cover_what_they_hold() {
        let ro = ReadOnlyPaths::parse(&["/work//data/", "/drop/config.json"]).unwrap();
        assert_eq!(ro.entries(), ["/drop/config.json", "/work/data"]);
        assert!(ro.covers("/work/data"));
        assert!(ro.covers("/work/data/a.csv"));
        assert!(ro.covers("/work/data/deep/b.csv"));
        assert!(ro.covers("/drop/config.json"));
        // Neighbours with the same start are not covered.
        assert!(!ro.covers("/work/database.csv"));
        assert!(!ro.covers("/work/dat"));
        assert!(!ro.covers("/drop/config.json.bak"));
        assert!(!ro.covers("/out/data/a.csv"));
        // A file may not replace a folder that holds a read-only path.
        assert!(ro.guards_file("/work") && ro.guards_file("/drop/config.json"));
        assert!(ro.guards_file("/work/data/a.csv"));
        assert!(!ro.guards_file("/work/dat") && !ro.guards_file("/out"));
        assert!(ReadOnlyPaths::default().is_empty());
        assert!(!ReadOnlyPaths::default().covers("/work/a"));
    }

    #[test]
    fn a_root_covers_everything_in_it_and_nested_entries_are_dropped() {
        let ro = ReadOnlyPaths::parse(&["/work/a/b", "/work", "/work/a", "/work"]).unwrap();
        assert_eq!(ro.entries(), ["/work"]);
        assert!(ro.covers("/work/x/y.txt"));
        assert!(!ro.covers("/drop/x"));
    }

    #[test]
    fn bad_entries_are_refused_by_rule() {
        let rule = |p: &str| match ReadOnlyPaths::parse(&[p]) {
            Err(ReadOnlyError::Path(e)) => e.rule,
            other => panic!("{p:?}: {other:?}"),
        };
        assert_eq!(rule("work/data"), PathRule::Absolute);
        assert_eq!(rule("/etc/passwd"), PathRule::Root);
        assert_eq!(rule("/work/../etc"), PathRule::DotDot);
        assert_eq!(rule(""), PathRule::Empty);
        let many: Vec<String> = (0..=MAX_READ_ONLY_PATHS)
            .map(|i| format!("/work/{i}"))
            .collect();
        let e = ReadOnlyPaths::parse(&many).unwrap_err();
        assert_eq!(e, ReadOnlyError::TooMany(MAX_READ_ONLY_PATHS + 1));
        assert!(e.to_string().contains("more than 256"));
        assert!(ReadOnlyPaths::parse(&["/etc"])
            .unwrap_err()
            .to_string()
            .starts_with("a read-only path must be a den path: invalid path \"/etc\""));
    }
}
