//! `test`, `e2e` and `bench`: native checks, then the browser suites in real Chromium and
//! Firefox ESR against pages on 127.0.0.1, with all other traffic sent to a logging proxy.

use crate::serve::{start_proxy, start_static, Log, Mounts};
use crate::setup::tool_path;
use crate::{cargo, dist_dir, fsx, root, run};
use std::process::Command;

pub const BROWSERS: [&str; 2] = ["chromium", "firefox"];

/// What the browser suites run: `--browser`, `--file`, `--grep`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct E2e {
    /// One of [`BROWSERS`], or both when `None`.
    pub browser: Option<String>,
    /// One test file instead of the whole of `e2e/tests/`.
    pub file: Option<String>,
    /// Only the tests whose name matches this regular expression.
    pub grep: Option<String>,
}

/// `--browser B`: one of [`BROWSERS`].
pub fn browser(b: Option<&str>) -> Result<Option<String>, String> {
    match b {
        Some(b) if !BROWSERS.contains(&b) => Err(format!(
            "--browser: {b:?} is not one of {}",
            BROWSERS.join(", ")
        )),
        _ => Ok(b.map(str::to_owned)),
    }
}

pub fn test_all(suite: &E2e) -> Result<(), String> {
    crate::setup::setup_then(crate::setup::Need::All, true)?;
    let r = root();
    run(cargo().current_dir(&r).args(["fmt", "--all", "--check"]))?;
    run(cargo().current_dir(&r).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The wasm crate as it is built: with the element (dist/foxden.js, and its tests), and
    // without (the API-only module of dist/api.js).
    for variant in [["--tests"], ["--no-default-features"]] {
        run(cargo()
            .current_dir(&r)
            .args([
                "clippy",
                "-p",
                "foxden",
                "--target",
                "wasm32-unknown-unknown",
                "--lib",
            ])
            .args(variant)
            .args(["--", "-D", "warnings"]))?;
    }
    // den.js and worker.js against the message types generated from foxden-core's protocol.
    crate::typecheck::typecheck()?;
    run(cargo().current_dir(&r).args(["test", "--workspace"]))?;
    // The wheel installer (den-page/wheels.py, run by the worker in Pyodide), under the
    // machine's Python: its tests need only the standard library.
    run(Command::new("python3")
        .current_dir(&r)
        .args(["den-page/wheels_test.py"]))?;
    crate::fuzz::fuzz(15)?;
    // The Rust glue's wasm-bindgen tests, in both real browsers (element/webdriver.json sets
    // the Debian binaries and the flags headless Chromium needs as root).
    for browser in ["--chrome", "--firefox"] {
        run(Command::new("wasm-pack")
            .env("PATH", tool_path())
            .current_dir(r.join("element"))
            .args(["test", "--headless", browser, "."]))?;
    }
    crate::build::build(false)?;
    node_suite()?;
    // The demo extension: web-ext lint must report no errors (warnings: docs/extension.md).
    crate::ext::build_ext().and_then(|_| crate::ext::lint())?;
    e2e(suite)
}

/// The built module in Node.js (e2e/node/): the pure helpers, the typed refusals of what needs a
/// page, and dens with a runtime adapter (one of them Pyodide in a worker thread).
fn node_suite() -> Result<(), String> {
    run(Command::new("node")
        .env("PATH", tool_path())
        .env("FOXDEN_DIST", dist_dir())
        .current_dir(root())
        .args(["--test", "--test-reporter=spec"])
        .args(test_files("e2e/node")?))
}

fn e2e_mounts() -> Mounts {
    let r = root();
    vec![
        ("/e2e/".into(), r.join("e2e/pages")),
        ("/demo/".into(), r.join("demo")),
        // The packages suite's wheels (downloaded and pinned by xtask, see wheels.rs).
        ("/wheels/".into(), crate::wheels::wheels_dir()),
        // The unpacked extensions, to check that their den page refuses to run on a website.
        ("/dist-ext/".into(), crate::ext::ext_dir()),
        // Pyodide's own loader, for the bare-Pyodide baseline of the benchmark.
        (
            "/node_modules/pyodide/".into(),
            r.join("node_modules/pyodide"),
        ),
        ("/".into(), dist_dir()),
    ]
}

/// Starts the servers and runs `node <node_args>` once per browser (or in `browser` only) with
/// their addresses.
fn with_servers(
    browser: Option<&str>,
    node_args: &[String],
    artifacts: &str,
) -> Result<(), String> {
    let r = root();
    let art = crate::scratch_dir("e2e-artifacts").join(artifacts);
    fsx::create_dir(&art)?;
    let server_log = art.join("server.log");
    let proxy_log = art.join("proxy.log");
    let port = start_static(0, e2e_mounts(), Log::create(&server_log)?, false)?;
    let coi_port = start_static(
        0,
        e2e_mounts(),
        Log::create(&art.join("server-coi.log"))?,
        true,
    )?;
    let proxy = start_proxy(Log::create(&proxy_log)?)?;
    let browsers: Vec<&str> = match browser {
        Some(b) => vec![b],
        None => BROWSERS.to_vec(),
    };
    let mut failures = Vec::new();
    // What each browser's failing tests printed: the spec reporter puts it at the end of that
    // browser's run, so with two browsers the first one's scrolls far away; it is printed
    // again at the very end.
    let mut failure_reports = Vec::new();
    for b in &browsers {
        let report = art.join(format!("{b}-report.txt"));
        let args = with_report_file(node_args, &report.display().to_string());
        let mut cmd = Command::new("node");
        cmd.current_dir(&r)
            .env("PATH", tool_path())
            .env("FOXDEN_BROWSER", b)
            .env("FOXDEN_BASE", format!("http://127.0.0.1:{port}"))
            .env("FOXDEN_COI_BASE", format!("http://127.0.0.1:{coi_port}"))
            .env("FOXDEN_PROXY", format!("127.0.0.1:{proxy}"))
            .env("FOXDEN_SERVER_LOG", &server_log)
            .env("FOXDEN_PROXY_LOG", &proxy_log)
            .env("FOXDEN_ARTIFACTS", &art)
            .env("FOXDEN_EXT_DIR", crate::ext::ext_dir())
            .env("FOXDEN_WHEELS", crate::wheels::wheels_dir())
            .env("FOXDEN_DIST", dist_dir())
            .args(&args);
        if let Err(e) = run(&mut cmd) {
            failures.push(format!("{b}: {e}"));
            if let Ok(text) = std::fs::read_to_string(&report) {
                failure_reports.push(format!("{b}:\n{}", failing_section(&text)));
            }
        }
    }
    for r in &failure_reports {
        eprintln!("xtask: the failing tests again, with what they printed: {r}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// The end of a spec report from its "failing tests:" line (the failures and their errors), or
/// its last 60 lines when there is no such line.
fn failing_section(report: &str) -> String {
    match report.find("failing tests:") {
        Some(at) => report[report[..at].rfind('\n').map_or(0, |n| n + 1)..].to_owned(),
        None => {
            let lines: Vec<&str> = report.lines().collect();
            lines[lines.len().saturating_sub(60)..].join("\n")
        }
    }
}

/// The node arguments of the browser suites.
fn e2e_node_args(suite: &E2e) -> Result<Vec<String>, String> {
    let mut args: Vec<String> = ["--test", "--test-concurrency=1", "--test-reporter=spec"]
        .map(str::to_owned)
        .into();
    if let Some(g) = &suite.grep {
        args.push(format!("--test-name-pattern={g}"));
    }
    match &suite.file {
        Some(f) => args.push(f.clone()),
        None => args.extend(test_files("e2e/tests")?),
    }
    Ok(args)
}

/// `node --test` arguments with a second spec reporter that writes the report to `report`
/// (before the first test file: node reads whatever follows the files as files too). Other
/// node arguments (the benchmark's script) are left as they are.
fn with_report_file(node_args: &[String], report: &str) -> Vec<String> {
    let mut args = node_args.to_vec();
    if args.first().map(String::as_str) == Some("--test") {
        let at = args
            .iter()
            .position(|a| !a.starts_with("--"))
            .unwrap_or(args.len());
        args.splice(
            at..at,
            [
                "--test-reporter-destination=stdout".to_owned(),
                "--test-reporter=spec".to_owned(),
                format!("--test-reporter-destination={report}"),
            ],
        );
    }
    args
}

/// The `*.test.mjs` files of a folder (relative to the repository root), sorted: `node --test`
/// is given files, as Node 21 and later read a folder argument as a glob pattern.
/// None is an error: `node --test` with no file would run its default glob over the repository.
fn test_files(dir: &str) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(root().join(dir)).map_err(|e| format!("{dir}: {e}"))?;
    let mut files: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".test.mjs"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    if files.is_empty() {
        return Err(format!("{dir}: no *.test.mjs file"));
    }
    files.sort();
    Ok(files)
}

pub fn e2e(suite: &E2e) -> Result<(), String> {
    if !dist_dir().join("foxden.js").exists() {
        return Err("dist/ is missing: run `cargo xtask build` first".into());
    }
    // The extension tests load the unpacked extension made from this build.
    crate::ext::build_ext()?;
    // The packages suite's wheels, from PyPI, pinned (kept in target/ once downloaded).
    crate::wheels::ensure()?;
    with_servers(suite.browser.as_deref(), &e2e_node_args(suite)?, "e2e")
}

pub fn bench(browser: Option<&str>) -> Result<(), String> {
    crate::setup::setup(crate::setup::Need::All)?;
    if !dist_dir().join("foxden.js").exists() {
        crate::build::build(false)?;
    }
    crate::wheels::ensure()?;
    with_servers(browser, &["e2e/bench.mjs".to_owned()], "bench")?;
    native_sha256_baseline()
}

/// The native baseline for snapshot throughput: `sha256sum` over 100 MiB on this machine.
fn native_sha256_baseline() -> Result<(), String> {
    let path = crate::scratch_dir("bench").join("sha256-100MiB.bin");
    let data: Vec<u8> = (0..100u32 << 20).map(|i| (i & 255) as u8).collect();
    fsx::write(&path, &data)?;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        crate::output(Command::new("sha256sum").arg(&path))?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    fsx::remove_file(&path)?;
    println!(
        "native sha256sum of 100 MiB: {:.0} ms, {:.0} MiB/s (best of 3)",
        best * 1000.0,
        100.0 / best
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_and_file_reach_node() {
        let suite = E2e {
            browser: None,
            file: Some("e2e/tests/files.test.mjs".into()),
            grep: Some("fork".into()),
        };
        let args = e2e_node_args(&suite).unwrap();
        assert!(args.contains(&"--test-name-pattern=fork".to_owned()));
        assert_eq!(
            args.last().map(String::as_str),
            Some("e2e/tests/files.test.mjs")
        );
        let all = e2e_node_args(&E2e::default()).unwrap();
        assert!(!all.iter().any(|a| a.starts_with("--test-name-pattern")));
        // Every test file, each named (no folder: Node 21+ reads one as a glob).
        let files: Vec<&str> = all
            .iter()
            .map(String::as_str)
            .filter(|a| !a.starts_with("--"))
            .collect();
        assert!(files.contains(&"e2e/tests/spine.test.mjs"));
        assert!(files.contains(&"e2e/tests/bundle.test.mjs"));
        assert!(files
            .iter()
            .all(|f| f.starts_with("e2e/tests/") && f.ends_with(".test.mjs")));
        assert_eq!(test_files("e2e/node").unwrap(), ["e2e/node/node.test.mjs"]);
        assert!(test_files("e2e/pages").is_err());
        // The report's reporter goes before the files, after the suite's options.
        let with = with_report_file(&all, "r.txt");
        let first_file = with.iter().position(|a| !a.starts_with("--"));
        let dest = with
            .iter()
            .position(|a| a == "--test-reporter-destination=r.txt");
        assert!(dest.is_some() && dest < first_file);
        assert_eq!(with.len(), all.len() + 3);
        let bench = vec!["e2e/bench.mjs".to_owned()];
        assert_eq!(with_report_file(&bench, "r.txt"), bench);
    }

    #[test]
    fn the_failing_section_is_found() {
        let report = "✔ a (1ms)\n✖ b (2ms)\n  boom\n✖ failing tests:\n\n✖ b (2ms)\n  boom\n";
        assert_eq!(
            failing_section(report),
            "✖ failing tests:\n\n✖ b (2ms)\n  boom\n"
        );
        let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let tail = failing_section(&long);
        assert!(tail.starts_with("line 40\n") && tail.ends_with("line 99"));
    }

    #[test]
    fn browsers_are_checked() {
        assert_eq!(browser(None), Ok(None));
        assert_eq!(browser(Some("firefox")), Ok(Some("firefox".into())));
        assert!(browser(Some("safari")).is_err());
    }
}
