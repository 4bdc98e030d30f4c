// The worker thread of pyodide-adapter.mjs: one Pyodide, runs one request at a time. The den's
// files are written into Pyodide's file system before each run and compared afterwards: the
// reply names only what was created, changed (new bytes) or deleted (null).
import { parentPort } from "node:worker_threads";
import { loadPyodide } from "pyodide";

const ROOTS = ["/drop", "/out", "/work"];
let py;
try {
  py = await loadPyodide();
  // The last expression's repr, or the exception as foxden's RunError fields.
  py.runPython(`
async def _foxden_run(code):
    import traceback
    from pyodide.code import eval_code_async
    try:
        r = await eval_code_async(code, globals(), filename="<exec>")
        return (None if r is None else repr(r), None)
    except BaseException as e:
        return (None, (type(e).__name__, str(e), "".join(traceback.format_exception(e))))
`);
  parentPort.postMessage({ ready: true });
} catch (e) {
  parentPort.postMessage({ ready: false, error: String(e) });
}

function* walk(dir) {
  for (const name of py.FS.readdir(dir)) {
    if (name === "." || name === "..") continue;
    const p = `${dir}/${name}`;
    if (py.FS.isDir(py.FS.stat(p).mode)) yield* walk(p);
    else yield p;
  }
}

function writeFiles(files) {
  for (const root of ROOTS) {
    if (py.FS.analyzePath(root).exists) for (const p of [...walk(root)]) py.FS.unlink(p);
    py.FS.mkdirTree(root);
  }
  for (const [path, bytes] of Object.entries(files)) {
    py.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")) || "/");
    py.FS.writeFile(path, bytes);
  }
}

function changedFiles(before) {
  const changed = {};
  const seen = new Set();
  for (const root of ROOTS) {
    for (const p of walk(root)) {
      seen.add(p);
      const now = py.FS.readFile(p);
      const old = before[p];
      if (!old || old.length !== now.length || !old.every((b, i) => b === now[i])) changed[p] = now;
    }
  }
  for (const p of Object.keys(before)) if (!seen.has(p)) changed[p] = null;
  return changed;
}

parentPort.on("message", async (req) => {
  const text = { stdout: "", stderr: "" };
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const sink = (k) => ({ write: (buf) => ((text[k] += decoders[k].decode(buf, { stream: true })), buf.length) });
  py.setStdout(sink("stdout"));
  py.setStderr(sink("stderr"));
  const lines = req.stdin == null ? [] : req.stdin.split(/(?<=\n)/);
  py.setStdin({ stdin: () => lines.shift() ?? null, autoEOF: true });
  writeFiles(req.files);
  let reply;
  if (req.lang !== "python") {
    reply = { error: { kind: "crashed", type: "NotSupported", message: `this adapter runs Python, not ${req.lang}`, traceback: "" } };
  } else {
    const out = await py.globals.get("_foxden_run")(req.code);
    const [result, err] = out.toJs();
    out.destroy();
    reply = { result, error: err && { kind: "python", type: err[0], message: err[1], traceback: err[2] } };
  }
  reply.stdout = text.stdout;
  reply.stderr = text.stderr;
  reply.files = changedFiles(req.files);
  parentPort.postMessage({ id: req.id, reply });
});
