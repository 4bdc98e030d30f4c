// The worker thread of pyodide-adapter.mjs: one Pyodide, one request at a time. The den's files
// are written into Pyodide's file system before each run and compared afterwards: the reply
// names only what was created, changed (new bytes) or deleted (null). Output is posted as it is
// written (up to the run's maxOutputBytes), before the reply; so are displays
// (`foxden.display({mime: data})`) and questions (`input()` without stdin), whose answer this
// thread waits for (Atomics.wait) and reads from its answer port. Whatever fails is a reply too.
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { loadPyodide } from "pyodide";

const ROOTS = ["/drop", "/out", "/work"];
let py;
let runner;
let askingInput;
let current = 0; // the run in progress (its id)
// Answers to input(): posted on this port, then the flag is raised (workerData).
const { answers, flag } = workerData;

/** Asks the host for a line and blocks this thread until it answers (the host's timeout for the
 * run does not count the wait). */
function ask(prompt) {
  parentPort.postMessage({ id: current, input: prompt });
  Atomics.wait(flag, 0, 0);
  Atomics.store(flag, 0, 0);
  const m = receiveMessageOnPort(answers);
  // End of input as undefined, which Python gets as None (null would be pyodide's jsnull).
  return typeof m?.message === "string" ? m.message : undefined;
}
try {
  py = await loadPyodide();
  // The run: stdin as the den page gives it (the text, then EOF), the last expression's repr,
  // or the exception as foxden's RunError fields. Kept outside the user's globals.
  runner = py.runPython(`
async def run(code, stdin, g, variables=None, asking=None):
    import builtins, io, json, sys, traceback
    from pyodide.code import eval_code_async
    sys.stdin = io.StringIO(stdin)
    plain_input = builtins.input
    if asking is not None:  # no stdin: input() asks the host
        builtins.input = asking
    try:
        if variables is not None:
            g.update(json.loads(variables))  # the run's vars, as foxden checked them
        r = await eval_code_async(code, g, filename="<exec>")
        return (None if r is None else repr(r), None)
    except BaseException as e:
        return (None, (type(e).__name__, str(e), "".join(traceback.format_exception(e))))
    finally:
        sys.stdin = sys.__stdin__
        builtins.input = plain_input
        # A partial line goes out with this run, not at the start of the next.
        sys.stdout.flush()
        sys.stderr.flush()
run
`);
  // foxden.display(bundle): a MIME bundle (str for text types, bytes for images) for the host.
  py.registerJsModule("foxden", {
    display: (bundle) => parentPort.postMessage({ id: current, display: bundle.toJs({ dict_converter: Object.fromEntries }) }),
  });
  // input() without stdin asks the host and waits for its answer (a line, or null: EOFError).
  py.globals.set("_ask", ask);
  py.runPython(`
import builtins
def _asking_input(prompt=""):
    import sys
    # The prompt shows while the host waits for the answer, which is then echoed after it,
    # like a terminal (as the iframe runtime does).
    sys.stdout.write(str(prompt))
    sys.stdout.flush()
    answer = _ask(str(prompt))
    if answer is None:
        raise EOFError("end of input")
    answer = answer.split("\\n")[0]  # one line
    print(answer)
    return answer
_asking_input
`);
  askingInput = py.globals.get("_asking_input");
  parentPort.postMessage({ ready: true });
} catch (e) {
  parentPort.postMessage({ ready: false, error: String(e) });
}
const userGlobals = py?.globals.get("dict")();

/** The regular files under `dir` (links and other kinds are not followed). */
function* walk(dir) {
  for (const name of py.FS.readdir(dir)) {
    if (name === "." || name === "..") continue;
    const p = `${dir}/${name}`;
    const mode = py.FS.lstat(p).mode;
    if (py.FS.isDir(mode)) yield* walk(p);
    else if (py.FS.isFile(mode)) yield p;
  }
}

const isDir = (p) => py.FS.analyzePath(p).exists && py.FS.isDir(py.FS.lstat(p).mode);

/** The den's files, exactly: whatever the last run left under the roots goes first. */
function writeFiles(files) {
  for (const root of ROOTS) {
    if (py.FS.analyzePath(root).exists) removeTree(root);
    py.FS.mkdirTree(root);
  }
  for (const [path, bytes] of Object.entries(files)) {
    py.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    py.FS.writeFile(path, bytes);
  }
}

function removeTree(p) {
  const mode = py.FS.lstat(p).mode;
  if (!py.FS.isDir(mode)) return py.FS.unlink(p);
  for (const name of py.FS.readdir(p)) if (name !== "." && name !== "..") removeTree(`${p}/${name}`);
  py.FS.rmdir(p);
}

function changedFiles(before) {
  const changed = {};
  const seen = new Set();
  for (const root of ROOTS) {
    if (!isDir(root)) continue; // the code removed it: its files count as deleted below
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

async function runOne(req) {
  // Output: streamed to the adapter, up to the run's cap (then dropped, so that a loop printing
  // forever does not fill this thread's memory before its timeout).
  let room = req.maxOutputBytes + 4;
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const sink = (stream) => ({
    write: (buf) => {
      if (room > 0) {
        const text = decoders[stream].decode(buf.subarray(0, room), { stream: true });
        room -= Math.min(buf.length, room);
        if (text) parentPort.postMessage({ id: req.id, stream, text });
      }
      return buf.length;
    },
  });
  py.setStdout(sink("stdout"));
  py.setStderr(sink("stderr"));
  writeFiles(req.files);
  if (req.lang !== "python") {
    return { error: { kind: "crashed", type: "NotSupported", message: `this adapter runs Python, not ${req.lang}`, traceback: "" } };
  }
  const vars = req.vars ? JSON.stringify(req.vars) : undefined;
  current = req.id;
  // Without stdin, input() asks the host (undefined arrives in Python as None).
  const out = await runner(req.code, req.stdin ?? "", userGlobals, vars, req.stdin == null ? askingInput : undefined);
  const [result, err] = out.toJs();
  out.destroy();
  return {
    result,
    error: err && { kind: "python", type: err[0], message: err[1], traceback: err[2] },
    files: changedFiles(req.files),
  };
}

parentPort.on("message", async (req) => {
  let reply;
  try {
    reply = await runOne(req);
  } catch (e) {
    reply = { error: { kind: "crashed", type: "AdapterError", message: `the Pyodide thread failed: ${e?.message ?? e}`, traceback: "" } };
  }
  parentPort.postMessage({ id: req.id, reply });
});
