//! The command table: every command, its flags and their help, written once. `cargo xtask help`
//! and `cargo xtask <command> --help` print it; the parser refuses what it does not declare
//! (unknown commands, unknown flags, a value missing); and a command can only read the flags
//! its row declares ([`Args`] panics otherwise, and a unit test in main.rs reads every
//! command's flags), so the help cannot drift from what the code does.

use std::cell::RefCell;
use std::str::FromStr;

/// One flag: `--name` alone (a switch) or `--name VALUE` / `--name=VALUE`.
pub struct Flag {
    pub name: &'static str,
    /// The placeholder of the value in the help (`N`, `B`), or `None` for a switch.
    pub value: Option<&'static str>,
    pub help: &'static str,
}

pub struct Cmd {
    pub name: &'static str,
    pub help: &'static str,
    pub flags: &'static [Flag],
}

const DEV: Flag = Flag {
    name: "--dev",
    value: None,
    help: "a faster, unoptimized build",
};
const PORT: Flag = Flag {
    name: "--port",
    value: Some("N"),
    help: "the port to serve on (default 8000; 0 picks a free one)",
};
const BROWSER: Flag = Flag {
    name: "--browser",
    value: Some("B"),
    help: "one browser only: chromium or firefox (default: both)",
};
const FILE: Flag = Flag {
    name: "--file",
    value: Some("F"),
    help: "one test file instead of all of e2e/tests/, e.g. e2e/tests/files.test.mjs",
};
const GREP: Flag = Flag {
    name: "--grep",
    value: Some("T"),
    help: "only tests whose name matches the regex T (node --test-name-pattern)",
};

/// Every command, in the order `cargo xtask help` lists them.
pub const COMMANDS: &[Cmd] = &[
    Cmd {
        name: "setup",
        help: "Installs what is missing: the wasm target, wasm-bindgen-cli of the pinned version, \
               wasm-pack, the npm packages, geckodriver, Debian's Chromium and Firefox ESR. \
               Idempotent.",
        flags: &[Flag {
            name: "--browsers-only",
            value: None,
            help: "only the browsers and their drivers",
        }],
    },
    Cmd {
        name: "build",
        help: "Builds dist/ (or $FOXDEN_DIST).",
        flags: &[DEV],
    },
    Cmd {
        name: "demo",
        help: "Installs the build tools (no browsers), builds, and serves the demo on \
               http://127.0.0.1:8000/.",
        flags: &[DEV, PORT],
    },
    Cmd {
        name: "serve",
        help: "Serves dist/ and demo/ without building.",
        flags: &[PORT],
    },
    Cmd {
        name: "test",
        help: "Everything: setup, fmt and clippy, native tests, fuzzing, the wasm-bindgen tests \
               in both browsers, a release build, web-ext lint, then the browser suites (e2e), which \
               the flags narrow.",
        flags: &[BROWSER, FILE, GREP],
    },
    Cmd {
        name: "e2e",
        help: "The browser suites only, in Chromium and Firefox, on an existing build.",
        flags: &[BROWSER, FILE, GREP],
    },
    Cmd {
        name: "bench",
        help: "Prints load, round-trip, sync and snapshot figures (builds first if dist/ is \
               missing).",
        flags: &[BROWSER],
    },
    Cmd {
        name: "fuzz",
        help: "Runs each cargo-fuzz target briefly (needs a nightly toolchain; skipped without).",
        flags: &[Flag {
            name: "--seconds",
            value: Some("N"),
            help: "seconds per target (default 15)",
        }],
    },
    Cmd {
        name: "ext",
        help: "Writes the demo extension, unpacked, to dist-ext/firefox and dist-ext/chromium \
               (or <FOXDEN_DIST>-ext/).",
        flags: &[Flag {
            name: "--lint",
            value: None,
            help: "then run web-ext lint on the Firefox one",
        }],
    },
];

/// What the command line asks for.
pub enum Parsed {
    /// Print this help and succeed.
    Help(String),
    Run(Args),
}

/// A command and the flags given to it.
pub struct Args {
    pub cmd: &'static Cmd,
    given: Vec<(&'static str, Option<String>)>,
    /// The flags read so far (the unit test checks that every declared flag is read).
    read: RefCell<Vec<&'static str>>,
}

impl Args {
    /// Whether the switch `name` was given.
    pub fn switch(&self, name: &str) -> bool {
        self.declared(name, false);
        self.given.iter().any(|(n, _)| *n == name)
    }

    /// The value of `name VALUE`, if given.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.declared(name, true);
        self.given
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The value of `name VALUE` parsed as a `T`, or `default` when not given.
    pub fn parsed<T: FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.value(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| {
                let flag = self.declared(name, true);
                format!(
                    "{name} {}: bad value {v:?}; {}\n\n{}",
                    flag.value.unwrap_or("VALUE"),
                    flag.help,
                    command_help(self.cmd)
                )
            }),
        }
    }

    /// The flags read so far, in the order first read.
    #[cfg(test)]
    pub fn read_flags(&self) -> Vec<&'static str> {
        self.read.borrow().clone()
    }

    /// The row of `name`; reading a flag the table does not declare (or as the wrong kind) is
    /// a bug in xtask, caught by the unit test that reads every command's flags.
    fn declared(&self, name: &str, takes_value: bool) -> &'static Flag {
        let Some(flag) = self.cmd.flags.iter().find(|f| f.name == name) else {
            panic!(
                "xtask bug: `{}` reads {name}, which its row in cli::COMMANDS does not declare",
                self.cmd.name
            );
        };
        assert_eq!(
            flag.value.is_some(),
            takes_value,
            "xtask bug: `{}` reads {name} as the wrong kind (switch or value)",
            self.cmd.name
        );
        let mut read = self.read.borrow_mut();
        if !read.contains(&flag.name) {
            read.push(flag.name);
        }
        flag
    }
}

/// Parses `cargo xtask`'s arguments (without the program name).
pub fn parse(argv: &[String]) -> Result<Parsed, String> {
    let Some(first) = argv.first() else {
        return Ok(Parsed::Help(help()));
    };
    if matches!(first.as_str(), "help" | "--help" | "-h") {
        return match argv.get(1) {
            None => Ok(Parsed::Help(help())),
            Some(c) => find(c).map(|c| Parsed::Help(command_help(c))),
        };
    }
    let cmd = find(first)?;
    let mut given: Vec<(&'static str, Option<String>)> = Vec::new();
    let mut rest = argv[1..].iter();
    while let Some(arg) = rest.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(Parsed::Help(command_help(cmd)));
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let fail = |what: String| Err(format!("{what}\n\n{}", command_help(cmd)));
        if !name.starts_with('-') {
            return fail(format!("`{}` takes no argument {arg:?}", cmd.name));
        }
        let Some(flag) = cmd.flags.iter().find(|f| f.name == name) else {
            return fail(format!("`{}` has no flag {name}", cmd.name));
        };
        if given.iter().any(|(n, _)| *n == flag.name) {
            return fail(format!("{name} is given twice"));
        }
        let value = match (flag.value, inline) {
            (None, None) => None,
            (None, Some(_)) => return fail(format!("{name} takes no value")),
            (Some(_), Some(v)) => Some(v),
            (Some(placeholder), None) => match rest.next() {
                Some(v) if !v.starts_with("--") => Some(v.clone()),
                _ => return fail(format!("{name} needs a value ({name} {placeholder})")),
            },
        };
        given.push((flag.name, value));
    }
    Ok(Parsed::Run(Args {
        cmd,
        given,
        read: RefCell::new(Vec::new()),
    }))
}

fn find(name: &str) -> Result<&'static Cmd, String> {
    COMMANDS
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("unknown command {name:?}\n\n{}", help()))
}

/// `setup [--browsers-only]`, `demo [--dev] [--port N]`.
fn synopsis(cmd: &Cmd) -> String {
    let mut s = cmd.name.to_owned();
    for f in cmd.flags {
        match f.value {
            Some(v) => s.push_str(&format!(" [{} {v}]", f.name)),
            None => s.push_str(&format!(" [{}]", f.name)),
        }
    }
    s
}

fn flag_lines(cmd: &Cmd, indent: &str, out: &mut String) {
    let width = cmd
        .flags
        .iter()
        .map(|f| f.name.len() + f.value.map_or(0, |v| v.len() + 1))
        .max()
        .unwrap_or(0);
    for f in cmd.flags {
        let head = match f.value {
            Some(v) => format!("{} {v}", f.name),
            None => f.name.to_owned(),
        };
        out.push_str(&format!("{indent}{head:width$}  {}\n", f.help));
    }
}

/// Words of `text` in lines of at most `width` characters, each starting with `indent`.
fn wrap(text: &str, indent: &str, width: usize, out: &mut String) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
            out.push_str(&format!("{indent}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{indent}{line}\n"));
    }
}

/// The help of every command.
pub fn help() -> String {
    let mut out = String::from(
        "usage: cargo xtask <command> [flags]   (cargo xtask <command> --help: one command)\n\n\
         With FOXDEN_DIST=/some/dir set, xtask builds, serves and tests that folder instead of dist/.\n\n\
         commands:\n",
    );
    for cmd in COMMANDS {
        out.push_str(&format!("  {}\n", synopsis(cmd)));
        wrap(cmd.help, "      ", 96, &mut out);
        flag_lines(cmd, "      ", &mut out);
    }
    out.push_str("  help [command]\n      This help.\n");
    out
}

/// The help of one command.
pub fn command_help(cmd: &Cmd) -> String {
    let mut out = format!("usage: cargo xtask {}\n\n", synopsis(cmd));
    wrap(cmd.help, "", 96, &mut out);
    if !cmd.flags.is_empty() {
        out.push_str("\nflags:\n");
        flag_lines(cmd, "  ", &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn args(s: &str) -> Args {
        match parse(&argv(s)) {
            Ok(Parsed::Run(a)) => a,
            Ok(Parsed::Help(h)) => panic!("{s}: help instead of a command:\n{h}"),
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn error(s: &str) -> String {
        match parse(&argv(s)) {
            Err(e) => e,
            Ok(_) => panic!("{s}: accepted"),
        }
    }

    #[test]
    fn the_table_is_well_formed() {
        for (i, c) in COMMANDS.iter().enumerate() {
            assert!(
                COMMANDS[..i].iter().all(|o| o.name != c.name),
                "{} twice",
                c.name
            );
            for (j, f) in c.flags.iter().enumerate() {
                assert!(
                    f.name.starts_with("--") && !f.name.contains('='),
                    "{}",
                    f.name
                );
                assert!(
                    c.flags[..j].iter().all(|o| o.name != f.name),
                    "{} {} twice",
                    c.name,
                    f.name
                );
                assert!(help().contains(f.help) && command_help(c).contains(f.help));
            }
        }
    }

    #[test]
    fn help_is_asked_for() {
        for s in ["", "help", "--help", "-h"] {
            assert!(matches!(parse(&argv(s)), Ok(Parsed::Help(h)) if h == help()));
        }
        for s in [
            "e2e --help",
            "e2e -h",
            "help e2e",
            "e2e --browser firefox --help",
        ] {
            match parse(&argv(s)) {
                Ok(Parsed::Help(h)) => {
                    assert!(h.starts_with("usage: cargo xtask e2e [--browser B] [--file F]"));
                    assert!(h.contains("--grep T"));
                }
                _ => panic!("{s}"),
            }
        }
    }

    #[test]
    fn values_and_switches() {
        let a = args("e2e --browser firefox --grep=snapshot --file e2e/tests/files.test.mjs");
        assert_eq!(a.value("--browser"), Some("firefox"));
        assert_eq!(a.value("--grep"), Some("snapshot"));
        assert_eq!(a.value("--file"), Some("e2e/tests/files.test.mjs"));
        assert_eq!(a.read_flags(), ["--browser", "--grep", "--file"]);
        let a = args("demo --dev");
        assert!(a.switch("--dev"));
        assert_eq!(a.value("--port"), None);
        assert_eq!(a.parsed("--port", 8000u16), Ok(8000));
        let a = args("serve --port 9000");
        assert_eq!(a.parsed("--port", 8000u16), Ok(9000));
        assert!(args("serve --port http")
            .parsed("--port", 8000u16)
            .is_err_and(|e| e.contains("bad value")));
    }

    #[test]
    fn what_is_not_declared_is_refused() {
        assert!(error("nope").starts_with("unknown command \"nope\""));
        assert!(error("nope").contains("usage: cargo xtask <command>"));
        let e = error("build --bogus");
        assert!(e.starts_with("`build` has no flag --bogus"), "{e}");
        assert!(e.contains("usage: cargo xtask build [--dev]"));
        assert!(error("serve --dev").contains("no flag --dev"));
        assert!(error("build extra").contains("takes no argument"));
        assert!(error("build --dev=1").contains("takes no value"));
        assert!(error("serve --port").contains("--port needs a value (--port N)"));
        assert!(error("e2e --grep --browser firefox").contains("--grep needs a value"));
        assert!(error("build --dev --dev").contains("twice"));
    }

    #[test]
    #[should_panic(expected = "does not declare")]
    fn reading_an_undeclared_flag_is_a_bug() {
        args("build").switch("--release");
    }

    #[test]
    #[should_panic(expected = "wrong kind")]
    fn reading_a_switch_as_a_value_is_a_bug() {
        args("build").value("--dev");
    }
}
