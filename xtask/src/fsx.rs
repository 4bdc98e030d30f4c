//! xtask's file-system helpers, in one place: each names the path in its error.

use std::fs;
use std::path::Path;

fn err(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

/// Reads a UTF-8 file.
pub fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| err(path, e))
}

/// Creates a folder and its parents (nothing if it exists).
pub fn create_dir(path: &Path) -> Result<(), String> {
    fs::create_dir_all(path).map_err(|e| err(path, e))
}

/// Creates the folder a file goes in.
pub fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => create_dir(p),
        _ => Ok(()),
    }
}

/// Writes a file, creating its folder.
pub fn write(path: &Path, data: impl AsRef<[u8]>) -> Result<(), String> {
    create_parent(path)?;
    fs::write(path, data).map_err(|e| err(path, e))
}

/// The entries of a folder.
pub fn entries(path: &Path) -> Result<Vec<fs::DirEntry>, String> {
    fs::read_dir(path)
        .and_then(|d| d.collect())
        .map_err(|e| err(path, e))
}

/// Copies a file, or a folder with everything in it, creating `to`'s parents.
pub fn copy(from: &Path, to: &Path) -> Result<(), String> {
    if from.is_dir() {
        create_dir(to)?;
        for entry in entries(from)? {
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        create_parent(to)?;
        fs::copy(from, to)
            .map(|_| ())
            .map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))
    }
}

/// Removes a folder and everything in it, if it exists.
pub fn remove_dir(path: &Path) -> Result<(), String> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(err(path, e)),
        _ => Ok(()),
    }
}

/// Removes a file, if it exists.
pub fn remove_file(path: &Path) -> Result<(), String> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(err(path, e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_copy_read_remove() {
        let dir = crate::root().join("target/xtask-fsx-test");
        remove_dir(&dir).expect("clean");
        write(&dir.join("a/b/one.txt"), "one").expect("write");
        write(&dir.join("a/two.txt"), b"two").expect("write");
        copy(&dir.join("a"), &dir.join("c/d")).expect("copy");
        assert_eq!(read(&dir.join("c/d/b/one.txt")).as_deref(), Ok("one"));
        assert_eq!(read(&dir.join("c/d/two.txt")).as_deref(), Ok("two"));
        copy(&dir.join("a/two.txt"), &dir.join("e/f/two.txt")).expect("copy a file");
        assert_eq!(read(&dir.join("e/f/two.txt")).as_deref(), Ok("two"));
        assert!(read(&dir.join("missing")).is_err_and(|e| e.contains("missing")));
        remove_file(&dir.join("a/two.txt")).expect("remove");
        remove_file(&dir.join("a/two.txt")).expect("already gone");
        remove_dir(&dir).expect("remove");
        assert!(!dir.exists());
        remove_dir(&dir).expect("already gone");
    }
}
