//! The den seen as a read-only file system: `/` holds `drop`, `out` and `work` (always
//! there); a folder exists when a file lies below it. Names resolve the way the Linux
//! kernel resolves them, component by component, with the working directory at `/`.

use crate::files::FileMap;
use crate::paths::{normalize_path, PathRule};
use std::cell::OnceCell;
use std::sync::Arc;

/// What a name resolves to.
pub(super) enum Node {
    /// A folder, by normalized path (`""` for `/`).
    Dir(String),
    /// A file's bytes.
    File(Arc<[u8]>),
}

/// Why a name does not resolve (the `errno` GNU tools would report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Errno {
    /// ENOENT
    NoEnt,
    /// ENOTDIR
    NotDir,
    /// ENAMETOOLONG
    NameTooLong,
    /// EISDIR (reading a folder)
    IsDir,
}

impl Errno {
    /// `strerror` in English.
    pub(super) fn message(self) -> &'static str {
        match self {
            Errno::NoEnt => "No such file or directory",
            Errno::NotDir => "Not a directory",
            Errno::NameTooLong => "File name too long",
            Errno::IsDir => "Is a directory",
        }
    }
}

/// Longest path the kernel accepts (PATH_MAX, with its NUL).
const PATH_MAX: usize = 4096;
/// Longest name component (NAME_MAX).
const NAME_MAX: usize = 255;

/// The den's files, with a folder index built on first use.
pub(super) struct Fs<'a> {
    files: &'a FileMap,
    /// (folder path, name of an entry), sorted and without repeats; an empty name only marks
    /// a root folder as existing. Borrowed from the files' paths: the index costs no copy of
    /// them. (A sorted list, not a map of sets: one more BTreeMap type costs kilobytes of wasm.)
    dirs: OnceCell<Vec<(&'a str, &'a str)>>,
}

/// The roots' folder paths ([`crate::paths::ROOTS`] with their slash).
const ROOT_DIRS: [&str; 3] = ["/drop", "/out", "/work"];

impl<'a> Fs<'a> {
    pub(super) fn new(files: &'a FileMap) -> Self {
        Fs {
            files,
            dirs: OnceCell::new(),
        }
    }

    /// (folder path (`""` for `/`), name of one of its entries), sorted.
    fn dirs(&self) -> &[(&'a str, &'a str)] {
        let files: &'a FileMap = self.files;
        self.dirs.get_or_init(|| {
            let mut dirs: Vec<(&'a str, &'a str)> = Vec::new();
            for root in ROOT_DIRS {
                dirs.push(("", &root[1..]));
                dirs.push((root, ""));
            }
            for (path, _) in files.iter() {
                let path: &'a str = path;
                let mut parent = 0;
                for (i, _) in path.match_indices('/').skip(1) {
                    dirs.push((&path[..parent], &path[parent + 1..i]));
                    parent = i;
                }
                dirs.push((&path[..parent], &path[parent + 1..]));
            }
            crate::order::sort(&mut dirs);
            dirs.dedup();
            dirs
        })
    }

    /// The index entries of folder `dir` (none: no such folder).
    fn dir_entries(&self, dir: &str) -> &[(&'a str, &'a str)] {
        let dirs = self.dirs();
        let from = dirs.partition_point(|(d, _)| *d < dir);
        let len = dirs[from..].partition_point(|(d, _)| *d == dir);
        &dirs[from..from + len]
    }

    /// Entries of a folder (by normalized path), sorted by bytes.
    pub(super) fn list(&self, dir: &str) -> Vec<String> {
        self.dir_entries(dir)
            .iter()
            .filter(|(_, name)| !name.is_empty())
            .map(|(_, name)| (*name).to_owned())
            .collect()
    }

    /// Resolves a name as given on a command line (relative names start at `/`).
    ///
    /// Goes through the den's path normalizer first: a name with a `..` segment, or one
    /// longer than the normalizer allows, does not exist.
    pub(super) fn resolve(&self, name: &str) -> Result<Node, Errno> {
        if name.is_empty() {
            return Err(Errno::NoEnt);
        }
        if name.len() >= PATH_MAX {
            return Err(Errno::NameTooLong);
        }
        let absolute = if name.starts_with('/') {
            name.to_owned()
        } else {
            format!("/{name}")
        };
        if let Err(e) = normalize_path(&absolute) {
            if matches!(e.rule, PathRule::DotDot | PathRule::TooLong) {
                return Err(Errno::NoEnt);
            }
        }
        let mut dir = String::new(); // current folder ("" is /)
        let mut file: Option<Arc<[u8]>> = None;
        for comp in name.split('/') {
            if comp.is_empty() {
                continue;
            }
            if file.is_some() {
                return Err(Errno::NotDir);
            }
            if comp.len() > NAME_MAX {
                return Err(Errno::NameTooLong);
            }
            if comp == "." {
                continue;
            }
            let path = format!("{dir}/{comp}");
            if let Some(entry) = self.files.get(&path) {
                file = Some(entry.data.clone());
            } else if !self.dir_entries(&path).is_empty() {
                dir = path;
            } else {
                return Err(Errno::NoEnt);
            }
        }
        match file {
            Some(_) if name.ends_with('/') => Err(Errno::NotDir),
            Some(data) => Ok(Node::File(data)),
            None => Ok(Node::Dir(dir)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn root_dirs_are_the_roots() {
        assert_eq!(super::ROOT_DIRS.map(|r| &r[1..]), crate::paths::ROOTS);
    }

    use super::*;
    use crate::files::{FileEntry, Op};

    fn den() -> FileMap {
        let mut m = FileMap::new();
        let put = |p: &str| Op::Put {
            path: p.into(),
            entry: FileEntry::new(b"x".to_vec(), 0.0),
        };
        m.apply(
            vec![put("/drop/a.csv"), put("/work/sub/deep/f"), put("/drop/.h")],
            1 << 20,
        )
        .unwrap();
        m
    }

    fn kind(fs: &Fs, name: &str) -> Result<&'static str, Errno> {
        fs.resolve(name).map(|n| match n {
            Node::Dir(_) => "dir",
            Node::File(_) => "file",
        })
    }

    #[test]
    fn resolves_like_the_kernel() {
        let m = den();
        let fs = Fs::new(&m);
        assert_eq!(kind(&fs, "/"), Ok("dir"));
        assert_eq!(kind(&fs, "."), Ok("dir"));
        assert_eq!(kind(&fs, "/out"), Ok("dir"));
        assert_eq!(kind(&fs, "drop/"), Ok("dir"));
        assert_eq!(kind(&fs, "/drop//a.csv"), Ok("file"));
        assert_eq!(kind(&fs, "./drop/./a.csv"), Ok("file"));
        assert_eq!(kind(&fs, "/drop/a.csv/"), Err(Errno::NotDir));
        assert_eq!(kind(&fs, "/drop/a.csv/."), Err(Errno::NotDir));
        assert_eq!(kind(&fs, "/drop/a.csv/x"), Err(Errno::NotDir));
        assert_eq!(kind(&fs, "/drop/nope"), Err(Errno::NoEnt));
        assert_eq!(kind(&fs, "/etc/passwd"), Err(Errno::NoEnt));
        assert_eq!(kind(&fs, "/drop/../drop/a.csv"), Err(Errno::NoEnt));
        assert_eq!(kind(&fs, ""), Err(Errno::NoEnt));
        assert_eq!(
            kind(&fs, &format!("/drop/{}", "a".repeat(256))),
            Err(Errno::NameTooLong)
        );
        assert_eq!(kind(&fs, "/work/sub"), Ok("dir"));
        assert_eq!(fs.list(""), vec!["drop", "out", "work"]);
        assert_eq!(fs.list("/drop"), vec![".h", "a.csv"]);
        assert_eq!(fs.list("/work"), vec!["sub"]);
        assert!(fs.list("/out").is_empty());
    }
}
