//! The test wheels of the packages suite (`e2e/tests/packages.test.mjs`) and the benchmark:
//! downloaded from PyPI (files.pythonhosted.org) into `target/test-wheels/`, never committed,
//! each checked against the SHA-256 pinned here; idempotent (a file with the right hash is
//! kept). PyYAML publishes no pure wheel, so its pinned sdist is turned into a
//! `py3-none-any` wheel of its pure-Python fallback (`xtask/py/pure_wheel.py`, deterministic).
//! `manifest.json` lists every wheel with its SHA-256 for the tests; the e2e server serves the
//! folder at `/wheels/`.

use crate::{fsx, root, run};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::process::Command;

/// One pinned file on PyPI.
struct Pinned {
    file: &'static str,
    url: &'static str,
    sha256: &'static str,
}

const PYPI: &str = "https://files.pythonhosted.org/packages/";

/// The wheels (and PyYAML's sdist), exact versions, pinned.
const PINNED: &[Pinned] = &[
    Pinned {
        file: "tabulate-0.9.0-py3-none-any.whl",
        url: "40/44/4a5f08c96eb108af5cb50b41f76142f0afa346dfa99d5296fe7202a11854/tabulate-0.9.0-py3-none-any.whl",
        sha256: "024ca478df22e9340661486f85298cff5f6dcdba14f3813e8830015b9ed1948f",
    },
    Pinned {
        file: "sympy-1.14.0-py3-none-any.whl",
        url: "a2/09/77d55d46fd61b4a135c444fc97158ef34a095e5681d0a6c10b75bf356191/sympy-1.14.0-py3-none-any.whl",
        sha256: "e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5",
    },
    Pinned {
        file: "mpmath-1.3.0-py3-none-any.whl",
        url: "43/e3/7d92a15f894aa0c9c4b49b8ee9ac9850d6e63b03c9c32c0367a13ae62209/mpmath-1.3.0-py3-none-any.whl",
        sha256: "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c",
    },
    Pinned {
        file: "python_dateutil-2.9.0.post0-py2.py3-none-any.whl",
        url: "ec/57/56b9bcc3c9c6a792fcbaf139543cee77261f3651ca9da0c93f5c1221264b/python_dateutil-2.9.0.post0-py2.py3-none-any.whl",
        sha256: "a8b2bc7bffae282281c8140a97d3aa9c14da0b136dfe83f850eea9a5f7470427",
    },
    Pinned {
        file: "six-1.17.0-py2.py3-none-any.whl",
        url: "b7/ce/149a00dd41f10bc29e5921b496af8b574d8413afcd5e30dfa0ed46c2cc5e/six-1.17.0-py2.py3-none-any.whl",
        sha256: "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274",
    },
    Pinned {
        file: "beautifulsoup4-4.12.3-py3-none-any.whl",
        url: "b1/fe/e8c672695b37eecc5cbf43e1d0638d88d66ba3a44c4d321c796f4e59167f/beautifulsoup4-4.12.3-py3-none-any.whl",
        sha256: "b80878c9f40111313e55da8ba20bdba06d8fa3969fc68304167741bbf9e082ed",
    },
    Pinned {
        file: "soupsieve-2.6-py3-none-any.whl",
        url: "d1/c2/fe97d779f3ef3b15f05c94a2f1e3d21732574ed441687474db9d342a7315/soupsieve-2.6-py3-none-any.whl",
        sha256: "e72c4ff06e4fb6e4b5a9f0f55fe6e81514581fca1515028625d0f299c602ccc9",
    },
];

/// PyYAML 6.0.2's sdist, made into a pure wheel.
const PYYAML_SDIST: Pinned = Pinned {
    file: "pyyaml-6.0.2.tar.gz",
    url: "54/ed/79a089b6be93607fa5cdaedf301d7dfb23af5f25c398d5ead2525b063e17/pyyaml-6.0.2.tar.gz",
    sha256: "d584d9ec91ad65861cc08d42e834324ef890a082e591037abe114850ff7bbc3e",
};
const PYYAML_WHEEL: &str = "PyYAML-6.0.2-py3-none-any.whl";

/// Where the test wheels live (shared by every dist folder: they do not depend on the build).
pub fn wheels_dir() -> PathBuf {
    root().join("target").join("test-wheels")
}

fn sha256_file(path: &std::path::Path) -> Option<String> {
    let data = std::fs::read(path).ok()?;
    Some(hex(&Sha256::digest(&data)))
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Downloads `p` into the folder unless a file with its hash is there; checks the hash.
fn fetch(p: &Pinned) -> Result<(), String> {
    let dir = wheels_dir();
    let dest = dir.join(p.file);
    if sha256_file(&dest).as_deref() == Some(p.sha256) {
        return Ok(());
    }
    let part = dir.join(format!("{}.part", p.file));
    run(Command::new("curl")
        .args(["-fsSL", "--retry", "3", "--max-time", "300", "-o"])
        .arg(&part)
        .arg(format!("{PYPI}{}", p.url)))?;
    let got = sha256_file(&part).unwrap_or_default();
    if got != p.sha256 {
        let _ = std::fs::remove_file(&part);
        return Err(format!(
            "{}: downloaded SHA-256 {got}, pinned {}: refusing it",
            p.file, p.sha256
        ));
    }
    std::fs::rename(&part, &dest).map_err(|e| format!("{}: {e}", dest.display()))
}

/// Makes sure every test wheel is in [`wheels_dir`] and writes its `manifest.json`
/// (`[{ "file", "sha256", "name" }]`).
pub fn ensure() -> Result<PathBuf, String> {
    let dir = wheels_dir();
    fsx::create_dir(&dir)?;
    for p in PINNED {
        fetch(p)?;
    }
    fetch(&PYYAML_SDIST)?;
    if !dir.join(PYYAML_WHEEL).exists() {
        run(Command::new("python3")
            .arg(root().join("xtask/py/pure_wheel.py"))
            .arg(dir.join(PYYAML_SDIST.file))
            .arg(&dir))?;
    }
    let mut entries = Vec::new();
    for file in PINNED.iter().map(|p| p.file).chain([PYYAML_WHEEL]) {
        let sha = sha256_file(&dir.join(file)).ok_or_else(|| format!("{file} is missing"))?;
        let size = std::fs::metadata(dir.join(file)).map_or(0, |m| m.len());
        entries.push(format!(
            "  {{ \"file\": \"{file}\", \"sha256\": \"{sha}\", \"size\": {size} }}"
        ));
    }
    fsx::write(
        &dir.join("manifest.json"),
        format!("[\n{}\n]\n", entries.join(",\n")),
    )?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_well_formed() {
        for p in PINNED.iter().chain([&PYYAML_SDIST]) {
            assert_eq!(p.sha256.len(), 64, "{}", p.file);
            assert!(p
                .sha256
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert!(p.url.ends_with(&format!("/{}", p.file)), "{}", p.file);
        }
    }
}
