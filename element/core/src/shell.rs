//! The read-only shell behind `den.sh` (issue 4): `ls`, `cat`, `head`, `wc`, `grep`
//! (literal, like `grep -F`) and `echo`, joined with `|`, over the den's files, with the
//! output, messages and exit codes of GNU coreutils 9.1 and GNU grep 3.8 under
//! `LC_ALL=C.UTF-8` run by `sh -c` (dash).
//!
//! The full contract (syntax, options, differences from a real shell, limits) is in
//! `docs/shell.md`. In short:
//! - The working directory is `/`, which holds `drop`, `out` and `work`; names resolve
//!   through [`crate::paths::normalize_path`] (a `..` segment never resolves).
//! - The first command reads an empty stdin; each next one reads the previous one's
//!   stdout. The exit code is the last command's.
//! - Unsupported syntax or options: exit code 2 and a message naming them, nothing run.
//!   An unknown command: `name: command not found`, exit code 127.
//! - stdout and stderr together keep at most `max_output_bytes` bytes, in the order
//!   they were written; `truncated` tells that something was cut.

mod cat;
mod echo;
mod fs;
mod getopt;
mod grep;
mod head;
mod ls;
mod parse;
mod quote;
mod stream;
mod tables;
mod unicode;
mod wc;

use crate::files::FileMap;
use stream::{Rope, RopeBuilder, Seg, Sink};

/// What a shell command line produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    /// The last command's standard output (capped).
    pub stdout: Vec<u8>,
    /// Messages of all commands, in pipeline order (capped).
    pub stderr: Vec<u8>,
    /// Exit code: the last command's; 2 for unsupported syntax; 127 for an unknown command.
    pub code: i32,
    /// True when output was cut at `max_output_bytes`.
    pub truncated: bool,
}

/// Runs a command line over the den's files; never panics, never changes a file.
pub fn run_shell(command: &str, files: &FileMap, max_output_bytes: usize) -> ShellOutput {
    let mut sink = Sink::new(max_output_bytes);
    let code = run(
        command,
        files,
        &mut sink,
        stream::PIPE_OWNED_LIMIT,
        READ_LIMIT,
    );
    ShellOutput {
        stdout: sink.stdout,
        stderr: sink.stderr,
        code,
        truncated: sink.truncated,
    }
}

/// Most bytes one command line reads, files and pipes together.
const READ_LIMIT: usize = 1 << 30;

/// The longest command line (Linux's `MAX_ARG_STRLEN`, 128 KiB, bounds one word; its whole
/// `ARG_MAX` is 2 MiB).
const MAX_COMMAND_BYTES: usize = 1 << 20;

fn run(
    command: &str,
    files: &FileMap,
    sink: &mut Sink,
    pipe_limit: usize,
    read_limit: usize,
) -> i32 {
    // Every word costs a copy and a lookup on the page's main thread: a bounded command line.
    if command.len() > MAX_COMMAND_BYTES {
        sink.err(
            format!(
                "den.sh: the command line is longer than {} KiB; stopped\n",
                MAX_COMMAND_BYTES >> 10
            )
            .as_bytes(),
        );
        return 2;
    }
    let pipeline = match parse::parse(command) {
        Ok(p) => p,
        Err(e) => {
            sink.err(e.message().as_bytes());
            return 2;
        }
    };
    // Check every command's options before running anything.
    let mut commands = Vec::with_capacity(pipeline.len());
    for argv in &pipeline {
        match Command::prepare(argv) {
            Ok(c) => commands.push(c),
            Err(msg) => {
                sink.err(msg.as_bytes());
                return 2;
            }
        }
    }
    let fs = fs::Fs::new(files);
    let mut stdin = Rope::default();
    let mut code = 0;
    let last = commands.len().saturating_sub(1);
    let mut read = 0usize;
    for (i, cmd) in commands.iter().enumerate() {
        // den.sh runs on the page's main thread, in one go: what the command line reads in all
        // (files named and piped data, a file named twice counting twice) is bounded.
        read = read.saturating_add(cmd.input_bytes(&fs, stdin.len()));
        if read > read_limit {
            sink.err(
                format!(
                    "den.sh: this command line reads more than {} MiB{}; stopped\n",
                    read_limit >> 20,
                    match cmd {
                        Command::Grep(o) if o.passes() > 1 =>
                            " (grep reads its input once per pattern)",
                        _ => "",
                    }
                )
                .as_bytes(),
            );
            return 2;
        }
        let mut io = Io {
            stdin: Some(std::mem::take(&mut stdin)),
            pipe: (i < last).then(|| RopeBuilder::new(pipe_limit)),
            sink,
            work_left: read_limit - read,
            worked: 0,
        };
        code = cmd.run(&fs, &mut io);
        // Work beyond what the command read (ls's listings, grep -i's case checks) counts too.
        read = read.saturating_add(io.worked);
        if read > read_limit {
            sink.err(
                format!(
                    "den.sh: this command line reads more than {} MiB (ls's listings and grep -i's case checks count too); stopped\n",
                    read_limit >> 20
                )
                .as_bytes(),
            );
            return 2;
        }
        if let Some(pipe) = io.pipe.take() {
            if pipe.over_limit() {
                sink.err(
                    format!(
                        "den.sh: more than {} MiB of data between two commands; stopped\n",
                        pipe_limit >> 20
                    )
                    .as_bytes(),
                );
                return 2;
            }
            stdin = pipe.finish();
        }
    }
    code
}

/// A command's standard streams.
pub(crate) struct Io<'s> {
    /// Not yet read standard input (read once; later reads see end of file).
    stdin: Option<Rope>,
    /// Where stdout goes when another command follows; `None` for the last command.
    pipe: Option<RopeBuilder>,
    sink: &'s mut Sink,
    /// Work the command may do beyond what it reads, in bytes of the command line's read
    /// bound: what is left of it.
    work_left: usize,
    /// That work done so far (added to the bound's count after the command).
    worked: usize,
}

impl Io<'_> {
    /// Takes standard input (empty when already read).
    fn take_stdin(&mut self) -> Rope {
        self.stdin.take().unwrap_or_default()
    }

    /// Writes bytes to stdout.
    fn out(&mut self, b: &[u8]) {
        match &mut self.pipe {
            Some(p) => p.push(b),
            None => self.sink.out(b),
        }
    }

    /// Writes a shared slice to stdout.
    fn out_seg(&mut self, s: Seg) {
        match &mut self.pipe {
            Some(p) => p.push_seg(s),
            None => self.sink.out(s.bytes()),
        }
    }

    /// Writes a message to stderr.
    fn err(&mut self, msg: &str) {
        self.sink.err(msg.as_bytes());
    }

    /// True when nothing written to stdout can be seen any more: the output cap was reached,
    /// or the pipe's limit, or the command's work is past the bound (the command line then
    /// stops after this command).
    fn out_closed(&self) -> bool {
        self.exhausted()
            || match &self.pipe {
                Some(p) => p.over_limit(),
                None => self.sink.truncated,
            }
    }

    /// Counts `n` bytes of work beyond the command's input.
    fn spend(&mut self, n: usize) {
        self.worked = self.worked.saturating_add(n);
    }

    /// True when the command's work is past what the read bound has left.
    fn exhausted(&self) -> bool {
        self.worked > self.work_left
    }
}

/// One command of a pipeline, with its options checked.
enum Command {
    Ls(ls::Opts),
    Cat(Vec<String>),
    Head(head::Opts),
    Wc(wc::Opts),
    Grep(grep::Opts),
    Echo(Vec<String>),
    /// Not a command den.sh knows.
    NotFound(String),
    /// A usage error GNU reports when the command runs (message, exit code).
    Fail(String, i32),
}

impl Command {
    /// Checks a command's name and options; `Err` is the message for unsupported ones.
    fn prepare(argv: &[String]) -> Result<Command, String> {
        let (name, args) = match argv.split_first() {
            Some((n, a)) => (n.as_str(), a),
            None => return Ok(Command::Fail(String::new(), 0)),
        };
        match name {
            "ls" => ls::prepare(args),
            "cat" => cat::prepare(args),
            "head" => head::prepare(args),
            "wc" => wc::prepare(args),
            "grep" => grep::prepare(args),
            "echo" => echo::prepare(args),
            _ => Ok(Command::NotFound(name.to_owned())),
        }
    }

    /// What the command reads: its files' sizes, and the piped data when it reads stdin.
    fn input_bytes(&self, fs: &fs::Fs, stdin: usize) -> usize {
        let operands: &[String] = match self {
            Command::Cat(o) => o,
            Command::Head(o) => o.operands(),
            Command::Wc(o) => o.operands(),
            Command::Grep(o) => o.operands(),
            Command::Ls(_) | Command::Echo(_) | Command::NotFound(_) | Command::Fail(..) => {
                return 0
            }
        };
        // grep searches each line once per pattern: its work is its input times that.
        let passes = match self {
            Command::Grep(o) => o.passes(),
            _ => 1,
        };
        if operands.is_empty() {
            return stdin.saturating_mul(passes);
        }
        let bytes = operands.iter().fold(0usize, |n, name| {
            n.saturating_add(match fs.resolve(name) {
                _ if name == "-" => stdin,
                Ok(fs::Node::File(d)) => d.len(),
                _ => 0,
            })
        });
        bytes.saturating_mul(passes)
    }

    fn run(&self, fs: &fs::Fs, io: &mut Io) -> i32 {
        match self {
            Command::Ls(o) => ls::run(o, fs, io),
            Command::Cat(operands) => cat::run(operands, fs, io),
            Command::Head(o) => head::run(o, fs, io),
            Command::Wc(o) => wc::run(o, fs, io),
            Command::Grep(o) => grep::run(o, fs, io),
            Command::Echo(args) => echo::run(args, io),
            Command::NotFound(name) => {
                io.err(&format!("{name}: command not found\n"));
                127
            }
            Command::Fail(msg, code) => {
                io.err(msg);
                *code
            }
        }
    }
}

/// The message for an option den.sh does not support.
fn unsupported_option(cmd: &str, opt: &str, supported: &str) -> String {
    format!("den.sh: {cmd}: unsupported option '{opt}' (supported: {supported})\n")
}

/// Maps getopt errors to the unsupported message (`Err`) or a GNU usage error (`Ok`).
fn getopt_error(cmd: &str, e: getopt::GetoptError, supported: &str) -> Result<Command, String> {
    match e {
        getopt::GetoptError::Unsupported(o) => Err(unsupported_option(cmd, &o, supported)),
        getopt::GetoptError::MissingValue(c) => Ok(Command::Fail(
            format!("{cmd}: option requires an argument -- '{c}'\nTry '{cmd} --help' for more information.\n"),
            if cmd == "grep" { 2 } else { 1 },
        )),
        getopt::GetoptError::Trailing(c) => Ok(Command::Fail(
            format!("{cmd}: invalid trailing option -- {c}\nTry '{cmd} --help' for more information.\n"),
            1,
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::files::{FileEntry, Op};

    fn den(files: &[(&str, &[u8])]) -> FileMap {
        let mut m = FileMap::new();
        let ops = files
            .iter()
            .map(|(p, d)| Op::Put {
                path: (*p).into(),
                entry: FileEntry::new(d.to_vec(), 0.0),
            })
            .collect();
        m.apply(ops, 1 << 30).unwrap();
        m
    }

    fn sh(m: &FileMap, cmd: &str) -> (String, String, i32) {
        let o = run_shell(cmd, m, 1 << 20);
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.code,
        )
    }

    fn sample() -> FileMap {
        den(&[
            (
                "/drop/sales.csv",
                b"region,units\nnorth,10\nsouth,7\nNorth,3\n",
            ),
            ("/drop/notes.txt", b"no newline"),
            ("/drop/bin.dat", b"abc\x00def\nnorth\n"),
            ("/drop/.hidden", b""),
            ("/work/sub/x.txt", b"x\n"),
        ])
    }

    #[test]
    fn product_sheet_example() {
        let m = den(&[("/drop/sales.csv", b"region,units\nnorth,10\nsouth,7\n")]);
        assert_eq!(
            sh(&m, "grep north /drop/sales.csv"),
            ("north,10\n".into(), "".into(), 0)
        );
    }

    #[test]
    fn ls_lists_folders_and_files() {
        let m = sample();
        assert_eq!(sh(&m, "ls"), ("drop\nout\nwork\n".into(), "".into(), 0));
        assert_eq!(sh(&m, "ls /"), ("drop\nout\nwork\n".into(), "".into(), 0));
        assert_eq!(
            sh(&m, "ls /drop"),
            ("bin.dat\nnotes.txt\nsales.csv\n".into(), "".into(), 0)
        );
        assert_eq!(
            sh(&m, "ls -A /drop").0,
            ".hidden\nbin.dat\nnotes.txt\nsales.csv\n"
        );
        assert_eq!(sh(&m, "ls -a /out").0, ".\n..\n");
        assert_eq!(
            sh(&m, "ls /drop/notes.txt"),
            ("/drop/notes.txt\n".into(), "".into(), 0)
        );
        assert_eq!(
            sh(&m, "ls /work /drop/notes.txt /out /nope"),
            (
                "/drop/notes.txt\n\n/out:\n\n/work:\nsub\n".into(),
                "ls: cannot access '/nope': No such file or directory\n".into(),
                2
            )
        );
        assert_eq!(sh(&m, "ls /nope /work").0, "/work:\nsub\n");
        assert_eq!(
            sh(&m, "ls /drop/notes.txt/").1,
            "ls: cannot access '/drop/notes.txt/': Not a directory\n"
        );
    }

    #[test]
    fn cat_and_errors() {
        let m = sample();
        assert_eq!(
            sh(&m, "cat /drop/notes.txt /drop/notes.txt").0,
            "no newlineno newline"
        );
        assert_eq!(
            sh(&m, "cat /drop/nope /drop /drop/../drop/notes.txt"),
            (
                "".into(),
                "cat: /drop/nope: No such file or directory\ncat: /drop: Is a directory\ncat: /drop/../drop/notes.txt: No such file or directory\n".into(),
                1
            )
        );
        assert_eq!(
            sh(&m, "cat '/drop/a b'").1,
            "cat: '/drop/a b': No such file or directory\n"
        );
        assert_eq!(
            sh(&m, "echo hi | cat - /drop/notes.txt -").0,
            "hi\nno newline"
        );
    }

    #[test]
    fn head_wc_grep() {
        let m = sample();
        assert_eq!(
            sh(&m, "head -n 2 /drop/sales.csv").0,
            "region,units\nnorth,10\n"
        );
        assert_eq!(sh(&m, "head -1 /drop/sales.csv").0, "region,units\n");
        assert_eq!(sh(&m, "head -n -3 /drop/sales.csv").0, "region,units\n");
        assert_eq!(
            sh(&m, "head -n1 /drop/sales.csv /drop/notes.txt").0,
            "==> /drop/sales.csv <==\nregion,units\n\n==> /drop/notes.txt <==\nno newline"
        );
        assert_eq!(
            sh(&m, "head -n x /drop/sales.csv"),
            (
                "".into(),
                "head: invalid number of lines: \u{2018}x\u{2019}\n".into(),
                1
            )
        );
        // R and Q are no suffixes in GNU head 9.1: a plain invalid number.
        assert_eq!(
            sh(&m, "head -n 1R /drop/sales.csv"),
            (
                "".into(),
                "head: invalid number of lines: \u{2018}1R\u{2019}\n".into(),
                1
            )
        );
        assert_eq!(sh(&m, "wc /drop/sales.csv").0, " 4  4 38 /drop/sales.csv\n");
        assert_eq!(
            sh(&m, "wc -l /drop/sales.csv /drop/notes.txt").0,
            " 4 /drop/sales.csv\n 0 /drop/notes.txt\n 4 total\n"
        );
        assert_eq!(
            sh(&m, "cat /drop/sales.csv | wc").0,
            "      4       4      38\n"
        );
        assert_eq!(sh(&m, "cat /drop/sales.csv | wc -l").0, "4\n");
        assert_eq!(
            sh(&m, "grep -i north /drop/sales.csv").0,
            "north,10\nNorth,3\n"
        );
        assert_eq!(
            sh(&m, "grep -c -v north /drop/sales.csv /drop/notes.txt").0,
            "/drop/sales.csv:3\n/drop/notes.txt:1\n"
        );
        assert_eq!(sh(&m, "grep -n o /drop/notes.txt").0, "1:no newline\n");
        assert_eq!(sh(&m, "grep zzz /drop/notes.txt").2, 1);
        assert_eq!(
            sh(&m, "grep north /drop/bin.dat"),
            (
                "".into(),
                "grep: /drop/bin.dat: binary file matches\n".into(),
                0
            )
        );
        assert_eq!(sh(&m, "grep -c north /drop/bin.dat").0, "1\n");
        assert_eq!(sh(&m, "grep x /drop").1, "grep: /drop: Is a directory\n");
        assert_eq!(sh(&m, "grep").2, 2);
    }

    #[test]
    fn echo_and_pipes() {
        let m = sample();
        assert_eq!(
            sh(&m, "echo a  'b  c' \"d\""),
            ("a b  c d\n".into(), "".into(), 0)
        );
        assert_eq!(sh(&m, "echo -n x"), ("x".into(), "".into(), 0));
        assert_eq!(sh(&m, "echo -e 'a\\tb\\x41\\0101\\c' z").0, "a\tbAA");
        assert_eq!(sh(&m, "echo 'a\\tb'").0, "a\\tb\n");
        assert_eq!(sh(&m, "echo -x").0, "-x\n");
        assert_eq!(
            sh(&m, "cat /drop/sales.csv | grep -i NORTH | wc -l").0,
            "2\n"
        );
        assert_eq!(sh(&m, "cat /drop/sales.csv | head -n 1 | grep zzz").2, 1);
    }

    #[test]
    fn refusals_and_unknown_commands() {
        let m = sample();
        let (o, e, c) = sh(&m, "ls > x");
        assert_eq!((o.as_str(), c), ("", 2));
        assert!(e.contains("redirections"), "{e}");
        let (_, e, c) = sh(&m, "grep -E x /drop/sales.csv");
        assert_eq!(c, 2);
        assert!(e.contains("'-E'"), "{e}");
        assert_eq!(
            sh(&m, "python x"),
            ("".into(), "python: command not found\n".into(), 127)
        );
        assert_eq!(
            sh(&m, "python | wc -l"),
            ("0\n".into(), "python: command not found\n".into(), 0)
        );
        assert_eq!(
            sh(&m, "cat /drop/sales.csv | nope"),
            ("".into(), "nope: command not found\n".into(), 127)
        );
        assert_eq!(sh(&m, ""), ("".into(), "".into(), 0));
        assert_eq!(sh(&m, "head -n"), ("".into(), "head: option requires an argument -- 'n'\nTry 'head --help' for more information.\n".into(), 1));
    }

    #[test]
    fn data_between_commands_is_limited() {
        let m = den(&[("/drop/big", &[b'x'; 4000])]);
        let mut sink = Sink::new(1 << 20);
        let code = run("cat /drop/big | wc -c", &m, &mut sink, 100, READ_LIMIT);
        // Shared file data costs only a slice record.
        assert_eq!((code, sink.stdout.as_slice()), (0, &b"4000\n"[..]));
        let mut sink = Sink::new(1 << 20);
        let code = run(
            "grep -n x /drop/big | wc -c",
            &m,
            &mut sink,
            1000,
            READ_LIMIT,
        );
        assert_eq!(code, 2);
        assert!(String::from_utf8_lossy(&sink.stderr).contains("between two commands"));
        assert!(sink.stdout.is_empty());
    }

    #[test]
    fn what_a_command_line_reads_is_limited() {
        // Shared slices cost the pipe almost nothing, so a file named many times could be read
        // without end: what is read in all (files and pipes) is bounded.
        let m = den(&[("/drop/big", &[b'x'; 4000])]);
        let run_with = |cmd: &str| {
            let mut sink = Sink::new(1 << 20);
            let code = run(cmd, &m, &mut sink, stream::PIPE_OWNED_LIMIT, 3 << 20);
            (
                code,
                String::from_utf8_lossy(&sink.stdout).into_owned(),
                String::from_utf8_lossy(&sink.stderr).into_owned(),
            )
        };
        let many = "/drop/big ".repeat(350); // 1.4 MB, read by cat and again by wc
        assert_eq!(run_with(&format!("cat {many}| wc -c")).1, "1400000\n");
        let many = "/drop/big ".repeat(400); // 1.6 MB, read by cat and again by wc
        let (code, out, err) = run_with(&format!("cat {many}| wc -c"));
        assert_eq!((code, out.as_str()), (2, ""));
        assert_eq!(
            err,
            "den.sh: this command line reads more than 3 MiB; stopped\n"
        );
        let (code, _, err) = run_with(&format!("grep -c x {}", "/drop/big ".repeat(800)));
        assert_eq!(code, 2);
        assert!(err.contains("reads more than 3 MiB"), "{err}");
    }

    /// Runs `cmd` with the real bounds (256 MiB pipes, 1 GiB read): exit code, stdout, stderr.
    fn run_bounded(m: &FileMap, cmd: &str) -> (i32, Vec<u8>, String) {
        let mut sink = Sink::new(1 << 20);
        let code = run(cmd, m, &mut sink, stream::PIPE_OWNED_LIMIT, 1 << 30);
        let err = String::from_utf8_lossy(&sink.stderr).into_owned();
        (code, sink.stdout, err)
    }

    #[test]
    fn grep_counts_its_input_once_per_pattern() {
        // 2 000 patterns over 1 MB would be 2 GB of searching on the page's main thread.
        let m = den(&[("/drop/big", &[b'x'; 1 << 20])]);
        let pats: Vec<String> = (0..2000).map(|i| format!("zz{i:05}")).collect();
        let (code, _, err) = run_bounded(&m, &format!("grep -c '{}' /drop/big", pats.join("\n")));
        assert_eq!(code, 2);
        assert_eq!(
            err,
            "den.sh: this command line reads more than 1024 MiB (grep reads its input once per pattern); stopped\n"
        );
        // The same pattern given many times is searched once.
        let same = vec!["x"; 2000].join("\n");
        let (code, out, _) = run_bounded(&m, &format!("grep -c '{same}' /drop/big"));
        assert_eq!((code, out.as_slice()), (0, &b"1\n"[..]));
    }

    #[test]
    fn grep_does_not_copy_a_line_across_piped_files_without_bound() {
        // One 1 MiB line with no newline, named 80 times: a line of 80 MiB across the pipe.
        let m = den(&[("/drop/f", &[b'a'; 1 << 20])]);
        let ops = "/drop/f ".repeat(80);
        for (flags, limit) in [("", 64), ("-i ", 16)] {
            let (code, out, err) = run_bounded(&m, &format!("cat {ops}| grep {flags}-c a"));
            assert_eq!(code, 2, "{err}");
            assert!(err.contains(&format!("than {limit} MiB")), "{err}");
            // The count so far (GNU grep prints it too when it stops at an error).
            assert_eq!(out, b"0\n");
        }
        // A long unterminated last line inside one file is not copied: no limit.
        let big = vec![b'a'; (64 << 20) + 10];
        let m1 = den(&[("/drop/big", &big)]);
        for cmd in ["grep -c a /drop/big", "cat /drop/big | grep -c a"] {
            let (code, out, _) = run_bounded(&m1, cmd);
            assert_eq!((code, out.as_slice()), (0, &b"1\n"[..]), "{cmd}");
        }
        // Under the bound, the long line is one line.
        let (code, out, _) = run_bounded(&m, &format!("cat {}| grep -c a", "/drop/f ".repeat(3)));
        assert_eq!((code, out.as_slice()), (0, &b"1\n"[..]));
    }

    #[test]
    fn grep_i_refuses_a_line_too_long_to_fold() {
        let mut long = vec![b'a'; (16 << 20) + 1];
        long.extend_from_slice(b"\nA\n");
        let m = den(&[("/drop/long", &long)]);
        let (out, err, code) = sh(&m, "grep -ci a /drop/long");
        assert_eq!((out.as_str(), code), ("0\n", 2));
        assert!(err.contains("line 1 is longer than 16 MiB"), "{err}");
        // Without -i nothing is folded: the line is searched as it is.
        assert_eq!(sh(&m, "grep -c a /drop/long"), ("1\n".into(), "".into(), 0));
    }

    #[test]
    fn assignments_are_found_in_linear_time() {
        let m = sample();
        // A word with `-` before its `=`s is not an assignment; each `=` used to re-check it.
        let word = format!("{}-{}", "a".repeat(50_000), "=".repeat(50_000));
        let (out, _, code) = sh(&m, &format!("echo {word}"));
        assert_eq!((out.len(), code), (100_002, 0));
        assert_eq!(sh(&m, "echo a-=b x=y").0, "a-=b x=y\n");
    }

    #[test]
    fn output_is_capped() {
        let m = sample();
        let o = run_shell("cat /drop/sales.csv /drop/nope", &m, 10);
        assert_eq!(
            (o.stdout.as_slice(), o.stderr.len(), o.truncated),
            (&b"region,uni"[..], 0, true)
        );
        let o = run_shell("cat /drop/nope /drop/sales.csv", &m, 50);
        assert_eq!(o.stderr.len() + o.stdout.len(), 50);
        assert!(o.truncated && o.stderr.starts_with(b"cat: /drop/nope"));
        let o = run_shell("cat /drop/sales.csv", &m, 1000);
        assert!(!o.truncated);
    }

    /// A run with `read_limit`: (stdout, stderr, code).
    fn sh_limited(m: &FileMap, cmd: &str, read_limit: usize) -> (String, String, i32) {
        let mut sink = Sink::new(1 << 20);
        let code = run(cmd, m, &mut sink, stream::PIPE_OWNED_LIMIT, read_limit);
        (
            String::from_utf8_lossy(&sink.stdout).into_owned(),
            String::from_utf8_lossy(&sink.stderr).into_owned(),
            code,
        )
    }

    #[test]
    fn grep_i_case_checks_count_against_the_read_bound() {
        // U+1C80 upper-cases to the key of `в` but is not one of its case variants: every
        // position of this line is a candidate whose check fails only at the last character
        // (the work once grew as the line times the pattern, uncounted: 15 s for 3 MB).
        let m = den(&[("/drop/f", "\u{1C80}".repeat(100_000).as_bytes())]);
        let hostile = format!("grep -ci '{}\u{432}' /drop/f", "\u{1C80}".repeat(999));
        let (out, err, code) = sh_limited(&m, &hostile, 16 << 20);
        assert_eq!((out.as_str(), code), ("", 2), "{err}");
        assert!(err.contains("grep -i's case checks count too"), "{err}");
        // An ordinary -i search of the same line is well within it.
        let plain = format!("grep -ci '{}' /drop/f", "\u{1C80}".repeat(1000));
        assert_eq!(
            sh_limited(&m, &plain, 16 << 20),
            ("1\n".into(), "".into(), 0)
        );
        assert_eq!(sh_limited(&m, "grep -ci '\u{432}' /drop/f", 16 << 20).2, 1);
    }

    #[test]
    fn listings_count_against_the_read_bound() {
        // ls reads nothing, yet each stage of `ls … | ls … |` could write 256 MiB into a pipe
        // nobody reads, with no end to the stages (4 took 29 s): its listings count.
        let names: Vec<String> = (0..1000).map(|i| format!("/drop/f{i:04}")).collect();
        let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        let m = den(&files);
        let stage = format!("ls -a {}| ", "/drop ".repeat(100));
        let cmd = format!("{}echo done", stage.repeat(20));
        let (out, err, code) = sh_limited(&m, &cmd, 8 << 20);
        assert_eq!((out.as_str(), code), ("", 2), "{err}");
        assert!(err.contains("ls's listings"), "{err}");
        // One listing in a pipe, as usual.
        assert_eq!(sh(&m, "ls /drop | wc -l"), ("1000\n".into(), "".into(), 0));
    }

    #[test]
    fn the_command_line_is_bounded() {
        let m = den(&[("/drop/a", b"x")]);
        let long = format!("cat{}", " /drop/a".repeat(140_000));
        let (out, err, code) = sh(&m, &long);
        assert_eq!((out.as_str(), code), ("", 2));
        assert_eq!(
            err,
            "den.sh: the command line is longer than 1024 KiB; stopped\n"
        );
        let fits = format!("cat{}", " /drop/a".repeat(1000));
        assert_eq!(sh(&m, &fits).0.len(), 1000);
    }
}
