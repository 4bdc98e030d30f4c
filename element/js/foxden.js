// foxden: the ES module users import. It loads the WebAssembly module (top-level await, so no
// init() call is needed), re-exports the API built in Rust, and defines <foxden-den>.
// api.js is the same API without the element, from a smaller module.
import init, * as wasm from "./foxden_wasm.js";
import { load } from "./load.js";

// The wasm and the editor (CodeMirror, loaded only by <foxden-den controls>) are named with
// new URL("…", import.meta.url), the pattern webpack and Vite follow to emit them with a bundle.
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
  Den,
  FoxdenError,
  PathError,
  SnapshotError,
  DenError,
  DenLoadError,
  liveCounts,
} = await load(init, wasm, new URL("./foxden_wasm_bg.wasm", import.meta.url), import.meta.url, new URL("./editor.js", import.meta.url).href);

// <foxden-den>: the class shim (element.js, shipped with the wasm module) forwards to this Rust
// handle class. Defined once per page, however many times this module is imported.
// Not where there is no DOM (Node.js, a worker).
if (globalThis.customElements) wasm.__defineElement(wasm.FoxdenElementHandle);
