// foxden: the ES module users import. It loads the WebAssembly module (top-level await, so no
// init() call is needed), re-exports the API built in Rust, and defines <foxden-den>.
import init, * as wasm from "./foxden_wasm.js";

// The browser's fetch and Headers as they are now, before the module loads: a wrapper the page
// installs later (an auth interceptor adding its token or cookies) is never used for a den's
// requests.
const pristine = [globalThis.fetch, globalThis.Headers];
// In Node.js (the pure helpers: runShell, normalizePath, the snapshot codec, dens with a runtime
// adapter) the module sits at a file: URL, which Node's fetch cannot read: the bytes are read
// from disk instead. process.getBuiltinModule keeps bundlers from seeing a "node:fs" import.
const wasmUrl = new URL("./foxden_wasm_bg.wasm", import.meta.url);
const nodeFs = wasmUrl.protocol === "file:" && globalThis.process?.getBuiltinModule?.("fs");
try {
  await init({ module_or_path: nodeFs ? nodeFs.readFileSync(wasmUrl) : wasmUrl });
} catch (e) {
  // In a page, most often a bundler that left the wasm behind: esbuild and plain Rollup do not
  // copy the files a module names with new URL("…", import.meta.url) (Vite and webpack 5 do).
  const hint =
    wasmUrl.protocol !== "file:"
      ? "If you bundle foxden with esbuild or Rollup, copy node_modules/foxden-sandbox/dist/foxden_wasm_bg.wasm next to the bundle's output file."
      : nodeFs
        ? "The file is missing or unreadable."
        : globalThis.process?.versions?.node
          ? "Reading it from a file: URL needs Node.js 20.16 or later (process.getBuiltinModule)."
          : "A page opened from a file: URL cannot load it: serve the page over http(s).";
  throw new Error(`foxden: its WebAssembly module did not load from ${wasmUrl} (${e?.message ?? e}). ${hint}`, { cause: e });
}
wasm.__keepFetch(...pristine);
// The editor (CodeMirror, loaded only by <foxden-den controls>) is named with the same
// new URL("…", import.meta.url) pattern, so that webpack and Vite emit it with the bundle.
wasm.__setModuleBase(import.meta.url, new URL("./editor.js", import.meta.url).href);

export const {
  openDen,
  iframeRuntime,
  memoryStore,
  idbStore,
  normalizePath,
  runShell,
  encodeSnapshot,
  decodeSnapshot,
  clearWarmCache,
} = wasm;
export const { FoxdenError, PathError, SnapshotError, DenError, DenLoadError } = wasm.__errorClasses();
export const Den = wasm.Den;
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
/** Live Rust-owned listeners and den connections in this page (for leak checks). */
export const liveCounts = () => wasm.__liveCounts();

// <foxden-den>: the class shim (element.js, shipped with the wasm module) forwards to this Rust
// handle class. Defined once per page, however many times this module is imported.
// Not where there is no DOM (Node.js, a worker).
if (globalThis.customElements) wasm.__defineElement(wasm.FoxdenElementHandle);
