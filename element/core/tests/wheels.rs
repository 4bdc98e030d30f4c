//! The worker's wheel installer (`den-page/wheels.py`, Python that runs inside Pyodide) tested
//! natively with CPython: `den-page/wheels_test.py` builds real wheels in memory, installs them
//! into a temporary site-packages and imports them, and checks every refusal (corrupt zip,
//! RECORD mismatch, escaping paths, missing or wrong-version dependencies, ...) installs nothing.

use std::path::Path;
use std::process::Command;

#[test]
fn wheels_installer_passes_its_cpython_tests() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../den-page/wheels_test.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("-v")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 (3.11 or later) must be on PATH to test den-page/wheels.py");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "den-page/wheels_test.py failed:\n{log}"
    );
    // The suite really ran (unittest prints "Ran N tests").
    let ran: usize = log
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .expect("unittest's summary");
    assert!(ran >= 16, "only {ran} tests ran:\n{log}");
}
