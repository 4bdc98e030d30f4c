// foxden worker: boots Pyodide 314.0.7 from bytes handed over by the den page and runs code.
//
// This file is bundled by esbuild (IIFE, classic worker) together with Pyodide's own loader
// (pyodide.mjs) and Emscripten module (pyodide.asm.mjs); the bundle is embedded as a string in
// den.js, which starts it from a Blob URL. The worker can fetch nothing: the den page's CSP has
// connect-src 'none', and the fetch below answers only the two boot files from memory.
//
// Messages in:  boot {module, stdlib, lock}           run {id, code, maxOutputBytes, killGraceMs, put, del}
// Messages out: booted {ms}  boot-error {message}    out {id, stream, text}   done {...}
import { loadPyodide } from "pyodide/pyodide.mjs";
import createPyodideModule from "pyodide/pyodide.asm.mjs";

const ROOTS = ["/drop", "/out", "/work"];
// An absolute URL that never resolves: Pyodide needs an absolute indexURL, but every fetch it
// makes during boot is answered from memory below.
const INDEX_URL = "https://pyodide.invalid/";

// --- JS timers: tracked so that timers left alive after a run can be detected. ---
const realSetTimeout = self.setTimeout.bind(self);
const realClearTimeout = self.clearTimeout.bind(self);
const realSetInterval = self.setInterval.bind(self);
const realClearInterval = self.clearInterval.bind(self);
const liveTimers = new Set();
self.setTimeout = (fn, ms, ...args) => {
  const id = realSetTimeout(() => {
    liveTimers.delete(id);
    if (typeof fn === "function") fn(...args);
  }, ms);
  liveTimers.add(id);
  return id;
};
self.clearTimeout = (id) => {
  liveTimers.delete(id);
  realClearTimeout(id);
};
self.setInterval = (fn, ms, ...args) => {
  const id = realSetInterval(fn, ms, ...args);
  liveTimers.add(id);
  return id;
};
self.clearInterval = (id) => {
  liveTimers.delete(id);
  realClearInterval(id);
};
const sleep = (ms) => new Promise((r) => realSetTimeout(r, ms));

// Python helpers, defined once after boot. Variables of user code live in _foxden_ns and persist.
const PY_HELPERS = `
import ast, asyncio, inspect, sys, traceback, os
from pyodide.code import eval_code, eval_code_async

_foxden_ns = {"__name__": "__main__", "__builtins__": __builtins__}

def _foxden_format(exc):
    te = traceback.TracebackException.from_exception(exc)
    frames = list(te.stack)
    idx = next((i for i, f in enumerate(frames) if f.filename == "<exec>"), None)
    if idx is not None:
        te.stack = traceback.StackSummary.from_list(frames[idx:])
    return "".join(te.format())

def _foxden_error(exc):
    return [type(exc).__name__, str(exc), _foxden_format(exc)]

def _foxden_parse(code):
    """(is_expr, uses_await), or a SyntaxError result."""
    tree = compile(code, "<exec>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    is_expr = bool(tree.body) and isinstance(tree.body[-1], ast.Expr)
    co = compile(tree, "<exec>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return is_expr, bool(co.co_flags & inspect.CO_COROUTINE)

def _foxden_failed(e):
    if isinstance(e, SystemExit) and (e.code is None or e.code == 0):
        return [None, None]
    return [None, _foxden_error(e)]

def _foxden_flush():
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass

def _foxden_uses_await(code):
    try:
        return _foxden_parse(code)[1]
    except BaseException:
        return False

def _foxden_run_sync(code):
    # Code without top-level await runs synchronously, on the JS stack (no promise machinery).
    try:
        is_expr, _ = _foxden_parse(code)
        value = eval_code(code, _foxden_ns, filename="<exec>", return_mode="last_expr")
        return [repr(value) if is_expr else None, None]
    except BaseException as e:
        return _foxden_failed(e)
    finally:
        _foxden_flush()

async def _foxden_run(code):
    try:
        is_expr, _ = _foxden_parse(code)
        value = await eval_code_async(code, _foxden_ns, filename="<exec>", return_mode="last_expr")
        return [repr(value) if is_expr else None, None]
    except BaseException as e:
        return _foxden_failed(e)
    finally:
        _foxden_flush()

def _foxden_pending_tasks(cancel):
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        return 0
    n = 0
    for t in asyncio.all_tasks(loop):
        if not t.done():
            n += 1
            if cancel:
                t.cancel()
    return n

os.makedirs("/drop", exist_ok=True)
os.makedirs("/out", exist_ok=True)
os.makedirs("/work", exist_ok=True)
os.chdir("/work")
`;

let py = null; // the Pyodide API once booted
let bootedFrom = ""; // "scratch" or "snapshot"
let madeSnapshot = null; // memory snapshot made by the first worker, handed to the den page
let pyRun, pyRunSync, pyUsesAwait, pyPending;
let fatal = null; // set when Pyodide failed fatally: every later run reports "crashed"

// Files the worker holds: path -> {mtime, size, ino} as of the last sync or scan.
const known = new Map();

// --- output capture: batched, capped, streamed to the den page as it is printed ---
let current = null; // {id, used, cap, truncated, pending: {stdout, stderr}, last}
const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
const encoder = new TextEncoder();

function flushOutput() {
  if (!current) return;
  for (const stream of ["stdout", "stderr"]) {
    const text = current.pending[stream];
    if (text) {
      current.pending[stream] = "";
      self.postMessage({ t: "out", id: current.id, stream, text });
    }
  }
  current.last = performance.now();
}

function capture(stream, bytes) {
  if (!current) return bytes.length;
  let text = decoders[stream].decode(bytes, { stream: true });
  if (current.truncated) return bytes.length;
  const size = encoder.encode(text).length;
  if (current.used + size > current.cap) {
    // Cut at a character boundary so the output stays valid text.
    let room = current.cap - current.used;
    let cut = "";
    for (const ch of text) {
      const n = encoder.encode(ch).length;
      if (n > room) break;
      room -= n;
      cut += ch;
    }
    text = cut;
    current.truncated = true;
  }
  current.used += encoder.encode(text).length;
  // Keep stdout/stderr order exact: flush the other stream before appending to this one.
  const other = stream === "stdout" ? "stderr" : "stdout";
  if (current.pending[other]) flushOutput();
  current.pending[stream] += text;
  if (current.pending[stream].length > 8192 || performance.now() - current.last > 15) flushOutput();
  return bytes.length;
}

// --- files ---
function statInfo(st) {
  const mtime = st.mtime instanceof Date ? st.mtime.getTime() : Number(st.mtime);
  return { mtime, size: st.size, ino: st.ino, mode: st.mode };
}

function fsStat(path) {
  return statInfo(py.FS.stat(path));
}

// lstat, or null when nothing is at `path`.
function lstatOrNull(path) {
  try {
    return py.FS.lstat(path);
  } catch {
    return null;
  }
}

function removeTree(path) {
  const FS = py.FS;
  const st = lstatOrNull(path);
  if (!st) return;
  if (FS.isDir(st.mode)) {
    for (const name of FS.readdir(path)) {
      if (name !== "." && name !== "..") removeTree(`${path}/${name}`);
    }
    FS.rmdir(path);
  } else {
    FS.unlink(path);
  }
}

function applySync(put, del) {
  const FS = py.FS;
  for (const path of del) {
    removeTree(path);
    known.delete(path);
  }
  for (const { path, data, mtime } of put) {
    const dir = path.slice(0, path.lastIndexOf("/"));
    // A file where a folder must go (or the reverse) was left by a refused run: replace it.
    let parent = "";
    for (const seg of dir.split("/").slice(1)) {
      parent += "/" + seg;
      const st = lstatOrNull(parent);
      if (!st) break;
      if (!FS.isDir(st.mode)) removeTree(parent);
    }
    FS.mkdirTree(dir);
    const existing = lstatOrNull(path);
    if (existing && FS.isDir(existing.mode)) removeTree(path);
    FS.writeFile(path, data);
    const t = mtime || Date.now();
    FS.utime(path, t, t);
    known.set(path, fsStat(path));
  }
}

// Files changed or deleted since the last sync: compares stat data, never content, so the
// cost does not grow with the size of unchanged files. A file touched in the same millisecond
// as its sync could look unchanged by stat alone, so files synced during the run's start
// millisecond are always reported; the host drops those whose hash did not change.
function scanChanges(runStart) {
  const FS = py.FS;
  const changed = [];
  const transfer = [];
  const seen = new Set();
  const walk = (dir) => {
    let names;
    try {
      names = FS.readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name === "." || name === "..") continue;
      const path = `${dir}/${name}`;
      const st = lstatOrNull(path);
      if (!st) continue;
      if (FS.isDir(st.mode)) {
        walk(path);
        continue;
      }
      if (!FS.isFile(st.mode)) continue; // symlinks and devices are not den files
      seen.add(path);
      const now = statInfo(st); // one lookup per file: the lstat above is the stat of a file
      const before = known.get(path);
      if (
        !before ||
        before.mtime !== now.mtime ||
        before.size !== now.size ||
        before.ino !== now.ino ||
        now.mtime >= runStart - 1
      ) {
        const data = FS.readFile(path);
        changed.push({ path, data });
        transfer.push(data.buffer);
      }
      known.set(path, now);
    }
  };
  for (const root of ROOTS) walk(root);
  const deleted = [];
  for (const path of known.keys()) {
    if (!seen.has(path)) {
      deleted.push(path);
      known.delete(path);
    }
  }
  return { changed, deleted, transfer };
}

// --- memory cap ---
// Emscripten grows the heap by calling WebAssembly.Memory.prototype.grow from JS; refusing to
// grow past the cap makes malloc fail, which Python reports as MemoryError. The interpreter
// stays usable, so the den's variables survive. (The product sheet's sandbox could use the
// whole 4 GB before failing.)
let memoryCap = 0;
function capMemory(cap) {
  if (!cap || memoryCap) return;
  memoryCap = cap;
  const realGrow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function (pages) {
    if (this.buffer.byteLength + pages * 65536 > memoryCap) {
      throw new RangeError(`foxden: memory cap of ${memoryCap} bytes (maxMemoryBytes) reached`);
    }
    return realGrow.call(this, pages);
  };
}

// --- boot ---
async function boot({ module, stdlib, lock, interrupt, snapshot, maxMemoryBytes }) {
  capMemory(maxMemoryBytes);
  const started = performance.now();
  const realFetch = self.fetch;
  // During boot, answer the wasm and the stdlib from memory; refuse everything else.
  self.fetch = async (url) => {
    const name = String(url).split("/").pop();
    if (name === "pyodide.asm.wasm") {
      return new Response(new Uint8Array(0), { headers: { "Content-Type": "application/wasm" } });
    }
    if (name === "python_stdlib.zip") return new Response(stdlib);
    throw new TypeError(`foxden: the sandbox fetches nothing (${url})`);
  };
  // The wasm is compiled once by the den page and handed over as a WebAssembly.Module.
  const realStreaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (_response, imports) => ({
    module,
    instance: await WebAssembly.instantiate(module, imports),
  });
  try {
    const options = {
      indexURL: INDEX_URL,
      lockFileContents: lock,
      createPyodideModule,
      stdout: () => {},
      stderr: () => {},
      env: { HOME: "/work" },
    };
    // Restarts resume from a memory snapshot of a freshly booted interpreter (taken by the
    // first worker, before any user code ran): ~4x faster than booting from scratch. These
    // loader options are Pyodide's private, experimental ones; any failure falls back to a
    // normal boot.
    if (snapshot) {
      try {
        py = await loadPyodide({ ...options, _loadSnapshot: snapshot });
        bootedFrom = "snapshot";
      } catch (_) {
        py = null;
      }
    }
    if (!py) {
      py = await loadPyodide({ ...options, _makeSnapshot: !snapshot });
      bootedFrom = "scratch";
      if (!snapshot) {
        try {
          madeSnapshot = py.makeMemorySnapshot();
        } catch (_) {
          madeSnapshot = null;
        }
      }
    }
  } finally {
    self.fetch = realFetch;
    WebAssembly.instantiateStreaming = realStreaming;
  }
  if (py.version !== "314.0.7") throw new Error(`Pyodide core is ${py.version}, expected 314.0.7`);
  if (interrupt) py.setInterruptBuffer(interrupt);
  py.setStdout({ write: (b) => capture("stdout", b) });
  py.setStderr({ write: (b) => capture("stderr", b) });
  py.runPython(PY_HELPERS, { filename: "<foxden>" });
  pyRun = py.globals.get("_foxden_run");
  pyRunSync = py.globals.get("_foxden_run_sync");
  pyUsesAwait = py.globals.get("_foxden_uses_await");
  pyPending = py.globals.get("_foxden_pending_tasks");
  return performance.now() - started;
}

// --- run ---
async function run(msg) {
  const started = performance.now();
  const reply = {
    t: "done",
    id: msg.id,
    result: null,
    error: null,
    truncated: false,
    changed: [],
    deleted: [],
    leftover: false,
    durationMs: 0,
  };
  if (fatal) {
    reply.error = { kind: "crashed", type: "FatalError", message: fatal, traceback: "" };
    self.postMessage(reply);
    return;
  }
  try {
    applySync(msg.put, msg.del);
  } catch (e) {
    reply.error = { kind: "storage", type: "SyncError", message: `could not place files in the sandbox: ${e}`, traceback: "" };
    reply.leftover = true; // the worker's files are unknown now: restart it
    self.postMessage(reply);
    return;
  }
  const runStart = Date.now();
  // last = 0: the first chunk of a run is sent at once; later ones at most every 15 ms or 8 KiB.
  current = { id: msg.id, used: 0, cap: msg.maxOutputBytes, truncated: false, pending: { stdout: "", stderr: "" }, last: 0 };
  decoders.stdout = new TextDecoder();
  decoders.stderr = new TextDecoder();
  try {
    const out = pyUsesAwait(msg.code) ? await pyRun(msg.code) : pyRunSync(msg.code);
    const [result, err] = out.toJs();
    out.destroy();
    reply.result = result ?? null;
    if (err) reply.error = { kind: "python", type: err[0], message: err[1], traceback: err[2] };
  } catch (e) {
    // _foxden_run catches every Python exception, so an error escaping it means the
    // interpreter failed (a Pyodide fatal error): this worker is done, the den page restarts it.
    const message = String(e && e.message ? e.message : e);
    if (e && e.name === "PythonError") {
      reply.error = { kind: "crashed", type: "InternalError", message, traceback: "" };
    } else {
      fatal = message;
      reply.error = { kind: "crashed", type: "FatalError", message, traceback: "" };
    }
  }
  // Leftovers: cancel asyncio tasks the code started; wait up to killGraceMs for them and for
  // JS timers to finish; if any is still alive, the den page restarts this worker.
  if (!fatal) {
    let tasks = pyPending(true);
    if (tasks > 0 || liveTimers.size > 0) {
      const deadline = performance.now() + msg.killGraceMs;
      while (performance.now() < deadline) {
        await sleep(5);
        tasks = pyPending(false);
        if (tasks === 0 && liveTimers.size === 0) break;
      }
      if (tasks > 0 || liveTimers.size > 0) reply.leftover = true;
    }
  }
  flushOutput();
  reply.truncated = current.truncated;
  current = null;
  const transfer = [];
  if (!fatal) {
    const scan = scanChanges(runStart);
    reply.changed = scan.changed;
    reply.deleted = scan.deleted;
    transfer.push(...scan.transfer);
  } else {
    reply.leftover = true;
  }
  reply.durationMs = performance.now() - started;
  self.postMessage(reply, transfer);
}

// Messages are handled one at a time, in order.
let queue = Promise.resolve();
self.onmessage = (event) => {
  const msg = event.data;
  queue = queue.then(async () => {
    if (msg.t === "boot") {
      try {
        const ms = await boot(msg);
        const snap = madeSnapshot;
        madeSnapshot = null;
        self.postMessage({ t: "booted", ms, from: bootedFrom, snapshot: snap }, snap ? [snap.buffer] : []);
      } catch (e) {
        self.postMessage({ t: "boot-error", message: String(e && e.stack ? e.stack : e) });
      }
    } else if (msg.t === "run") {
      await run(msg);
    }
  });
};
// An interrupted async run can leave a rejected promise behind; it must not go unhandled.
self.addEventListener("unhandledrejection", (e) => e.preventDefault());
