//! foxden's build, demo, test and benchmark commands: `cargo xtask <command>`.
//!
//! - `setup`   installs what is missing (wasm target, wasm-bindgen-cli of the pinned version,
//!   wasm-pack, geckodriver, npm packages, Debian's Chromium and Firefox ESR); idempotent.
//! - `build`   builds `dist/` (add `--dev` for a faster, unoptimized build).
//! - `demo`    installs the build tools only (no browsers), builds, serves the demo on
//!   http://127.0.0.1:8000/ (`--port N`).
//! - `test`    setup + fmt/clippy + native tests + build + browser tests in Chromium and Firefox.
//! - `e2e`     browser tests only (expects a build); `--browser chromium|firefox`, `--grep TEXT`.
//! - `bench`   prints load and run figures in both browsers.
//! - `fuzz`    runs each cargo-fuzz target briefly (`--seconds N`, default 15).
//! - `serve`   serves `dist/` and `demo/` without building.
//! - `ext`     writes the demo extension, unpacked, to `dist-ext/{firefox,chromium}` (`--lint`: web-ext lint).

mod build;
mod ext;
mod fuzz;
mod serve;
mod setup;
mod testing;
mod typecheck;

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

/// Value of `--name VALUE` in args.
pub fn flag_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().map(String::as_str).unwrap_or("help");
    let rest = &args[args.len().min(1)..];
    let result = match cmd {
        "setup" => setup::setup(if rest.iter().any(|a| a == "--browsers-only") {
            setup::Need::Browsers
        } else {
            setup::Need::All
        }),
        "build" => build::build(rest.iter().any(|a| a == "--dev")),
        // The demo needs only the build tools; browsers and drivers are the tests' business.
        "demo" => setup::setup(setup::Need::Build)
            .and_then(|_| build::build(rest.iter().any(|a| a == "--dev")))
            .and_then(|_| serve::demo(rest)),
        "serve" => serve::demo(rest),
        "test" => testing::test_all(rest),
        "e2e" => testing::e2e(rest),
        "ext" => ext::ext(rest),
        "bench" => testing::bench(rest),
        "fuzz" => fuzz::fuzz(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <setup|build [--dev]|demo [--port N]|serve|test|e2e [--browser B] [--grep T]|bench>"
            );
            return if cmd == "help" {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
