// Shared by foxden's two entry modules, foxden.js (the API and <foxden-den>) and api.js (the
// API alone, a smaller wasm module): loads one wasm-bindgen module and returns the API it built.

// The browser's fetch and Headers as they are now, before the module loads: a wrapper the page
// installs later (an auth interceptor adding its token or cookies) is never used for a den's
// requests.
const pristine = [globalThis.fetch, globalThis.Headers];

/**
 * Instantiates the module (`init` and the namespace `wasm` from its wasm-bindgen glue) from
 * `wasmUrl`, and returns the API. `base` is the entry's import.meta.url (the default den page
 * and Pyodide URLs are beside it); `editorUrl`, the controls editor's module, or undefined.
 */
export async function load(init, wasm, wasmUrl, base, editorUrl) {
  // In Node.js (the pure helpers: runShell, normalizePath, the snapshot codec, dens with a
  // runtime adapter) the module sits at a file: URL, which Node's fetch cannot read: the bytes
  // are read from disk instead. process.getBuiltinModule keeps bundlers from seeing "node:fs".
  const nodeFs = wasmUrl.protocol === "file:" && globalThis.process?.getBuiltinModule?.("fs");
  try {
    await init({ module_or_path: nodeFs ? nodeFs.readFileSync(wasmUrl) : wasmUrl });
  } catch (e) {
    // In a page, most often a bundler that left the wasm behind: esbuild and plain Rollup do
    // not copy the files a module names with new URL("…", import.meta.url) (Vite and webpack 5 do).
    const file = wasmUrl.pathname.split("/").pop();
    const hint =
      wasmUrl.protocol !== "file:"
        ? `If you bundle foxden with esbuild or Rollup, copy node_modules/foxden-sandbox/dist/${file} next to the bundle's output file.`
        : nodeFs
          ? "The file is missing or unreadable."
          : globalThis.process?.versions?.node
            ? "Reading it from a file: URL needs Node.js 20.16 or later (process.getBuiltinModule)."
            : "A page opened from a file: URL cannot load it: serve the page over http(s).";
    throw new Error(`foxden: its WebAssembly module did not load from ${wasmUrl} (${e?.message ?? e}). ${hint}`, { cause: e });
  }
  wasm.__keepFetch(...pristine);
  wasm.__setModuleBase(base, editorUrl);

  const Den = wasm.Den;
  // `using den = await openDen(…)` (and `await using`) closes the den. wasm-bindgen makes
  // Symbol.dispose and free() release the Rust object at once, which would leave its name taken
  // and its runtime running; both close the den instead.
  // (Disposing twice is harmless: close() of a closed den resolves.)
  const closeQuietly = function () { this.close().catch(() => {}); };
  for (const [key, dispose] of [
    ["free", closeQuietly],
    [Symbol.dispose, closeQuietly],
    [Symbol.asyncDispose, function () { return this.close(); }],
  ]) {
    if (key) Object.defineProperty(Den.prototype, key, { value: dispose, writable: true, configurable: true });
  }
  return {
    openDen: wasm.openDen,
    iframeRuntime: wasm.iframeRuntime,
    memoryStore: wasm.memoryStore,
    idbStore: wasm.idbStore,
    normalizePath: wasm.normalizePath,
    runShell: wasm.runShell,
    encodeSnapshot: wasm.encodeSnapshot,
    decodeSnapshot: wasm.decodeSnapshot,
    clearWarmCache: wasm.clearWarmCache,
    Den,
    ...wasm.__errorClasses(),
    /** Live Rust-owned listeners and den connections in this page (for leak checks). */
    liveCounts: () => wasm.__liveCounts(),
  };
}
