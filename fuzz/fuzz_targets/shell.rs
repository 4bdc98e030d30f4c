#![no_main]
//! den.sh never panics, keeps its output cap, uses only its documented exit codes and
//! answers the same twice.
//!
//! Input layout: byte 0 picks the output cap and a command prefix; up to the first 0xFF
//! byte is the command line (lossy UTF-8); the rest, split at 0xFE, is the content of a
//! few fixed files.
use foxden_core::shell::run_shell;
use foxden_core::{FileEntry, FileMap, Op};
use libfuzzer_sys::fuzz_target;

const PATHS: [&str; 5] = [
    "/drop/a.csv",
    "/drop/b c",
    "/work/d/e",
    "/out/.h",
    "/drop/d/é",
];
const PREFIXES: [&str; 8] = [
    "",
    "grep -i ",
    "grep -vcn ",
    "ls -a ",
    "cat ",
    "head -n ",
    "wc ",
    "echo -e ",
];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let cap = match sel & 7 {
        0 => 0,
        1 => 1,
        2 => 7,
        3 => 64,
        _ => 1 << 16,
    };
    let (cmd, contents) = match rest.iter().position(|&b| b == 0xFF) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let command = format!(
        "{}{}",
        PREFIXES[usize::from(sel >> 5)],
        String::from_utf8_lossy(cmd)
    );
    let mut files = FileMap::new();
    let ops = contents
        .split(|&b| b == 0xFE)
        .zip(PATHS)
        .map(|(d, p)| Op::Put {
            path: p.to_owned(),
            entry: FileEntry::new(d.to_vec(), 0.0),
        })
        .collect();
    if files.apply(ops, u64::MAX).is_err() {
        return;
    }
    let a = run_shell(&command, &files, cap);
    assert!(a.stdout.len() + a.stderr.len() <= cap, "cap exceeded");
    assert!(matches!(a.code, 0 | 1 | 2 | 127), "code {}", a.code);
    let b = run_shell(&command, &files, cap);
    assert_eq!(a, b, "not deterministic");
});
