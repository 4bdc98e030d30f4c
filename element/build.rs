//! The Pyodide version is written once, in the workspace's package.json (the npm pin): this
//! passes it to the crate as `FOXDEN_PYODIDE_VERSION`.

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../package.json");
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("package.json next to the workspace");
    let version = text
        .lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("\"pyodide\": \"")
                .and_then(|v| v.split('"').next())
                .map(str::to_owned)
        })
        .expect("package.json pins pyodide exactly");
    println!("cargo:rustc-env=FOXDEN_PYODIDE_VERSION={version}");
    // The SHA-256 of its three runtime files (`sha256sum` lines: hash, two spaces, file name):
    // the host refuses assets that differ. `cargo xtask build` checks node_modules against it.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../pyodide.sha256");
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("pyodide.sha256 next to the workspace");
    for (file, var) in [
        ("pyodide.asm.wasm", "WASM"),
        ("python_stdlib.zip", "STDLIB"),
        ("pyodide-lock.json", "LOCK"),
    ] {
        let hash = text
            .lines()
            .find_map(|l| l.strip_suffix(file)?.strip_suffix("  "))
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .unwrap_or_else(|| panic!("pyodide.sha256 has no SHA-256 line for {file}"));
        println!("cargo:rustc-env=FOXDEN_PYODIDE_SHA256_{var}={hash}");
    }
}
