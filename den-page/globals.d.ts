// Ambient declarations for den.js and worker.js, written by hand. The messages between the
// contexts are not here: they are in protocol.d.ts, generated from foxden-core's protocol table.

/** den.js: the esbuild bundle of worker.js + Pyodide's loader, as a JS string (xtask build). */
declare const __FOXDEN_WORKER_SOURCE__: string;
/** worker.js: package.json's Pyodide pin (esbuild --define, xtask build). */
declare const __FOXDEN_PYODIDE_VERSION__: string;

/** den.js probes these extension APIs only to refuse to run where they are reachable. */
declare const browser: { runtime?: unknown } | undefined;
declare const chrome: { runtime?: { id?: string } } | undefined;

// Pyodide's loader and Emscripten module, imported by path (the package's exports give these
// two no types); their types are the package's own (node_modules/pyodide/pyodide.d.ts).
declare module "pyodide/pyodide.mjs" {
  export { loadPyodide } from "pyodide";
}
declare module "pyodide/pyodide.asm.mjs" {
  const createPyodideModule: NonNullable<import("pyodide").PyodideConfig["createPyodideModule"]>;
  export default createPyodideModule;
}

// Emscripten FS internals worker.js wraps to see which files a run touched (not in
// @types/emscripten).
declare namespace FS {
  let doTruncate: (stream: FSStream | null, node: FSNode, len: number) => void;
  let msync: (stream: (FSStream & { path?: string }) | null, ...rest: unknown[]) => number;
}

/** worker.js: den-page/wheels.py, the wheel installer, embedded as text (esbuild --loader:.py=text). */
declare module "*.py" {
  const source: string;
  export default source;
}
