//! `cargo xtask fuzz [--seconds N]`: runs every cargo-fuzz target briefly (nightly toolchain).

use crate::{cargo, root, run};
use std::process::Command;

pub const TARGETS: [&str; 4] = ["paths", "shell", "snapshot", "sparse"];

fn has_nightly() -> bool {
    Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

pub fn fuzz(seconds: u32) -> Result<(), String> {
    if !has_nightly() {
        eprintln!(
            "xtask: fuzzing skipped: no nightly toolchain (rustup toolchain install nightly)"
        );
        return Ok(());
    }
    let have_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have_fuzz {
        run(cargo().args(["install", "cargo-fuzz"]))?;
    }
    let dir = root().join("fuzz");
    for t in TARGETS {
        if !dir.join("fuzz_targets").join(format!("{t}.rs")).exists() {
            continue;
        }
        run(Command::new("cargo")
            .current_dir(&dir)
            .env_remove("RUSTFLAGS")
            .args([
                "+nightly",
                "fuzz",
                "run",
                t,
                "--",
                &format!("-max_total_time={seconds}"),
            ]))?;
    }
    Ok(())
}
