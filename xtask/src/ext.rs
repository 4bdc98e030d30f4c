//! `cargo xtask ext [--lint]`: the demo extension, unpacked, for Firefox and for Chromium.
//!
//! Reads the built library (`dist/`, or `$FOXDEN_DIST`) and `extension/`, and writes
//! `dist-ext/firefox` and `dist-ext/chromium` (or `<FOXDEN_DIST>-ext/…`). The two differ only in
//! `manifest.json`: Firefox runs the background script as an event page and needs a gecko id;
//! Chromium runs it as a service worker.
//!
//! Extension pages may not run inline scripts, so the extension gets `den/den-ext.html`, whose
//! script is the packaged file `den/den.js`: the very script `den.html` inlines (worker source
//! embedded as a string), which the build writes next to `den.html` (`dist/den/`), so both
//! variants are the same code.

use crate::fsx::{copy, entries, read, remove_dir, write};
use crate::{dist_dir, root, run};
use std::path::PathBuf;
use std::process::Command;

/// The browsers an unpacked extension is written for.
pub const TARGETS: [&str; 2] = ["firefox", "chromium"];

/// Library files the extension needs (the rest of dist/ is types and package metadata): the
/// Space tab uses only the API, so it ships foxden/api (api.js), the module without the element.
const LIB_FILES: [&str; 4] = ["api.js", "load.js", "foxden_api.js", "foxden_api_bg.wasm"];

/// Where the unpacked extensions go: `dist-ext/`, or `<FOXDEN_DIST>-ext/` next to a custom dist.
pub fn ext_dir() -> PathBuf {
    let dist = dist_dir();
    if dist == root().join("dist") {
        return root().join("dist-ext");
    }
    let name = dist
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dist".into());
    dist.with_file_name(format!("{name}-ext"))
}

pub fn ext(and_lint: bool) -> Result<(), String> {
    build_ext()?;
    if and_lint {
        lint()?;
    }
    Ok(())
}

/// Writes both unpacked extensions from the current build.
pub fn build_ext() -> Result<(), String> {
    let r = root();
    let dist = dist_dir();
    let den_js_path = dist.join("den/den.js");
    if !dist.join("api.js").exists() || !den_js_path.exists() {
        return Err(format!(
            "{} has no build: run `cargo xtask build` first",
            dist.display()
        ));
    }
    let out = ext_dir();
    for target in TARGETS {
        let dir = out.join(target);
        remove_dir(&dir)?;
        // The extension's own files; manifest.<target>.json becomes manifest.json.
        for entry in entries(&r.join("extension"))? {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("manifest.") || name == "README.md" {
                continue;
            }
            copy(&entry.path(), &dir.join(&name))?;
        }
        let manifest = read(&r.join(format!("extension/manifest.{target}.json")))?;
        check_manifest(&manifest, target)?;
        write(&dir.join("manifest.json"), &manifest)?;
        // The library, as a user copies it from the package.
        let lib = dir.join("foxden");
        for f in LIB_FILES {
            copy(&dist.join(f), &lib.join(f))?;
        }
        if dist.join("snippets").exists() {
            copy(&dist.join("snippets"), &lib.join("snippets"))?;
        }
        // The extension's den page and its script, as the build wrote them (not den.html).
        for f in ["den/den-ext.html", "den/den.js"] {
            copy(&dist.join(f), &lib.join(f))?;
        }
        for f in crate::build::PYODIDE_FILES {
            copy(&dist.join("pyodide").join(f), &lib.join("pyodide").join(f))?;
        }
        write(
            &lib.join("pyodide/NOTICE.txt"),
            format!(
                "These three files are Pyodide {} (https://github.com/pyodide/pyodide), unmodified,\n\
                 under the Mozilla Public License 2.0 (https://www.mozilla.org/MPL/2.0/).\n",
                crate::setup::pyodide_version()?
            ),
        )?;
        eprintln!("xtask: wrote {}", dir.display());
    }
    Ok(())
}

/// `web-ext lint` on the Firefox build (errors fail; warnings are listed in docs/extension.md).
pub fn lint() -> Result<(), String> {
    let r = root();
    let bin = r.join("node_modules/.bin/web-ext");
    if !bin.exists() {
        return Err("node_modules/.bin/web-ext is missing: run `npm ci`".into());
    }
    run(Command::new(bin).current_dir(&r).args([
        "lint",
        "--source-dir",
        &ext_dir().join("firefox").to_string_lossy(),
        "--no-config-discovery",
    ]))
}

/// The sandbox policy is what keeps Python off the network in a manifest sandbox page.
fn check_manifest(manifest: &str, target: &str) -> Result<(), String> {
    let needed = [
        "\"sandbox\": { \"pages\": [\"foxden/den/den-ext.html\"] }",
        "connect-src 'none'",
        "worker-src blob:",
        "default-src 'none'",
        "'wasm-unsafe-eval'",
    ];
    for n in needed {
        if !manifest.contains(n) {
            return Err(format!("extension/manifest.{target}.json lacks {n}"));
        }
    }
    // The sandbox page may eval (JavaScript runs, see docs/architecture.md); extension pages
    // may not, and nothing may run inline script.
    let pages = manifest
        .split("\"extension_pages\":")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .unwrap_or("");
    if manifest.contains("unsafe-inline") || pages.contains("'unsafe-eval'") {
        return Err(format!(
            "extension/manifest.{target}.json allows inline script, or eval'd script in extension pages"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_keep_the_sandbox_policy() {
        for t in TARGETS {
            let m = read(&root().join(format!("extension/manifest.{t}.json")))
                .expect("manifest exists");
            check_manifest(&m, t).expect("policy");
            // Eval is for the sandbox page (JavaScript runs) only, never for extension pages.
            let pages_eval = m.replacen(
                "\"extension_pages\": \"script-src 'self'",
                "\"extension_pages\": \"script-src 'self' 'unsafe-eval'",
                1,
            );
            assert_ne!(pages_eval, m);
            assert!(check_manifest(&pages_eval, t).is_err());
            assert!(check_manifest(&m.replace("'unsafe-eval'", "'unsafe-inline'"), t).is_err());
        }
    }
}
