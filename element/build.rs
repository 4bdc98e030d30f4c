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
}
