// Baseline for the benchmark: bare Pyodide in a plain module worker, same files, no sandbox.
import { loadPyodide } from "/node_modules/pyodide/pyodide.mjs";
const t0 = performance.now();
// Same files as dist/pyodide/ (copied from this package), plus the loader module it imports.
const py = await loadPyodide({ indexURL: new URL("/node_modules/pyodide/", location.href).href });
postMessage({ t: "ready", bootMs: performance.now() - t0 });
onmessage = (e) => postMessage({ t: "result", value: String(py.runPython(e.data)) });
