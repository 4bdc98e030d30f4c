//! Builds `dist/`: the wasm module and its wrapper, the self-contained den page, the Pyodide
//! files, types and package.json.

use crate::fsx::{copy, read, write};
use crate::setup::{pinned_wasm_bindgen, tool_path};
use crate::{dist_dir, fsx, output, root, run, scratch_dir};
use sha2::{Digest, Sha256};
use std::process::Command;

pub const PYODIDE_FILES: [&str; 3] = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];

/// Escapes a script so it can sit inside an inline `<script>` element: `</` becomes `<\/` and
/// `<!--` becomes `<\!--`. Both sequences can only occur inside strings, regexes or comments in
/// valid JavaScript, where the escaped form means the same. (The embedded worker source is a
/// string literal whose every `<` is already `\x3c`, see `js_string_literal`.)
pub fn escape_inline_script(src: &str) -> String {
    src.replace("</", "<\\/").replace("<!--", "<\\!--")
}

pub fn build(dev: bool) -> Result<(), String> {
    let r = root();
    let dist = dist_dir();
    let want = pinned_wasm_bindgen()?;
    let path = tool_path();
    let have = output(
        Command::new("wasm-bindgen")
            .env("PATH", &path)
            .arg("--version"),
    )?;
    if !have.trim().ends_with(&want) {
        return Err(format!(
            "wasm-bindgen-cli is {:?} but the crate is pinned to {want}; run `cargo xtask setup`",
            have.trim()
        ));
    }
    // 1. The wasm modules (wasm-pack: cargo + wasm-bindgen --target web + wasm-opt from
    // binaryen): foxden_wasm (the element and the API, for foxden.js) and foxden_api (the crate
    // without its `element` feature, for api.js).
    // Both are built before dist/ is emptied: a failed build leaves the previous one in place.
    let modules = [
        ("foxden_wasm", None),
        ("foxden_api", Some("--no-default-features")),
    ];
    let mut pkgs = Vec::new();
    for (name, features) in modules {
        pkgs.push(wasm_pack(&r, &path, name, features, dev)?);
    }
    fsx::remove_dir(&dist)?;
    fsx::create_dir(&dist)?;
    for ((name, features), pkg) in modules.into_iter().zip(&pkgs) {
        emit_module(&r, &dist, &path, pkg, name, features.is_none(), dev)?;
    }
    // The entry modules and their shared loader; minified in a release build (each is fetched
    // before the wasm: 1.3 KB less gzip). esbuild keeps the new URL("…", import.meta.url)
    // patterns bundlers look for.
    for f in ["foxden.js", "api.js", "load.js"] {
        if dev {
            copy(&r.join("element/js").join(f), &dist.join(f))?;
            continue;
        }
        let mut esb = Command::new("esbuild");
        esb.env("PATH", &path).current_dir(&r).args([
            "--minify",
            "--format=esm",
            "--target=es2022",
            "--log-level=error",
        ]);
        esb.arg(r.join("element/js").join(f));
        esb.arg(format!("--outfile={}", dist.join(f).display()));
        run(&mut esb)?;
    }
    for f in ["foxden.d.ts", "api.d.ts", "types.d.ts"] {
        copy(&r.join("element/js").join(f), &dist.join(f))?;
    }

    // 2. The worker bundle: worker.js + Pyodide's loader, one classic-worker IIFE.
    let worker_bundle = scratch_dir("den").join("worker.bundle.js");
    let mut esb = Command::new("esbuild");
    esb.env("PATH", &path).current_dir(&r).args([
        "den-page/worker.js",
        "--bundle",
        "--format=iife",
        "--platform=browser",
        "--target=es2022",
        "--log-level=error",
        // Node-only branches of Pyodide's loader; never taken in a browser worker.
        "--external:node:*",
        "--external:ws",
        // den-page/wheels.py, the wheel installer, is imported by worker.js as text.
        "--loader:.py=text",
        // pyodide.asm.mjs reads import.meta.url only to locate files we hand over ourselves.
        "--define:import.meta.url=\"https://pyodide.invalid/pyodide.asm.mjs\"",
    ]);
    // The Pyodide version is written once (package.json) and injected here.
    esb.arg(format!(
        "--define:__FOXDEN_PYODIDE_VERSION__=\"{}\"",
        crate::setup::pyodide_version()?
    ));
    if !dev {
        esb.arg("--minify");
    }
    esb.arg(format!("--outfile={}", worker_bundle.display()));
    run(&mut esb)?;
    let worker_src = read(&worker_bundle)?;

    // 2b. The editor (CodeMirror 6 for Python), its own ES module: `<foxden-den controls>`
    // imports it only when it shows an editor, so foxden.js and the wasm do not carry it.
    let mut esb = Command::new("esbuild");
    esb.env("PATH", &path).current_dir(&r).args([
        "element/js/editor.js",
        "--bundle",
        "--format=esm",
        "--platform=browser",
        "--target=es2022",
        "--log-level=error",
    ]);
    if !dev {
        esb.arg("--minify");
    }
    esb.arg(format!("--outfile={}", dist.join("editor.js").display()));
    run(&mut esb)?;

    // 3. The den page: den.js with the worker embedded as a string, inlined by hash.
    let den_js = read(&r.join("den-page/den.js"))?;
    let worker_literal = js_string_literal(&worker_src);
    let den_js = den_js.replacen("__FOXDEN_WORKER_SOURCE__", &worker_literal, 1);
    let den_js = escape_inline_script(&den_js);
    let hash = base64(&Sha256::digest(den_js.as_bytes()));
    let html = read(&r.join("den-page/den.html"))?
        .replacen("__FOXDEN_SCRIPT_HASH__", &format!("'sha256-{hash}'"), 1)
        .replacen("__FOXDEN_DEN_SCRIPT__", &den_js, 1);
    write(&dist.join("den/den.html"), html)?;
    // The extension variant: the same script as a packaged file (extension pages may not run
    // inline script), loaded by den-ext.html (docs/extension.md). A website must use den.html;
    // den-ext.html served by a website refuses to start.
    write(&dist.join("den/den.js"), &den_js)?;
    copy(
        &r.join("den-page/den-ext.html"),
        &dist.join("den/den-ext.html"),
    )?;

    // 4. Pyodide's three runtime files, of exactly the pinned version.
    let pyo = r.join("node_modules/pyodide");
    let pkg_json = read(&pyo.join("package.json"))?;
    let pyodide = crate::setup::pyodide_version()?;
    if !pkg_json.contains(&format!("\"version\": \"{pyodide}\"")) {
        return Err(format!(
            "node_modules/pyodide is not {pyodide}; run `npm ci`"
        ));
    }
    // Exactly the files whose SHA-256 the host checks (pyodide.sha256, built into the wasm).
    let pins = read(&r.join("pyodide.sha256"))?;
    for f in PYODIDE_FILES {
        let bytes =
            std::fs::read(pyo.join(f)).map_err(|e| format!("node_modules/pyodide/{f}: {e}"))?;
        let hash = crate::wheels::hex(&Sha256::digest(&bytes));
        if !pins.lines().any(|l| l == format!("{hash}  {f}")) {
            return Err(format!(
                "node_modules/pyodide/{f} (SHA-256 {hash}) is not the file pyodide.sha256 pins: run `npm ci`"
            ));
        }
        copy(&pyo.join(f), &dist.join("pyodide").join(f))?;
    }

    // 5. package.json so dist/ is an npm-style package.
    let version = env!("CARGO_PKG_VERSION");
    write(
        &dist.join("package.json"),
        format!(
            r#"{{
  "name": "foxden-sandbox",
  "version": "{version}",
  "description": "A browser Python sandbox (Pyodide in an isolated iframe and worker, no network) as the <foxden-den> element and ES-module functions.",
  "license": "MIT",
  "type": "module",
  "main": "./foxden.js",
  "module": "./foxden.js",
  "types": "./foxden.d.ts",
  "exports": {{
    ".": {{ "types": "./foxden.d.ts", "import": "./foxden.js" }},
    "./api": {{ "types": "./api.d.ts", "import": "./api.js" }},
    "./den/*": "./den/*",
    "./pyodide/*": "./pyodide/*",
    "./package.json": "./package.json"
  }},
  "files": ["foxden.js", "api.js", "load.js", "editor.js", "foxden.d.ts", "api.d.ts", "types.d.ts", "foxden_wasm.js", "foxden_wasm.d.ts", "foxden_wasm_bg.wasm", "foxden_api.js", "foxden_api.d.ts", "foxden_api_bg.wasm", "snippets/", "den/", "pyodide/"],
  "dependencies": {{ "pyodide": "{pyodide}" }},
  "engines": {{ "node": ">=20" }},
  "sideEffects": true
}}
"#
        ),
    )?;
    eprintln!("xtask: built {}", dist.display());
    Ok(())
}

/// Builds one wasm module with wasm-pack (`cargo_args`: the crate's features) into a scratch
/// folder, which it returns.
fn wasm_pack(
    r: &std::path::Path,
    path: &str,
    name: &str,
    cargo_args: Option<&str>,
    dev: bool,
) -> Result<std::path::PathBuf, String> {
    let pkg = scratch_dir(&format!("wasm-pkg-{name}"));
    let mut wp = Command::new("wasm-pack");
    wp.env("PATH", path).current_dir(r.join("element")).args([
        "build",
        "--target",
        "web",
        "--out-dir",
        pkg.to_str().unwrap_or("../target/wasm-pkg"),
        "--out-name",
        name,
        "--no-pack",
    ]);
    wp.arg(if dev { "--dev" } else { "--release" });
    if let Some(args) = cargo_args {
        wp.args(["--", args]);
    }
    run(&mut wp)?;
    Ok(pkg)
}

/// One wasm module into dist/: `name`_bg.wasm, its types, and its glue `name`.js (in a release
/// build, wasm-bindgen's glue and its snippets, such as the element class shim and the error
/// classes, as one minified ES module: 3.5 KB less gzip and one request fewer). `element`: the
/// module with the element, whose glue has the editor's dynamic import.
fn emit_module(
    r: &std::path::Path,
    dist: &std::path::Path,
    path: &str,
    pkg: &std::path::Path,
    name: &str,
    element: bool,
    dev: bool,
) -> Result<(), String> {
    for f in [
        format!("{name}_bg.wasm"),
        format!("{name}.d.ts"),
        format!("{name}_bg.wasm.d.ts"),
    ] {
        if pkg.join(&f).exists() {
            copy(&pkg.join(&f), &dist.join(&f))?;
        }
    }
    let glue = pkg.join(format!("{name}.js"));
    if dev {
        copy(&glue, &dist.join(format!("{name}.js")))?;
        if pkg.join("snippets").exists() {
            copy(&pkg.join("snippets"), &dist.join("snippets"))?;
        }
        return Ok(());
    }
    let mut esb = Command::new("esbuild");
    esb.env("PATH", path).current_dir(r).args([
        "--bundle",
        "--minify",
        "--format=esm",
        "--platform=browser",
        "--target=es2022",
        "--log-level=error",
    ]);
    esb.arg(&glue);
    esb.arg(format!(
        "--outfile={}",
        dist.join(format!("{name}.js")).display()
    ));
    run(&mut esb)?;
    if element {
        keep_dynamic_import(&dist.join(format!("{name}.js")))?;
    }
    Ok(())
}

/// A JSON string literal (valid JavaScript) for `s`.
fn js_string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8 + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\x3c"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// The glue's one dynamic `import()` (the editor module, at a URL made at run time) gets the
/// comments that tell webpack and Vite to leave it to the browser: webpack otherwise replaces it
/// with a module context of its own that cannot load the URL. element.js writes them (so a dev
/// build, unminified, has them too); where minifying dropped them they are put back here. A glue
/// with no such import, or more than one, fails the build.
fn keep_dynamic_import(glue: &std::path::Path) -> Result<(), String> {
    let text = mark_dynamic_import(&read(glue)?).map_err(|e| format!("{}: {e}", glue.display()))?;
    write(glue, text)
}

fn mark_dynamic_import(text: &str) -> Result<String, String> {
    let found = text.matches("import(").count();
    if found != 1 {
        return Err(format!(
            "expected one dynamic import() (the editor's), found {found}"
        ));
    }
    const MARKED: &str = "import(/* webpackIgnore: true */ /* @vite-ignore */ ";
    if text.contains(MARKED) {
        return Ok(text.to_string()); // the minifier kept element.js's own comments
    }
    Ok(text.replacen("import(", MARKED, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_known() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn literal_has_no_script_end() {
        let l = js_string_literal("a</script><!-- \"x\"\n");
        assert!(!l.contains("</"));
        assert!(!l.contains("<!--"));
    }

    #[test]
    fn the_one_dynamic_import_is_marked_for_bundlers() {
        let glue = "function T(o){return import(o)}var u=import.meta.url;";
        assert_eq!(
            mark_dynamic_import(glue).unwrap(),
            "function T(o){return import(/* webpackIgnore: true */ /* @vite-ignore */ o)}var u=import.meta.url;"
        );
        let marked = mark_dynamic_import(glue).unwrap();
        assert_eq!(mark_dynamic_import(&marked).unwrap(), marked);
        assert!(mark_dynamic_import("var u=import.meta.url;").is_err());
        assert!(mark_dynamic_import("import(a);import(b)").is_err());
    }
}
