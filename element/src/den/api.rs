//! The JavaScript-facing methods of `Den`: each forwards to the logic in `den`.

use super::*;
use crate::js::string_arg;
use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
impl Den {
    /// The den's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.inner.opts.name.clone()
    }

    /// `{ kind, isolation, loadMs, interruptible, warmStart, stages }` of the current runtime.
    #[wasm_bindgen(getter)]
    pub fn info(&self) -> JsValue {
        self.inner.info.borrow().clone()
    }

    /// True once `close()` was called.
    #[wasm_bindgen(getter)]
    pub fn closed(&self) -> bool {
        self.inner.closed.get()
    }

    /// Runs Python (or JavaScript, `lang`). Resolves `{ stdout, stderr, result, error, truncated,
    /// files, durationMs, restarted, displays, requests }`.
    pub fn run(&self, code: JsValue, opts: JsValue) -> Promise {
        let code = string_arg(&code, "code");
        let d = self.share();
        crate::js::promise(async move { d.run_impl(code?, opts).await })
    }

    /// Runs the read-only shell over the den's files: `{ stdout, stderr, code, truncated }`.
    pub fn sh(&self, command: JsValue) -> Promise {
        let r = string_arg(&command, "command").and_then(|c| self.sh_impl(c));
        crate::js::settled(r)
    }

    /// Writes a file (string, Uint8Array or ArrayBuffer).
    #[wasm_bindgen(js_name = writeFile)]
    pub fn write_file(&self, path: JsValue, data: JsValue) -> Promise {
        let d = self.share();
        // Checked and copied now, committed in turn.
        let prepared = crate::js::path_arg(&path, "path").and_then(|p| d.prepare_write(&p, &data));
        crate::js::promise(async move {
            let (path, bytes) = prepared?;
            d.commit_write(path, bytes).await
        })
    }

    /// Reads a file: bytes, or text with `{ encoding: "utf-8" }` (or the string "utf-8").
    #[wasm_bindgen(js_name = readFile)]
    pub fn read_file(&self, path: JsValue, opts: JsValue) -> Promise {
        let r = crate::js::path_arg(&path, "path").and_then(|p| self.read_impl(p, opts));
        crate::js::settled(r)
    }

    /// Reads a file as UTF-8 text.
    #[wasm_bindgen(js_name = readText)]
    pub fn read_text(&self, path: JsValue) -> Promise {
        self.read_file(path, "utf-8".into())
    }

    /// Deletes a file.
    #[wasm_bindgen(js_name = deleteFile)]
    pub fn delete_file(&self, path: JsValue) -> Promise {
        let path = crate::js::path_arg(&path, "path");
        let d = self.share();
        crate::js::promise(async move { d.delete_impl(path?).await })
    }

    /// Lists files: `[{ path, size, sha256, mtime }]`, sorted by path.
    pub fn list(&self, path: JsValue) -> Promise {
        let r = self.list_impl(&path);
        crate::js::settled(r)
    }

    /// Packs every file into snapshot bytes (a tar archive with a manifest of SHA-256s).
    pub fn snapshot(&self) -> Promise {
        let r = self.snapshot_impl();
        crate::js::settled(r)
    }

    /// Replaces all files with a snapshot's, after checking all of it.
    pub fn restore(&self, bytes: JsValue) -> Promise {
        let d = self.share();
        // Checked and copied now, committed in turn.
        let decoded = d.decode_restore(&bytes);
        crate::js::promise(async move { d.commit_restore(decoded?).await })
    }

    /// Opens a new den with a copy of the files.
    pub fn fork(&self, opts: JsValue) -> Promise {
        let d = self.share();
        crate::js::promise(async move { d.fork_impl(opts).await.map(JsValue::from) })
    }

    /// New interpreter (Python variables gone), files kept. Resolves `{ from, bootMs, packagesMs? }`:
    /// whether it resumed from the memory snapshot of a fresh interpreter, booted from scratch or
    /// was an adapter's reset, how long it took, and how much of it installing the packages took.
    pub fn reset(&self) -> Promise {
        let d = self.share();
        crate::js::promise(async move { d.reset_impl().await })
    }

    /// Stops the run in flight, as the element's Stop button does (and a run's `signal`).
    /// Resolves true if a run was in flight, false otherwise; the run itself resolves with how
    /// it ended.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn stop(&self) -> Promise {
        crate::js::settled(Ok(self.stop_impl().into()))
    }

    /// Removes the iframe and frees the name (once an IndexedDB write in flight ended).
    pub fn close(&self) -> Promise {
        self.close_impl()
    }
}
