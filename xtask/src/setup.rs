//! Installs what the build and the tests need, only when missing.

use crate::{cargo, output, root, run};
use std::path::PathBuf;
use std::process::Command;

/// The Rust side of the build tools: the wasm target, wasm-bindgen-cli of the pinned version and
/// wasm-pack, each only when missing. The two tools are compiled unoptimized (opt-level 0, no
/// LTO, parallel codegen), at the same time, in target folders of their own (`target/tools`,
/// `target/tools-pack`): on a fresh 2-core machine this is most of the demo's set-up time.
/// Measured there: wasm-bindgen-cli compiles in 92 s at opt-level 0 against 275 s at 1, and
/// then takes 1.3 s instead of 0.3 s on foxden's module, with the same output; wasm-pack only
/// starts cargo, wasm-bindgen and wasm-opt.
///
/// With `release_wasm`, when a tool has to be compiled, foxden's own wasm module is compiled
/// (release, as wasm-pack will ask) in the background meanwhile, into the workspace's target
/// folder, where wasm-pack's `cargo build` then finds it up to date: its long single-threaded
/// end (LTO, one codegen unit) overlaps the tools' compile instead of following it.
fn install_build_tools(step: &dyn Fn(&str), release_wasm: bool) -> Result<(), String> {
    let targets =
        output(Command::new("rustup").args(["target", "list", "--installed"])).unwrap_or_default();
    if !targets
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        step("rustup target add wasm32-unknown-unknown");
        run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?;
    }
    let tools_target = root().join("target/tools");
    let quick = |c: &mut Command, target: &std::path::Path| {
        c.arg("--target-dir")
            .arg(target)
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_RELEASE_LTO", "off")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "0");
    };
    // wasm-bindgen-cli must equal the crate version exactly.
    let want = pinned_wasm_bindgen()?;
    let have = has(
        cargo_bin("wasm-bindgen").to_str().unwrap_or("wasm-bindgen"),
        "--version",
    )
    .unwrap_or_default();
    let need_bindgen = !have.ends_with(&want);
    let need_pack = has(
        cargo_bin("wasm-pack").to_str().unwrap_or("wasm-pack"),
        "--version",
    )
    .is_none();
    let mut wasm = if release_wasm && (need_bindgen || need_pack) {
        // The command wasm-pack runs (`wasm-pack build --release` in element/).
        let mut c = cargo();
        c.current_dir(root().join("element")).args([
            "build",
            "--lib",
            "--release",
            "--target",
            "wasm32-unknown-unknown",
        ]);
        Some(Background::start(
            &mut c,
            "prebuild",
            step,
            "foxden's wasm module",
        )?)
    } else {
        None
    };
    // wasm-pack compiles beside wasm-bindgen-cli: a cargo install on a fresh machine leaves a
    // core idle much of the time (downloads, a long crate compiling alone). Its target folder is
    // its own, or it would wait for the other's lock; the few crates both use compile twice.
    let mut pack = if need_pack {
        let mut c = cargo();
        c.args(["install", "wasm-pack"]);
        quick(&mut c, &root().join("target/tools-pack"));
        Some(Background::start(
            &mut c,
            "install-wasm-pack",
            step,
            "wasm-pack (about 1.5 min)",
        )?)
    } else {
        None
    };
    if need_bindgen {
        step(&format!(
            "compiling wasm-bindgen-cli {want} (found {have:?}; about 2 min)"
        ));
        // Without --locked: the registry here may lack the newest patch of a dependency.
        let mut c = cargo();
        c.args(["install", "wasm-bindgen-cli", "--version", &want, "--force"]);
        quick(&mut c, &tools_target);
        run(&mut c)?;
    }
    if let Some(p) = pack.take() {
        p.finish()?;
        step("wasm-pack compiled");
    }
    step("build tools ready");
    if let Some(w) = wasm.take() {
        match w.finish() {
            Ok(()) => step("foxden's wasm module compiled"),
            // Only the overlap is lost: wasm-pack compiles it again and shows the error.
            Err(e) => step(&format!("{e}: wasm-pack compiles it again")),
        }
    }
    Ok(())
}

/// A command running in the background while the set-up goes on, its output in
/// `target/<name>.log`. Dropped before `finish` (a step failed), it is killed.
struct Background {
    child: std::process::Child,
    log: PathBuf,
    what: String,
}

impl Background {
    fn start(
        cmd: &mut Command,
        name: &str,
        step: &dyn Fn(&str),
        what: &str,
    ) -> Result<Background, String> {
        let target = root().join("target");
        crate::fsx::create_dir(&target)?;
        let log = target.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        step(&format!(
            "compiling {what} in the background (log: target/{name}.log)"
        ));
        let child = cmd
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{}: {e}", crate::describe(cmd)))?;
        Ok(Background {
            child,
            log,
            what: what.to_owned(),
        })
    }

    /// Waits for it; an error names what failed and its log.
    fn finish(mut self) -> Result<(), String> {
        match self.child.wait() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!(
                "compiling {} failed ({s}); see {}",
                self.what,
                self.log.display()
            )),
            Err(e) => Err(format!("{}: {e}", self.log.display())),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The wasm-bindgen crate version pinned in the workspace (`=0.2.N`).
pub fn pinned_wasm_bindgen() -> Result<String, String> {
    let toml = crate::fsx::read(&root().join("Cargo.toml"))?;
    toml.lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("wasm-bindgen = \"=")
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned)
        })
        .ok_or_else(|| "Cargo.toml must pin wasm-bindgen = \"=X.Y.Z\"".into())
}

/// The Pyodide version, written once: package.json's exact npm pin.
pub fn pyodide_version() -> Result<String, String> {
    let text = crate::fsx::read(&root().join("package.json"))?;
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("\"pyodide\": \"")
                .and_then(|v| v.split('"').next())
                .map(str::to_owned)
        })
        .ok_or_else(|| "package.json must pin pyodide exactly (\"pyodide\": \"X.Y.Z\")".into())
}

fn cargo_bin(name: &str) -> PathBuf {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo")
        });
    home.join("bin").join(name)
}

fn has(cmd: &str, arg: &str) -> Option<String> {
    Command::new(cmd)
        .arg(arg)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

/// PATH with the npm binaries (wasm-opt from binaryen, esbuild) and cargo's bin first.
pub fn tool_path() -> String {
    let mut parts = vec![
        root().join("node_modules/.bin").display().to_string(),
        cargo_bin("").display().to_string(),
    ];
    if let Ok(p) = std::env::var("PATH") {
        parts.push(p);
    }
    parts.join(":")
}

/// What to install: the build's tools (the demo needs only these), the browsers and their
/// drivers (the tests), or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// wasm target, wasm-bindgen-cli, wasm-pack, npm packages: enough to build and serve.
    Build,
    /// Debian's Chromium and Firefox ESR only.
    Browsers,
    /// Everything the tests need.
    All,
}

pub fn setup(need: Need) -> Result<(), String> {
    setup_then(need, false)
}

/// `setup`; with `release_wasm`, the caller builds dist/ in release next, and foxden's wasm
/// module compiles while the tools do (when there are tools to compile).
pub fn setup_then(need: Need, release_wasm: bool) -> Result<(), String> {
    let r = root();
    if need != Need::Browsers {
        eprintln!("xtask: checking the build tools (wasm target, wasm-bindgen-cli, wasm-pack, npm packages)");
        let clock = std::time::Instant::now();
        let step =
            |what: &str| eprintln!("xtask: [{:>4.0} s] {what}", clock.elapsed().as_secs_f64());
        // npm packages (pyodide pinned exactly, esbuild, binaryen's wasm-opt, puppeteer-core):
        // downloaded in the background while cargo compiles the tools below.
        let stamp = r.join("node_modules/.package-lock.json");
        let lock = r.join("package-lock.json");
        let fresh = match (std::fs::metadata(&stamp), std::fs::metadata(&lock)) {
            (Ok(s), Ok(l)) => s.modified().ok() >= l.modified().ok(),
            _ => false,
        };
        let mut npm = if fresh {
            None
        } else {
            step("npm ci (in the background)");
            let mut c = Command::new("npm");
            c.current_dir(&r).args(["ci", "--no-audit", "--no-fund"]);
            Some(
                c.spawn()
                    .map_err(|e| format!("npm ci: {e} (is Node.js 20+ installed?)"))?,
            )
        };
        let tools = install_build_tools(&step, release_wasm);
        if let Some(child) = npm.as_mut() {
            let status = child.wait().map_err(|e| format!("npm ci: {e}"))?;
            if !status.success() {
                return Err(format!("npm ci failed ({status})"));
            }
            step("npm packages installed");
        }
        tools?;
    }
    if need == Need::Build {
        return Ok(());
    }
    eprintln!("xtask: checking the browsers and drivers (Debian's chromium, chromium-driver, firefox-esr; geckodriver)");
    // Browsers and drivers come from Debian; nothing downloads a browser at run time.
    let need_apt = ["chromium", "chromedriver", "firefox-esr"]
        .iter()
        .any(|b| has(b, "--version").is_none());
    if need_apt {
        let is_root = output(Command::new("id").arg("-u"))
            .map(|s| s.trim() == "0")
            .unwrap_or(false);
        if !is_root {
            return Err("install the browsers: sudo apt-get install -y chromium chromium-driver firefox-esr".into());
        }
        run(Command::new("apt-get").args(["update", "-qq"]))?;
        run(Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args([
                "install",
                "-y",
                "-qq",
                "chromium",
                "chromium-driver",
                "firefox-esr",
            ]))?;
    }
    if need == Need::All
        && has(
            cargo_bin("geckodriver").to_str().unwrap_or("geckodriver"),
            "--version",
        )
        .is_none()
    {
        run(cargo().args(["install", "geckodriver"]))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pyodide_version_is_read_from_package_json() {
        let v = super::pyodide_version().unwrap();
        assert_eq!(v.split('.').count(), 3, "{v}");
        assert!(v.split('.').all(|p| p.parse::<u32>().is_ok()), "{v}");
    }
}
