//! foxden's build, demo, test and benchmark commands: `cargo xtask <command> [flags]`.
//!
//! `cargo xtask help` lists the commands and their flags, and `cargo xtask <command> --help`
//! one command's: both are printed from the one table in `cli.rs` (`cli::COMMANDS`), which is
//! also what the parser accepts and the only flags a command can read. The common ones:
//! `cargo xtask demo` (build and serve the demo), `cargo xtask test` (everything), `cargo xtask
//! e2e [--browser B] [--file F] [--grep T]` (the browser suites on an existing build).

mod build;
mod cli;
mod ext;
mod fsx;
mod fuzz;
mod serve;
mod setup;
mod testing;
mod typecheck;
mod wheels;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// The build output folder: `dist/`, or `$FOXDEN_DIST` (lets parallel work build side by side).
pub fn dist_dir() -> PathBuf {
    match std::env::var("FOXDEN_DIST") {
        Ok(d) if !d.is_empty() => PathBuf::from(d),
        _ => root().join("dist"),
    }
}

/// A scratch folder under target/ that belongs to this dist folder.
pub fn scratch_dir(what: &str) -> PathBuf {
    let tag = dist_dir()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dist".into());
    root().join("target").join(format!("{what}-{tag}"))
}

/// `cargo`, as the one that runs us.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Runs a command, failing with its name when it fails.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    eprintln!("xtask: $ {}", describe(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("{}: {e}", describe(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} failed ({status})", describe(cmd)))
    }
}

/// Runs a command and returns its stdout.
pub fn output(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", describe(cmd)))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{} failed: {}",
            describe(cmd),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// What one run of xtask does: a command with its flags read from the command line.
#[derive(Debug, PartialEq)]
enum Task {
    Setup(setup::Need),
    Build { dev: bool },
    Demo { dev: bool, port: u16 },
    Serve { port: u16 },
    Test(testing::E2e),
    E2e(testing::E2e),
    Bench { browser: Option<String> },
    Fuzz { seconds: u32 },
    Ext { lint: bool },
}

/// Reads a command's flags; every flag of every command is read here, and only here.
fn task(args: &cli::Args) -> Result<Task, String> {
    let e2e = || -> Result<testing::E2e, String> {
        Ok(testing::E2e {
            browser: testing::browser(args.value("--browser"))?,
            file: args.value("--file").map(str::to_owned),
            grep: args.value("--grep").map(str::to_owned),
        })
    };
    Ok(match args.cmd.name {
        "setup" => Task::Setup(if args.switch("--browsers-only") {
            setup::Need::Browsers
        } else {
            setup::Need::All
        }),
        "build" => Task::Build {
            dev: args.switch("--dev"),
        },
        "demo" => Task::Demo {
            dev: args.switch("--dev"),
            port: args.parsed("--port", 8000)?,
        },
        "serve" => Task::Serve {
            port: args.parsed("--port", 8000)?,
        },
        "test" => Task::Test(e2e()?),
        "e2e" => Task::E2e(e2e()?),
        "bench" => Task::Bench {
            browser: testing::browser(args.value("--browser"))?,
        },
        "fuzz" => Task::Fuzz {
            seconds: args.parsed("--seconds", 15)?,
        },
        "ext" => Task::Ext {
            lint: args.switch("--lint"),
        },
        other => unreachable!("xtask bug: cli::COMMANDS has `{other}` but main.rs does not"),
    })
}

fn run_task(task: Task) -> Result<(), String> {
    match task {
        Task::Setup(need) => setup::setup(need),
        Task::Build { dev } => build::build(dev),
        // The demo needs only the build tools; browsers and drivers are the tests' business.
        Task::Demo { dev, port } => setup::setup_then(setup::Need::Build, !dev)
            .and_then(|_| build::build(dev))
            .and_then(|_| serve::demo(port)),
        Task::Serve { port } => serve::demo(port),
        Task::Test(suite) => testing::test_all(&suite),
        Task::E2e(suite) => testing::e2e(&suite),
        Task::Bench { browser } => testing::bench(browser.as_deref()),
        Task::Fuzz { seconds } => fuzz::fuzz(seconds),
        Task::Ext { lint } => ext::ext(lint),
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = match cli::parse(&argv) {
        Ok(cli::Parsed::Help(help)) => {
            print!("{help}");
            return ExitCode::SUCCESS;
        }
        Ok(cli::Parsed::Run(args)) => task(&args).and_then(run_task),
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> cli::Args {
        let argv: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
        match cli::parse(&argv) {
            Ok(cli::Parsed::Run(a)) => a,
            _ => panic!("{s}: not a command"),
        }
    }

    /// Every command reads exactly the flags its row declares: reading an undeclared one
    /// panics in `cli::Args`, and a declared one never read would be help for nothing.
    #[test]
    fn every_command_reads_exactly_its_declared_flags() {
        for cmd in cli::COMMANDS {
            let args = parse(cmd.name);
            task(&args).unwrap_or_else(|e| panic!("{}: {e}", cmd.name));
            let mut read = args.read_flags();
            read.sort_unstable();
            let mut declared: Vec<&str> = cmd.flags.iter().map(|f| f.name).collect();
            declared.sort_unstable();
            assert_eq!(
                read, declared,
                "`{}` reads other flags than it declares",
                cmd.name
            );
        }
    }

    #[test]
    fn flags_become_tasks() {
        let t = |s: &str| task(&parse(s));
        assert_eq!(t("build"), Ok(Task::Build { dev: false }));
        assert_eq!(t("build --dev"), Ok(Task::Build { dev: true }));
        assert_eq!(
            t("demo --port 9000 --dev"),
            Ok(Task::Demo {
                dev: true,
                port: 9000
            })
        );
        assert_eq!(t("serve"), Ok(Task::Serve { port: 8000 }));
        assert!(t("serve --port 70000").is_err());
        assert_eq!(t("setup"), Ok(Task::Setup(setup::Need::All)));
        assert_eq!(
            t("setup --browsers-only"),
            Ok(Task::Setup(setup::Need::Browsers))
        );
        assert_eq!(t("fuzz"), Ok(Task::Fuzz { seconds: 15 }));
        assert_eq!(t("fuzz --seconds=60"), Ok(Task::Fuzz { seconds: 60 }));
        assert_eq!(t("ext --lint"), Ok(Task::Ext { lint: true }));
        assert_eq!(t("bench"), Ok(Task::Bench { browser: None }));
        assert!(t("bench --browser safari").is_err());
        assert_eq!(
            t("e2e --browser chromium --file e2e/tests/files.test.mjs --grep fork"),
            Ok(Task::E2e(testing::E2e {
                browser: Some("chromium".into()),
                file: Some("e2e/tests/files.test.mjs".into()),
                grep: Some("fork".into()),
            }))
        );
        assert_eq!(
            t("test --browser firefox"),
            Ok(Task::Test(testing::E2e {
                browser: Some("firefox".into()),
                ..Default::default()
            }))
        );
    }
}
