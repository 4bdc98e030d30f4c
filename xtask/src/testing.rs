//! `test`, `e2e` and `bench`: native checks, then the browser suites in real Chromium and
//! Firefox ESR against pages on 127.0.0.1, with all other traffic sent to a logging proxy.

use crate::serve::{start_proxy, start_static, Log, Mounts};
use crate::setup::tool_path;
use crate::{cargo, dist_dir, flag_value, root, run};
use std::process::Command;

pub const BROWSERS: [&str; 2] = ["chromium", "firefox"];

pub fn test_all(args: &[String]) -> Result<(), String> {
    crate::setup::setup(crate::setup::Need::All)?;
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
    run(cargo().current_dir(&r).args([
        "clippy",
        "-p",
        "foxden",
        "--target",
        "wasm32-unknown-unknown",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(cargo().current_dir(&r).args(["test", "--workspace"]))?;
    crate::fuzz::fuzz(&["--seconds".into(), "15".into()])?;
    // The Rust glue's wasm-bindgen tests, in both real browsers (element/webdriver.json sets
    // the Debian binaries and the flags headless Chromium needs as root).
    for browser in ["--chrome", "--firefox"] {
        run(Command::new("wasm-pack")
            .env("PATH", tool_path())
            .current_dir(r.join("element"))
            .args(["test", "--headless", browser, "."]))?;
    }
    crate::build::build(false)?;
    // The demo extension: web-ext lint must report no errors (warnings: docs/extension.md).
    crate::ext::build_ext().and_then(|_| crate::ext::lint())?;
    e2e(args)?;
    Ok(())
}

fn e2e_mounts() -> Mounts {
    let r = root();
    vec![
        ("/e2e/".into(), r.join("e2e/pages")),
        ("/demo/".into(), r.join("demo")),
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

/// Starts the servers and runs `node <script>` once per browser with their addresses.
fn with_servers(args: &[String], script_args: &[&str], artifacts: &str) -> Result<(), String> {
    let r = root();
    let art = crate::scratch_dir("e2e-artifacts").join(artifacts);
    std::fs::create_dir_all(&art).map_err(|e| e.to_string())?;
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
    let browsers: Vec<String> = match flag_value(args, "--browser") {
        Some(b) => vec![b],
        None => BROWSERS.iter().map(|s| s.to_string()).collect(),
    };
    let mut failures = Vec::new();
    for b in &browsers {
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
            .args(script_args);
        if let Some(g) = flag_value(args, "--grep") {
            cmd.env("FOXDEN_GREP", g);
        }
        if let Err(e) = run(&mut cmd) {
            failures.push(format!("{b}: {e}"));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

pub fn e2e(args: &[String]) -> Result<(), String> {
    if !dist_dir().join("foxden.js").exists() {
        return Err("dist/ is missing: run `cargo xtask build` first".into());
    }
    // The extension tests load the unpacked extension made from this build.
    crate::ext::build_ext()?;
    // `--file F` runs one test file instead of the whole folder.
    let target = flag_value(args, "--file").unwrap_or_else(|| "e2e/tests/".into());
    with_servers(
        args,
        &[
            "--test",
            "--test-concurrency=1",
            "--test-reporter=spec",
            &target,
        ],
        "e2e",
    )
}

pub fn bench(args: &[String]) -> Result<(), String> {
    crate::setup::setup(crate::setup::Need::All)?;
    if !dist_dir().join("foxden.js").exists() {
        crate::build::build(false)?;
    }
    with_servers(args, &["e2e/bench.mjs"], "bench")?;
    native_sha256_baseline()
}

/// The native baseline for snapshot throughput: `sha256sum` over 100 MiB on this machine.
fn native_sha256_baseline() -> Result<(), String> {
    let path = crate::scratch_dir("bench").join("sha256-100MiB.bin");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let data: Vec<u8> = (0..100u32 << 20).map(|i| (i & 255) as u8).collect();
    std::fs::write(&path, &data).map_err(|e| e.to_string())?;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        crate::output(Command::new("sha256sum").arg(&path))?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_file(&path);
    println!(
        "native sha256sum of 100 MiB: {:.0} ms, {:.0} MiB/s (best of 3)",
        best * 1000.0,
        100.0 / best
    );
    Ok(())
}
