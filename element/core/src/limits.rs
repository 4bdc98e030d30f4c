//! Defaults and limits from the product sheet, in one place.

/// Default run timeout (ms).
pub const DEFAULT_TIMEOUT_MS: u32 = 30_000;
/// Default cap on stdout + stderr of one run (bytes).
pub const DEFAULT_MAX_OUTPUT_BYTES: u32 = 1 << 20;
/// Default cap on the total size of a den's files (bytes).
pub const DEFAULT_MAX_DEN_BYTES: u64 = 256 << 20;
/// How long leftover asyncio tasks or JS timers may live after a run before the worker restarts (ms).
pub const DEFAULT_KILL_GRACE_MS: u32 = 200;
/// How long `openDen` waits for the runtime to become ready (ms).
pub const DEFAULT_LOAD_TIMEOUT_MS: u32 = 60_000;
/// Default cap on the worker's WebAssembly memory: past it, Python gets MemoryError (2 GiB).
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 2 << 30;
/// Largest memory cap: WebAssembly's 32-bit limit.
pub const MAX_MEMORY_BYTES: u64 = 4 << 30;
/// Smallest memory cap that still lets Pyodide start.
pub const MIN_MEMORY_BYTES: u64 = 128 << 20;
/// Cap on the size of one file a write, run or restore creates or changes (bytes).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 << 20;
/// Cap on the number of files in a den (empty files cost nothing against the byte cap).
pub const DEFAULT_MAX_FILES: usize = 10_000;
/// How long the host waits past a run's timeout for the den page to answer before it removes
/// the den page and opens a new one (ms): covers the den page's interrupt grace (1 s) and a
/// busy event loop.
pub const HOST_WATCHDOG_GRACE_MS: u32 = 3_000;
/// Largest `stdin` text a run accepts (bytes).
pub const MAX_STDIN_BYTES: usize = 16 << 20;
/// Largest `vars` a run accepts, as JSON text (bytes).
pub const MAX_VARS_BYTES: usize = 16 << 20;
/// Most names a run's `vars` sets.
pub const MAX_VARS: usize = 1000;

/// Names no code can use as a variable: Python's keywords and JavaScript's reserved words.
const RESERVED_NAMES: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "def",
    "default",
    "del",
    "delete",
    "do",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "global",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "is",
    "lambda",
    "let",
    "new",
    "nonlocal",
    "not",
    "null",
    "or",
    "package",
    "pass",
    "private",
    "protected",
    "public",
    "raise",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// Checks a name a run's `vars` sets in the code's global scope: an ASCII identifier (`[A-Za-z_]`
/// then `[A-Za-z0-9_]`, at most 255 bytes), not a keyword of Python or a reserved word of
/// JavaScript, and not a dunder (`__name__`, `__builtins__`, `__proto__`: the interpreter's own).
pub fn check_var_name(name: &str) -> Result<(), String> {
    let b = name.as_bytes();
    let ident = !b.is_empty()
        && b.len() <= 255
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if !ident {
        let shown: String = name.chars().take(80).collect();
        return Err(format!(
            "vars names {shown:?}: a name is an ASCII identifier (letters, digits, '_'; not first a digit), at most 255 bytes"
        ));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(format!(
            "vars names {name:?}: a keyword of Python or a reserved word of JavaScript cannot be a variable"
        ));
    }
    if name.len() > 4 && name.starts_with("__") && name.ends_with("__") {
        return Err(format!(
            "vars names {name:?}: names like __this__ belong to the interpreter"
        ));
    }
    Ok(())
}

/// Largest accepted run timeout (ms): one hour.
pub const MAX_TIMEOUT_MS: u32 = 3_600_000;

/// A den name that breaks the naming rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid den name {name:?}: a name is 1-64 ASCII letters, digits, '-' or '_'")]
pub struct DenNameError {
    /// The rejected name.
    pub name: String,
}

/// Checks a den name: 1-64 ASCII letters, digits, `-` or `_`.
pub fn validate_den_name(name: &str) -> Result<(), DenNameError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(DenNameError {
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_names_are_ascii_identifiers_and_not_dunders() {
        for ok in ["x", "_", "rows", "Row_2", "_private", "__x", "x__", "___"] {
            assert_eq!(check_var_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "2x",
            "a-b",
            "a b",
            "é",
            "x.y",
            "__name__",
            "__proto__",
            "____x__",
            "class",
            "None",
            "null",
            "yield",
        ] {
            assert!(check_var_name(bad).is_err(), "{bad}");
        }
        assert!(check_var_name(&"a".repeat(255)).is_ok());
        assert!(check_var_name(&"a".repeat(256)).is_err());
    }

    #[test]
    fn names() {
        assert!(validate_den_name("notes").is_ok());
        assert!(validate_den_name("a-b_C9").is_ok());
        assert!(validate_den_name(&"x".repeat(64)).is_ok());
        assert!(validate_den_name(&"x".repeat(65)).is_err());
        assert!(validate_den_name("").is_err());
        assert!(validate_den_name("a b").is_err());
        assert!(validate_den_name("é").is_err());
        assert!(validate_den_name("a/b").is_err());
    }
}
