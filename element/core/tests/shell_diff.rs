//! Differential tests: `run_shell` against the real GNU tools.
//!
//! Each case writes a den's files into a temporary folder laid out as `drop/`, `out/`,
//! `work/`, and runs the same command line with `sh -c` there (`LC_ALL=C.UTF-8`, empty
//! environment otherwise, stdin from /dev/null). Relative names work unchanged (the
//! temporary folder is the working directory, as `/` is for den.sh); absolute names get
//! the temporary folder's path in front, and that prefix is removed from the real
//! output. `echo` runs as `/bin/echo` (GNU coreutils, not dash's builtin) and `grep` as
//! `grep -F` (den.sh patterns are literal).
//!
//! stdout and the exit code must be identical. stderr must be identical too for a single
//! command (after mapping dash's `sh: 1: X: not found` to `X: command not found`); for a
//! pipeline, every real stderr line must be among ours (a real upstream command may die
//! of SIGPIPE before it reports an error; den.sh always runs every command to the end).
#![allow(clippy::unwrap_used)]

use foxden_core::shell::run_shell;
use foxden_core::{FileEntry, FileMap, Op};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

// ---------------------------------------------------------------- plumbing

/// A fresh temporary folder with `drop`, `out`, `work` and the den's files.
struct TempDen {
    root: PathBuf,
}

impl TempDen {
    fn new(files: &[(String, Vec<u8>)]) -> TempDen {
        static N: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "foxden-sh-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["drop", "out", "work"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for (path, data) in files {
            let p = root.join(&path[1..]);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, data).unwrap();
        }
        let t = TempDen { root };
        let _ = std::fs::remove_dir_all(t.err_dir());
        std::fs::create_dir_all(t.err_dir()).unwrap();
        t
    }

    fn prefix(&self) -> String {
        self.root.to_str().unwrap().to_owned()
    }

    /// Where each command's stderr goes (outside the den's folders).
    fn err_dir(&self) -> PathBuf {
        PathBuf::from(format!("{}.err", self.prefix()))
    }
}

impl Drop for TempDen {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
        let _ = std::fs::remove_dir_all(self.err_dir());
    }
}

fn file_map(files: &[(String, Vec<u8>)]) -> FileMap {
    let mut m = FileMap::new();
    let ops = files
        .iter()
        .map(|(p, d)| Op::Put {
            path: p.clone(),
            entry: FileEntry::new(d.clone(), 0.0),
        })
        .collect();
    m.apply(ops, u64::MAX).unwrap();
    m
}

struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: i32,
}

fn run_real(dir: &Path, line: &str) -> Outcome {
    let out = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Outcome {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.status.code().unwrap_or(-1),
    }
}

fn replace(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if !from.is_empty() && hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// dash's "sh: LINE: X: not found" as den.sh words it.
fn normalize_stderr(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|&c| c == b'\n')
        .map(|l| {
            if let Some(rest) = l.strip_prefix(b"sh: ") {
                let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
                if let Some(name) = rest[digits..]
                    .strip_prefix(b": ")
                    .and_then(|r| r.strip_suffix(b": not found\n"))
                {
                    return [name, b": command not found\n"].concat();
                }
            }
            l.to_vec()
        })
        .collect()
}

/// Runs a pipeline both ways and compares; `Err` describes the difference.
///
/// `den` holds the commands as den.sh words them; `sh` gives them for `sh` once the
/// temporary folder is known (its argument). Each real command's stderr goes to its own
/// file, so that messages of concurrent commands do not interleave; den.sh's stderr of
/// command `i` is what running the first `i + 1` commands adds.
fn compare(
    files: &[(String, Vec<u8>)],
    den: &[String],
    sh: &dyn Fn(&str) -> Vec<String>,
    sep: &str,
) -> Result<(), String> {
    let tmp = TempDen::new(files);
    let prefix = tmp.prefix();
    let err_dir = tmp.err_dir();
    let sh_stages = sh(&prefix);
    assert_eq!(sh_stages.len(), den.len());
    let sh_line = sh_stages
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} 2>{}/{i}", err_dir.display()))
        .collect::<Vec<_>>()
        .join(sep);
    let den_line = den.join(sep);
    let real = run_real(&tmp.root, &sh_line);
    let real_stdout = replace(&real.stdout, prefix.as_bytes(), b"");
    let map = file_map(files);
    let ours = run_shell(&den_line, &map, usize::MAX);
    let show = |b: &[u8]| format!("{:?}", String::from_utf8_lossy(b));
    let mut problems = Vec::new();
    if ours.stdout != real_stdout {
        problems.push(format!(
            "stdout: ours {} real {}",
            show(&ours.stdout),
            show(&real_stdout)
        ));
    }
    if ours.code != real.code {
        problems.push(format!("code: ours {} real {}", ours.code, real.code));
    }
    if !real.stderr.is_empty() {
        problems.push(format!("sh itself wrote {}", show(&real.stderr)));
    }
    let mut before = 0;
    for i in 0..den.len() {
        let cumulative = if i + 1 == den.len() {
            ours.stderr.clone()
        } else {
            run_shell(&den[..=i].join(sep), &map, usize::MAX).stderr
        };
        let ours_i = normalize_stderr(&cumulative[before.min(cumulative.len())..]);
        before = cumulative.len();
        let real_i = std::fs::read(err_dir.join(i.to_string())).unwrap_or_default();
        let real_i = normalize_stderr(&replace(&real_i, prefix.as_bytes(), b""));
        // An earlier command may have died of SIGPIPE before reporting everything.
        let ok = if i + 1 == den.len() {
            ours_i == real_i
        } else {
            ours_i.starts_with(&real_i)
        };
        if !ok {
            problems.push(format!(
                "stderr of command {}: ours {} real {}",
                i + 1,
                show(&ours_i.concat()),
                show(&real_i.concat())
            ));
        }
    }
    if ours.truncated {
        problems.push("truncated without a cap".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let listing: Vec<String> = files
            .iter()
            .map(|(p, d)| format!("  {p}: {}", show(d)))
            .collect();
        Err(format!(
            "den.sh line: {den_line:?}\nsh line: {sh_line:?}\nfiles:\n{}\n{}",
            listing.join("\n"),
            problems.join("\n")
        ))
    }
}

/// Compares a fixed den.sh line (stages separated by " | "; absolute names start with
/// /drop, /out, /work, /nope or are "/").
fn compare_line(files: &[(String, Vec<u8>)], line: &str) -> Result<(), String> {
    let den: Vec<String> = line.split(" | ").map(str::to_owned).collect();
    let sh = |prefix: &str| -> Vec<String> {
        to_sh(line)
            .split(" | ")
            .map(|s| s.replace("@TMP@", prefix))
            .collect()
    };
    compare(files, &den, &sh, " | ")
}

// ---------------------------------------------------------------- rendering words

/// One word of a generated command line.
#[derive(Clone, Debug)]
enum Arg {
    /// Text passed as is.
    Lit(String),
    /// A file name: absolute names get the temporary folder in front for `sh`.
    Path(String),
}

#[derive(Clone, Debug)]
struct Cmd {
    name: String,
    args: Vec<Arg>,
}

fn bare_safe(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['#', '~'])
        && s.chars()
            .all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || "._/,:@+%^=-]{}!".contains(c))
}

fn single(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn double(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            o.push('\\');
        }
        o.push(c);
    }
    o.push('"');
    o
}

fn backslashed(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii() && !c.is_ascii_alphanumeric() {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// Quotes a word in a random (but valid for sh and den.sh) way; `choice` drives it so
/// that the den.sh and sh renderings quote alike.
fn quote_word(s: &str, choice: &mut Rng) -> String {
    match choice.below(6) {
        0 | 1 if bare_safe(s) => s.to_owned(),
        2 => double(s),
        3 if !s.contains('\n') && !s.is_empty() => backslashed(s),
        4 if s.chars().count() >= 2 => {
            let n = s.chars().count();
            let cut = 1 + choice.below(n as u64 - 1) as usize;
            let at = s.char_indices().nth(cut).map(|(i, _)| i).unwrap_or(s.len());
            let a = quote_word(&s[..at], choice);
            let b = quote_word(&s[at..], choice);
            format!("{a}{b}")
        }
        _ => single(s),
    }
}

/// Renders a pipeline's commands for den.sh and for sh (absolute names get `prefix`).
fn render(p: &[Cmd], seed: u64, prefix: &str) -> (Vec<String>, Vec<String>) {
    let mut den = Vec::new();
    let mut sh = Vec::new();
    let mut r = Rng(seed);
    for c in p {
        let mut d = vec![c.name.clone()];
        let mut s = vec![match c.name.as_str() {
            "echo" => "/bin/echo".to_owned(),
            "grep" => "grep -F".to_owned(),
            n => n.to_owned(),
        }];
        for a in &c.args {
            let state = r.clone();
            let (dt, st) = match a {
                Arg::Lit(t) => (t.clone(), t.clone()),
                Arg::Path(t) if t.starts_with('/') => (t.clone(), format!("{prefix}{t}")),
                Arg::Path(t) => (t.clone(), t.clone()),
            };
            d.push(quote_word(&dt, &mut r));
            let mut r2 = state;
            s.push(quote_word(&st, &mut r2));
        }
        den.push(d.join(" "));
        sh.push(s.join(" "));
    }
    (den, sh)
}

// ---------------------------------------------------------------- generators

#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // SplitMix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
    fn pick_str(&mut self, v: &[&'static str]) -> &'static str {
        v[self.below(v.len() as u64) as usize]
    }
    fn pick_bytes(&mut self, v: &[&'static [u8]]) -> &'static [u8] {
        v[self.below(v.len() as u64) as usize]
    }
}

const VOCAB: &[&str] = &[
    "north",
    "North",
    "NORTH",
    "south",
    "10",
    "7",
    "é",
    "É",
    "straße",
    "STRASSE",
    "ǅ",
    "ǆ",
    "Ǆ",
    "K",
    "k",
    "\u{212A}",
    "ı",
    "I",
    "i",
    "İ",
    "σ",
    "ς",
    "Σ",
    "µ",
    "μ",
    "Μ",
    "ᲀ",
    "в",
    "В",
    "😀",
    "日本",
    "a b",
    "\t",
    " ",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{200b}",
    "x,y",
    "--",
    "-n",
    ":",
    "'",
    "\"",
    "\\",
    "\r",
    "\x0c",
    "\x0b",
    "\x01",
    "\x7f",
    "s",
    "S",
    "ſ",
    "abc",
    "ABC",
    "aBc",
    "region,units",
];

const NAMES: &[&str] = &[
    "a.csv",
    "notes.txt",
    "B.md",
    "é.txt",
    "with space.txt",
    "it's",
    ".hidden",
    "-dash",
    "x",
    "10",
    "9",
    "Z",
    "_u",
    "ü",
    "日本.txt",
    "a:b",
    "semi;colon",
    "q\"uote",
    "data.bin",
    "empty",
    "long.txt",
    "m",
    "M",
    "back\\slash",
    "x*y",
    "tab\there",
    "nl\nx",
    "\u{2028}",
    "bell\x07",
    "what?",
    "[a]",
    "~home",
    "#hash",
    "=",
    "{",
    "a{b}",
    "dollar$",
    "ü'q\"",
];

const DIRS: &[&str] = &[
    "/drop",
    "/drop",
    "/out",
    "/work",
    "/work/sub",
    "/drop/d",
    "/drop/d/e",
    "/out/o p",
];

fn gen_text_line(r: &mut Rng) -> Vec<u8> {
    let n = r.below(7);
    let mut l = Vec::new();
    for i in 0..n {
        if i > 0 {
            l.extend_from_slice(r.pick(&[" ", "", ",", "\t", " "]).as_bytes());
        }
        l.extend_from_slice(r.pick(VOCAB).as_bytes());
    }
    l
}

fn gen_content(r: &mut Rng) -> Vec<u8> {
    let mut c = Vec::new();
    match r.below(12) {
        0 => return c,
        1 => {
            // a long line, maybe among others
            let n = 1000 + r.below(12000) as usize;
            c.extend(std::iter::repeat_n(b"north "[r.below(6) as usize], n));
            c.push(b'\n');
            c.extend(gen_text_line(r));
            c.push(b'\n');
        }
        2 => {
            // binary: random bytes with NULs among text
            for _ in 0..r.below(30) {
                if r.chance(30) {
                    for _ in 0..r.below(8) {
                        c.push(r.below(256) as u8);
                    }
                } else {
                    c.extend(gen_text_line(r));
                }
                if r.chance(20) {
                    c.push(0);
                }
                if r.chance(60) {
                    c.push(b'\n');
                }
            }
        }
        3 => {
            // text with encoding errors
            for _ in 0..r.below(12) {
                c.extend(gen_text_line(r));
                if r.chance(40) {
                    let bad: [&[u8]; 6] = [
                        b"\xff",
                        b"\xc3",
                        b"\xe2\x80",
                        b"\xed\xa0\x80",
                        b"\xf4\x90\x80\x80",
                        b"\xc0\xaf",
                    ];
                    c.extend_from_slice(r.pick_bytes(&bad));
                    c.extend(gen_text_line(r));
                }
                c.push(b'\n');
            }
        }
        _ => {
            for _ in 0..r.below(15) {
                c.extend(gen_text_line(r));
                c.push(b'\n');
            }
        }
    }
    if r.chance(30) && c.last() == Some(&b'\n') {
        c.pop();
    }
    c
}

struct Den {
    files: Vec<(String, Vec<u8>)>,
    dirs: Vec<String>,
}

fn gen_den(r: &mut Rng) -> Den {
    let mut m = FileMap::new();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for _ in 0..r.below(9) {
        let path = format!("{}/{}", r.pick(DIRS), r.pick(NAMES));
        let data = gen_content(r);
        let op = Op::Put {
            path: path.clone(),
            entry: FileEntry::new(data.clone(), 0.0),
        };
        if m.apply(vec![op], u64::MAX).is_ok() {
            files.retain(|(p, _)| *p != path);
            files.push((path, data));
        }
    }
    let mut dirs: Vec<String> = vec!["/drop".into(), "/out".into(), "/work".into()];
    for (p, _) in &files {
        let mut d = p.as_str();
        while let Some(i) = d.rfind('/') {
            d = &d[..i];
            if d.is_empty() {
                break;
            }
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_owned());
            }
        }
    }
    Den { files, dirs }
}

/// A file name for a command line, in various spellings.
fn gen_path(r: &mut Rng, den: &Den) -> String {
    let mut p = match r.below(20) {
        0..=8 if !den.files.is_empty() => r.pick(&den.files).0.clone(),
        0..=3 => "/".to_owned(),
        4..=11 => r.pick(&den.dirs).clone(),
        12..=14 => format!("{}/{}", r.pick(&den.dirs), r.pick(NAMES)),
        15 if !den.files.is_empty() => {
            format!("{}/{}", r.pick(&den.files).0, r.pick(&["", "x", "."]))
        }
        _ => format!(
            "/{}",
            r.pick(&["nope", "etc/passwd", "drop/nope/x", "Drop"])
        ),
    };
    match r.below(10) {
        0..=2 => p = p.trim_start_matches('/').to_owned(),
        3 => p = format!("./{}", p.trim_start_matches('/')),
        4 => p = p.replacen('/', "//", 1),
        5 if p.len() > 1 => p.push('/'),
        _ => {}
    }
    if p.is_empty() {
        p = ".".into();
    }
    p
}

fn gen_pattern(r: &mut Rng, den: &Den) -> String {
    match r.below(10) {
        0..=4 => {
            // a piece of a text line of some file
            let texts: Vec<&[u8]> = den.files.iter().map(|(_, d)| d.as_slice()).collect();
            if texts.is_empty() {
                return r.pick(VOCAB).to_string();
            }
            let t =
                String::from_utf8_lossy(texts[r.below(texts.len() as u64) as usize]).into_owned();
            let lines: Vec<&str> = t
                .split('\n')
                .filter(|l| !l.contains('\u{FFFD}') && !l.contains('\0'))
                .collect();
            if lines.is_empty() {
                return r.pick(VOCAB).to_string();
            }
            let l: Vec<char> = r.pick(&lines).chars().collect();
            let a = r.below(l.len() as u64 + 1) as usize;
            let b = a + r.below((l.len() - a) as u64 + 1).min(8) as usize;
            let mut s: String = l[a..b].iter().collect();
            if r.chance(30) {
                s = if r.chance(50) {
                    s.to_uppercase()
                } else {
                    s.to_lowercase()
                };
            }
            s
        }
        5 => String::new(),
        6 => format!("{}\n{}", r.pick(VOCAB), r.pick(VOCAB)),
        _ => r.pick(VOCAB).to_string(),
    }
}

fn gen_operands(r: &mut Rng, den: &Den, stage: usize, max: u64) -> Vec<Arg> {
    let n = if stage > 0 && r.chance(70) {
        0
    } else {
        r.below(max + 1)
    };
    (0..n)
        .map(|_| {
            if r.chance(8) {
                Arg::Lit("-".into())
            } else {
                Arg::Path(gen_path(r, den))
            }
        })
        .collect()
}

fn flags(r: &mut Rng, letters: &[char]) -> Vec<Arg> {
    let chosen: Vec<char> = letters.iter().copied().filter(|_| r.chance(35)).collect();
    if chosen.is_empty() {
        return Vec::new();
    }
    if r.chance(50) {
        vec![Arg::Lit(format!("-{}", chosen.iter().collect::<String>()))]
    } else {
        chosen.iter().map(|c| Arg::Lit(format!("-{c}"))).collect()
    }
}

fn gen_cmd(r: &mut Rng, den: &Den, stage: usize) -> Cmd {
    let lit = |s: &str| Arg::Lit(s.to_owned());
    let (name, args) = match r.below(100) {
        0..=29 => {
            let mut f = flags(r, &['i', 'v', 'c', 'n', 'F']);
            let pat = gen_pattern(r, den);
            let ops = gen_operands(r, den, stage, 3);
            let mut args = Vec::new();
            if pat.starts_with('-') {
                args.append(&mut f);
                args.push(lit("--"));
                args.push(Arg::Lit(pat));
                args.extend(ops);
            } else {
                // GNU getopt permutes: options may come after operands.
                let at = r.below(3);
                if at == 0 {
                    args.append(&mut f);
                }
                args.push(Arg::Lit(pat));
                if at == 1 {
                    args.append(&mut f);
                }
                args.extend(ops);
                args.append(&mut f);
            }
            ("grep", args)
        }
        30..=44 => ("cat", gen_operands(r, den, stage, 3)),
        45..=59 => {
            let mut args = Vec::new();
            let n = *r.pick(&[0u64, 1, 2, 3, 5, 10, 11, 100, 18446744073709551615]);
            match r.below(7) {
                0 => {}
                1 => args.extend([lit("-n"), Arg::Lit(n.to_string())]),
                2 => args.push(Arg::Lit(format!("-n{n}"))),
                3 => args.extend([lit("-n"), Arg::Lit(format!("-{n}"))]),
                4 => args.push(Arg::Lit(format!("-{n}"))),
                5 => args.extend([
                    lit("-n"),
                    lit(r.pick_str(&["x", "", "1x", "+2", " 3", "-", "99999999999999999999"])),
                ]),
                _ => args.extend([
                    lit("-n"),
                    Arg::Lit(n.to_string()),
                    lit(r.pick_str(&["-q", "-v"])),
                ]),
            }
            args.extend(gen_operands(r, den, stage, 3));
            ("head", args)
        }
        60..=74 => {
            let mut args = flags(r, &['l', 'w', 'c']);
            args.extend(gen_operands(r, den, stage, 3));
            ("wc", args)
        }
        75..=84 => {
            let mut args = flags(r, &['1', 'a', 'A']);
            args.extend(gen_operands(r, den, 0, 3));
            ("ls", args)
        }
        85..=96 => {
            let mut args = Vec::new();
            for _ in 0..r.below(3) {
                args.push(lit(r.pick_str(&["-n", "-e", "-E", "-neE", "-x", "-", "--"])));
            }
            for _ in 0..r.below(4) {
                let w = match r.below(3) {
                    0 => r
                        .pick(&[
                            "\\t", "\\n", "\\x41", "\\x4g", "\\0101", "\\101", "\\c", "\\\\",
                            "\\q", "\\", "a\\cb", "\\e", "\\0", "\\1234",
                        ])
                        .to_string(),
                    _ => String::from_utf8_lossy(&gen_text_line(r)).into_owned(),
                };
                args.push(Arg::Lit(w));
            }
            ("echo", args)
        }
        _ => ("nosuchcmd", vec![lit("x")]),
    };
    Cmd {
        name: name.to_owned(),
        args,
    }
}

// ---------------------------------------------------------------- tests

#[derive(Default, Debug)]
struct Coverage {
    cases: usize,
    pipes: usize,
    several_files: usize,
    quotes: usize,
    empty_files: usize,
    missing: usize,
    binary: usize,
    long_lines: usize,
    no_trailing_newline: usize,
    non_ascii: usize,
    by_command: BTreeMap<String, usize>,
}

#[test]
fn random_command_lines_match_gnu() {
    let cov = RefCell::new(Coverage::default());
    // SHELL_DIFF_CASES=N runs a longer campaign.
    let cases = std::env::var("SHELL_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&proptest::num::u64::ANY, |seed| {
        let mut r = Rng(seed);
        let den = gen_den(&mut r);
        let stages = 1 + (r.below(10) / 4) as usize; // 1, 2 or 3
        let mut p: Vec<Cmd> = (0..stages).map(|i| gen_cmd(&mut r, &den, i)).collect();
        // Names in the output of a command that is not last (ls, grep, head headers)
        // cannot be mapped back, so those commands use relative names.
        for c in p.iter_mut().rev().skip(1) {
            for a in &mut c.args {
                if let Arg::Path(t) = a {
                    if t.starts_with('/') {
                        let rel = t.trim_start_matches('/');
                        *t = if rel.is_empty() {
                            ".".into()
                        } else {
                            rel.to_owned()
                        };
                    }
                }
            }
        }
        let (den_stages, _) = render(&p, seed, "");
        let den_line = den_stages.join(" ");
        {
            let mut c = cov.borrow_mut();
            c.cases += 1;
            c.pipes += usize::from(stages > 1);
            c.quotes += usize::from(den_line.contains(['\'', '"', '\\']));
            c.several_files += usize::from(
                p.iter()
                    .any(|c| c.args.iter().filter(|a| matches!(a, Arg::Path(_))).count() > 1),
            );
            for cmd in &p {
                *c.by_command.entry(cmd.name.clone()).or_default() += 1;
            }
            let m = file_map(&den.files);
            let fs = |f: &dyn Fn(&[u8]) -> bool| usize::from(den.files.iter().any(|(_, d)| f(d)));
            c.empty_files += fs(&|d| d.is_empty());
            c.binary += fs(&|d| d.contains(&0));
            c.long_lines += fs(&|d| d.split(|&b| b == b'\n').any(|l| l.len() > 1000));
            c.no_trailing_newline += fs(&|d| !d.is_empty() && !d.ends_with(b"\n"));
            c.non_ascii += fs(&|d| d.iter().any(|b| *b >= 0x80));
            c.missing += usize::from(p.iter().flat_map(|c| &c.args).any(|a| match a {
                Arg::Path(x) => {
                    let abs = if x.starts_with('/') {
                        x.clone()
                    } else {
                        format!("/{x}")
                    };
                    foxden_core::normalize_path(&abs)
                        .map(|n| m.get(&n).is_none() && !den.dirs.contains(&n))
                        .unwrap_or(true)
                }
                _ => false,
            }));
        }
        let sep = ["|", " | ", " | ", " |\n  "][(seed % 4) as usize];
        let sh = |prefix: &str| render(&p, seed, prefix).1;
        compare(&den.files, &den_stages, &sh, sep).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let c = cov.into_inner();
    eprintln!("coverage: {c:?}");
    assert!(
        c.pipes > 100 && c.quotes > 200 && c.several_files > 100,
        "{c:?}"
    );
    assert!(
        c.empty_files > 50 && c.missing > 100 && c.binary > 50,
        "{c:?}"
    );
    assert!(
        c.long_lines > 50 && c.no_trailing_newline > 100 && c.non_ascii > 200,
        "{c:?}"
    );
}

/// A fixed den for hand-picked command lines.
fn fixed_den() -> Vec<(String, Vec<u8>)> {
    let f = |p: &str, d: &[u8]| (p.to_owned(), d.to_vec());
    vec![
        f(
            "/drop/sales.csv",
            b"region,units\nnorth,10\nsouth,7\nNorth,3\n",
        ),
        f("/drop/notes.txt", b"no newline"),
        f("/drop/bin.dat", b"abc\x00def\nnorth\n"),
        f("/drop/enc.txt", b"ok north\nbad \xff north\nnorth again\n"),
        f("/drop/.hidden", b""),
        f("/drop/empty", b""),
        f(
            "/drop/with space.txt",
            "straße\nSTRASSE\nİstanbul\nıi\n\u{212A}elvin\nk\n".as_bytes(),
        ),
        f("/drop/it's", b"x\n"),
        f("/drop/-dash", b"dash\n"),
        f("/work/sub/deep/x.txt", "x\n\u{a0}y z\u{3000}w\n".as_bytes()),
        f("/out/r\u{e9}sum\u{e9}.md", "# Résumé\n".as_bytes()),
    ]
}

/// Hand-picked command lines (den.sh form; the sh form is derived by mapping absolute
/// names). They cover errors, quoting, headers, widths and binary handling.
const FIXED: &[&str] = &[
    "ls",
    "ls -a",
    "ls -A",
    "ls /",
    "ls .",
    "ls /drop",
    "ls -a /drop",
    "ls -A /drop",
    "ls -aA /drop",
    "ls -Aa /drop",
    "ls -1 /work",
    "ls /drop/sales.csv",
    "ls drop/sales.csv /drop /out /nope",
    "ls /nope /work",
    "ls /nope",
    "ls /drop/sales.csv/",
    "ls /drop/notes.txt/x",
    "ls /work/sub /work/sub/deep",
    "ls out work drop",
    "ls /drop/sales.csv /drop/notes.txt",
    "ls '/drop/with space.txt' \"/drop/it's\"",
    "ls -- -dash",
    "ls ./drop//sales.csv",
    "ls drop/",
    "ls ''",
    "ls /out/",
    "cat /drop/sales.csv",
    "cat /drop/sales.csv /drop/notes.txt /drop/empty",
    "cat /drop",
    "cat /nope",
    "cat /drop/sales.csv/",
    "cat '/drop/a b'",
    "cat \"/drop/it's\" '/drop/x:y'",
    "cat",
    "cat -",
    "cat /drop/bin.dat",
    "cat -- /drop/-dash",
    "cat 'a\nb'",
    "cat '#a' '~a' 'a=b' '{' 'a{b' 'x\\y'",
    "head /drop/sales.csv",
    "head -n 2 /drop/sales.csv",
    "head -n2 /drop/sales.csv",
    "head -2 /drop/sales.csv",
    "head -n -1 /drop/sales.csv",
    "head -n -1 /drop/notes.txt",
    "head -n 0 /drop/sales.csv /drop/notes.txt",
    "head -n 1 /drop/sales.csv /drop /drop/notes.txt /nope",
    "head -q -n 1 /drop/sales.csv /drop/notes.txt",
    "head -v /drop/empty",
    "head -n x /drop/sales.csv",
    "head -n '' /drop/sales.csv",
    "head -n 1x /drop/sales.csv",
    "head -n +2 /drop/sales.csv",
    "head -n ' 2' /drop/sales.csv",
    "head -n --2 /drop/sales.csv",
    "head -n 99999999999999999999 /drop/sales.csv",
    "head -n -99999999999999999999 /drop/sales.csv",
    "head -n",
    "head /drop/sales.csv -3",
    "head -3 -n 1 /drop/sales.csv",
    "head -n 0 /drop",
    "head -n x -5 /drop/sales.csv",
    "head -n x -n",
    "head -n 1 -n",
    "head -q -n -x -3 /drop/sales.csv",
    "head -n -0 /drop",
    "head /drop/sales.csv/",
    "cat /drop/sales.csv | head -n 1 - /drop/notes.txt",
    "wc /drop/sales.csv",
    "wc -l /drop/sales.csv",
    "wc -w /drop/notes.txt",
    "wc -c /drop/bin.dat",
    "wc /drop/sales.csv /drop/notes.txt",
    "wc /nope /drop/sales.csv",
    "wc /nope",
    "wc /nope /nope2",
    "wc /drop",
    "wc -l /drop",
    "wc -c /drop /drop/sales.csv",
    "wc -lw /work/sub/deep/x.txt",
    "wc -wc '/drop/with space.txt'",
    "cat /drop/sales.csv | wc",
    "cat /drop/sales.csv | wc -l",
    "cat /drop/sales.csv | wc - /drop/sales.csv",
    "wc",
    "wc -l",
    "echo hi | wc -c - -",
    "wc -c -- -",
    "wc /drop/enc.txt /drop/bin.dat",
    "grep north /drop/sales.csv",
    "grep -i north /drop/sales.csv",
    "grep -v north /drop/sales.csv",
    "grep -c north /drop/sales.csv",
    "grep -n north /drop/sales.csv",
    "grep -in NORTH /drop/sales.csv /drop/notes.txt",
    "grep -c x /drop/sales.csv /drop/notes.txt /drop",
    "grep x /drop",
    "grep x /nope /drop/sales.csv",
    "grep north /drop/bin.dat",
    "grep -c north /drop/bin.dat",
    "grep -v zzz /drop/bin.dat",
    "grep -n north /drop/enc.txt",
    "grep -c north /drop/enc.txt",
    "grep bad /drop/enc.txt",
    "grep '' /drop/empty",
    "grep -c '' /drop/empty",
    "grep -v '' /drop/sales.csv",
    "grep -v '\n' /drop/sales.csv",
    "grep -vc '\n' /drop/sales.csv /nope",
    "grep -c '\n\n' /drop/sales.csv",
    "grep -v 'north\n' /drop/sales.csv",
    "grep 'north\nsouth' /drop/sales.csv",
    "grep -i 'STRASSE' '/drop/with space.txt'",
    "grep -i straße '/drop/with space.txt'",
    "grep -i i '/drop/with space.txt'",
    "grep -i ı '/drop/with space.txt'",
    "grep -i İ '/drop/with space.txt'",
    "grep -i k '/drop/with space.txt'",
    "grep -i '\u{212A}' '/drop/with space.txt'",
    "grep",
    "grep -c",
    "grep -- -dash /drop/-dash",
    "grep north /drop/sales.csv -c",
    "grep -F -i north /drop/sales.csv",
    "cat /drop/sales.csv | grep -n north - /drop/sales.csv",
    "echo north | grep north",
    "grep x",
    "echo",
    "echo a b",
    "echo -n a",
    "echo -e 'a\\tb'",
    "echo -E 'a\\tb'",
    "echo -x",
    "echo - a",
    "echo -- a",
    "echo -nx a",
    "echo -e 'x\\cy' z",
    "echo -e '\\0101\\101\\x41\\x4g\\xZ\\q\\\\'",
    "echo '' x",
    "echo 'a  b'   c",
    "echo a\\ b \"c\\$d\\`e\" 'f\\g'",
    "echo -n",
    "echo -ne 'a\\n'",
    "echo \"a\\\nb\"",
    "echo a\\\nb",
    "nosuchcmd",
    "nosuchcmd x | wc -l",
    "echo x | nosuchcmd",
    "'ls' /out",
    "\"echo\" hi",
    "cat /drop/sales.csv | grep -i north | wc -l",
    "ls /drop | grep a | head -n 1",
    "cat /drop/bin.dat | grep north",
    "cat /drop/enc.txt | grep -c north",
    "echo hi | cat - - /drop/notes.txt",
];

fn to_sh(den_line: &str) -> String {
    // Absolute names in the fixed lines start with /drop, /out, /work or are "/".
    let mut s = den_line.to_owned();
    for root in ["/drop", "/out", "/work", "/nope"] {
        for lead in [" ", "'", "\""] {
            s = s.replace(&format!("{lead}{root}"), &format!("{lead}@TMP@{root}"));
        }
    }
    s = s.replace(" / ", " @TMP@/ ");
    if s.ends_with(" /") {
        s = format!("{}@TMP@/", &s[..s.len() - 1]);
    }
    // echo as GNU echo, also after pipes and when quoted.
    let mut out = Vec::new();
    for part in s.split(" | ") {
        let p = part.trim_start();
        out.push(if let Some(rest) = p.strip_prefix("echo") {
            format!("/bin/echo{rest}")
        } else if let Some(rest) = p.strip_prefix("\"echo\"") {
            format!("/bin/echo{rest}")
        } else if let Some(rest) = p.strip_prefix("grep") {
            format!("grep -F{rest}")
        } else {
            p.to_owned()
        });
    }
    out.join(" | ")
}

#[test]
fn fixed_command_lines_match_gnu() {
    let files = fixed_den();
    let mut failures = Vec::new();
    for line in FIXED {
        if let Err(e) = compare_line(&files, line) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n\n{}",
        failures.len(),
        FIXED.len(),
        failures.join("\n\n")
    );
}

#[test]
fn long_names_match_gnu() {
    let files = fixed_den();
    let long = "a".repeat(256);
    let mut failures = Vec::new();
    for line in [
        format!("cat /drop/{long}"),
        format!("ls /drop/{long} /nope/{long}"),
        format!("head /drop/sales.csv/{long}"),
        format!("wc {long}"),
        format!("grep x /drop/{long}/x"),
        format!("cat /drop/{}", "b".repeat(255)),
    ] {
        if let Err(e) = compare_line(&files, &line) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn grep_binary_block_boundary_matches_gnu() {
    // GNU grep checks for NUL bytes per 96 KiB block: matches in blocks before the one
    // holding the first NUL are printed, later ones only reported.
    let mut failures = Vec::new();
    for nul in [
        5usize, 98_297, 98_303, 98_304, 98_310, 150_000, 196_607, 196_608, 250_000,
    ] {
        let mut data = Vec::new();
        let mut i = 0;
        while data.len() < 300_000 {
            data.extend_from_slice(format!("x{i:07}\n").as_bytes());
            i += 1;
        }
        data[nul] = 0;
        let files = vec![("/drop/big".to_owned(), data)];
        for line in [
            "grep x /drop/big",
            "grep -c x /drop/big",
            "grep -n 1 /drop/big",
            "grep -v zz /drop/big",
        ] {
            if let Err(e) = compare_line(&files, line) {
                failures.push(format!("NUL at {nul}: {}", e.lines().last().unwrap_or("")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn wc_word_classes_match_gnu() {
    // Every Unicode scalar value, in blocks: " c " counts 1 word for a word character,
    // "acb" counts 2 for a separator. One wc run per probe and block of 64 Ki values.
    let mut failures = Vec::new();
    for block in 0..17u32 {
        let chars: Vec<char> = (block << 16..(block + 1) << 16)
            .filter_map(char::from_u32)
            .collect();
        for probe in 0..2 {
            let mut data = Vec::new();
            for c in &chars {
                let s = if probe == 0 {
                    format!(" {c} \n")
                } else {
                    format!("a{c}b\n")
                };
                data.extend_from_slice(s.as_bytes());
            }
            let files = vec![("/drop/chars".to_owned(), data)];
            if let Err(e) = compare_line(&files, "wc -w /drop/chars") {
                failures.push(format!(
                    "block {block} probe {probe}: {}",
                    e.lines().last().unwrap_or("")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn grep_case_folding_matches_gnu() {
    // Every character with a case mapping (and some without), as patterns of one
    // `grep -i -n` run each against a file listing all of them, one per line.
    let mut cased: Vec<char> = (0..0x20000u32)
        .filter_map(char::from_u32)
        .filter(|c| {
            c.to_uppercase().ne(std::iter::once(*c)) || c.to_lowercase().ne(std::iter::once(*c))
        })
        .collect();
    cased.extend([
        '\u{212A}', '\u{1C80}', '\u{1C88}', 'ſ', 'ß', 'ẞ', 'µ', 'ͅ', 'ι', 'ϐ', '1', 'é',
    ]);
    let mut text = Vec::new();
    for c in &cased {
        text.extend_from_slice(format!("{c}\n").as_bytes());
    }
    let files = vec![("/drop/cased".to_owned(), text)];
    let tmp = TempDen::new(&files);
    let map = file_map(&files);
    // One sh run for all patterns: the matching lines of each, then an empty line.
    let mut script = String::new();
    for c in &cased {
        script.push_str(&format!(
            "grep -n -i -F -- {} drop/cased; echo\n",
            single(&c.to_string())
        ));
    }
    let script_path = tmp.err_dir().join("script.sh");
    std::fs::write(&script_path, &script).unwrap();
    let real = run_real(&tmp.root, &format!("sh {}", script_path.display()));
    let real_out = String::from_utf8(real.stdout).unwrap();
    let real_lines: Vec<String> = real_out
        .split("\n\n")
        .map(|group| {
            group
                .lines()
                .map(|l| l.split(':').next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(real_lines.len(), cased.len() + 1);
    let mut bad = Vec::new();
    for (c, want) in cased.iter().zip(&real_lines) {
        let o = run_shell(
            &format!("grep -n -i -- {} /drop/cased", single(&c.to_string())),
            &map,
            usize::MAX,
        );
        let got: String = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| format!("{} ", l.split(':').next().unwrap_or("")))
            .collect();
        if got.trim_end() != want.trim_end() {
            bad.push(format!(
                "{c:?} (U+{:04X}): ours [{}] real [{}]",
                u32::from(*c),
                got.trim_end(),
                want.trim_end()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        cased.len(),
        bad.join("\n")
    );
}
