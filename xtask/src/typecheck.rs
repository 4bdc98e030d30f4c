//! Type-checks the den page's scripts (`den-page/den.js`, `den-page/worker.js`) against the
//! message types generated from foxden-core's protocol table (`den-page/protocol.d.ts`), with
//! the TypeScript compiler pinned in package.json; the editor module (`element/js/editor.js`);
//! and a user's strict program against the published types (`e2e/types/consumer.ts` against
//! `element/js/foxden.d.ts`, without skipLibCheck). Emits nothing.

use crate::setup::tool_path;
use crate::{root, run};
use std::process::Command;

/// Runs `node_modules/.bin/tsc -p den-page/tsconfig.json` from the repository root.
pub fn typecheck() -> Result<(), String> {
    let r = root();
    let tsc = r.join("node_modules/.bin/tsc");
    if !tsc.exists() {
        return Err(
            "node_modules/.bin/tsc is missing: run `npm ci` (or `cargo xtask setup`)".into(),
        );
    }
    run(Command::new(&tsc)
        .current_dir(&r)
        .env("PATH", tool_path())
        .args(["-p", "den-page/tsconfig.json"]))?;
    // The element's editor module (CodeMirror glue), then the published types as a user's
    // strict project sees them.
    for project in [
        "element/js/tsconfig.json",
        "e2e/types/tsconfig.json",
        "e2e/types/tsconfig.api.json",
    ] {
        run(Command::new(&tsc)
            .current_dir(&r)
            .env("PATH", tool_path())
            .args(["-p", project]))?;
    }
    Ok(())
}
