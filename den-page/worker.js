// @ts-check
// foxden worker: boots Pyodide 314.0.7 from bytes handed over by the den page and runs code.
//
// This file is bundled by esbuild (IIFE, classic worker) together with Pyodide's own loader
// (pyodide.mjs) and Emscripten module (pyodide.asm.mjs); the bundle is embedded as a string in
// den.js, which starts it from a Blob URL. The worker can fetch nothing: the den page's CSP has
// connect-src 'none', and the fetch below answers only the two boot files from memory.
//
// Trust: user code runs here and reaches every JS global through Python's `js` module, so it
// can post anything with `self.postMessage`. Both directions use the worker's global channel
// (a MessagePort costs Firefox ~0.15 ms per message, the global channel ~0.02 ms), so:
// - what this script posts is wrapped as [key, message], where `key` is a random string the
//   den page put in the boot message, before any user code ran. The key lives in this closure
//   only and is posted only through functions captured below, before user code could replace
//   them; the den page drops everything on the channel that does not carry it;
// - what this script reads comes from a listener added at start, which takes only trusted
//   events (user code can dispatch synthetic ones, but only the den page can post to us).
//
// Messages: their types are in protocol.d.ts, generated from foxden-core's protocol table
// (element/core/src/protocol/schema.rs; also the table in docs/architecture.md), and this file
// is checked against them (`tsc -p den-page/tsconfig.json`):
//   den page -> worker, once first:  DenToWorkerBoot  (boot: role, key, module, stdlib, lock, interrupt, maxMemoryBytes, snapshot)
//   den page -> worker:              DenToWorkerRun   (run: the host's run as it came)
//   den page -> worker:              DenToWorkerFetchReply (fetch-reply: the host's answer to a fetch)
//   den page -> worker:              DenToWorkerInputReply (input-reply: the answer to input(), JSPI only)
//   den page -> worker, once:        DenToWorkerSnapshot (snapshot: the warm cache's, after a boot with snapshotBytes and no snapshot)
//   worker -> den page, keyed:       WorkerToDen      (booted, boot-error, snapshot, out, display, done, fetch)
//
// role "maker" boots with Pyodide's snapshot options, makes the memory snapshot of a fresh
// interpreter, posts it and is terminated: it never receives a run. role "run" boots plainly
// or from that snapshot. (An interpreter booted with _makeSnapshot wraps the JS globals in a
// proxy whose getters run with the wrong receiver: `js.performance` throws there. It is only
// fit to make the snapshot.)
import { loadPyodide } from "pyodide/pyodide.mjs";
import createPyodideModule from "pyodide/pyodide.asm.mjs";
// The wheel installer (Python, stdlib only), embedded as text by the build.
import WHEELS_PY from "./wheels.py";

/** @typedef {import("./protocol").DenToWorkerBoot} DenToWorkerBoot */
/** @typedef {import("./protocol").DisplayItem} DisplayItem */
/** @typedef {import("./protocol").DenToWorkerRun} DenToWorkerRun */
/** @typedef {import("./protocol").WorkerToDen} WorkerToDen */
/** @typedef {import("./protocol").WorkerToDenDone} WorkerToDenDone */
/** @typedef {import("./protocol").PutFile} PutFile */
/** @typedef {import("./protocol").ChangedFile} ChangedFile */
/** @typedef {import("./protocol").Wheel} Wheel */
/** @typedef {import("pyodide").PyodideAPI} PyodideAPI */
/** @typedef {"stdout" | "stderr"} StreamName */

const ROOTS = ["/drop", "/out", "/work"];
// An absolute URL that never resolves: Pyodide needs an absolute indexURL, but every fetch it
// makes during boot is answered from memory below.
const INDEX_URL = "https://pyodide.invalid/";

// --- primitives captured before any user code runs (user code may replace the globals) ---
const apply = Reflect.apply;
const jsonParse = JSON.parse;
const defineProperty = Object.defineProperty;
const getOwnDescriptor = Object.getOwnPropertyDescriptor;
const objectEntries = Object.entries;
const globalScope = self;
const globalPost = self.postMessage;
// The run queue chains with this `then`: one user code patched on Promise.prototype would be
// handed the queue's callbacks (and could start or end a later run at will).
const promiseThen = Promise.prototype.then;
// The Promise constructor as it is now: user code may replace the global binding
// (`self.Promise = …`), which freezing Promise does not prevent; this script's own promises
// are made with this one.
const RealPromise = Promise;
const eventData = /** @type {(this: MessageEvent) => any} */ (/** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(MessageEvent.prototype, "data")).get);
// input() blocks on these: patched by user code, they could make it return at once while the
// run's clock stays paused for the request (a run that never times out).
const atomicsWait = Atomics.wait;
const atomicsLoad = Atomics.load;
const atomicsStore = Atomics.store;
// Without an input buffer (no cross-origin isolation), input() waits through JSPI (WebAssembly
// stack switching: Python's run_sync suspends the interpreter until the answer's promise settles).
const jspi = typeof WebAssembly === "object" && typeof (/** @type {any} */ (WebAssembly)).Suspending === "function";
const decodeUtf8 = TextDecoder.prototype.decode;
const inputDecoder = new TextDecoder();
const sliceBytes = Uint8Array.prototype.slice;
/** @type {string | null} */
let key = null; // the den page's key for this worker (set at boot, never exposed)
/**
 * Posts to the den page, keyed.
 * @param {WorkerToDen} msg
 * @param {Transferable[]} [transfer]
 */
const post = (msg, transfer) => apply(globalPost, globalScope, [[key, msg], transfer || []]);

// --- JS work a run can leave behind: tracked so that it can be detected or ended. ---
const realSetTimeout = self.setTimeout.bind(self);
const realClearTimeout = self.clearTimeout.bind(self);
const realSetInterval = self.setInterval.bind(self);
const realClearInterval = self.clearInterval.bind(self);
// The tracking sets are used through Set's own methods, captured now: user code may patch
// Set.prototype (a `size` that says 0 would hide every timer).
const setAdd = Set.prototype.add;
const setDelete = Set.prototype.delete;
const setSize = /** @type {(this: Set<unknown>) => number} */ (/** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Set.prototype, "size")).get);
/** @param {Set<any>} set @param {unknown} v */
const track = (set, v) => apply(setAdd, set, [v]);
/** @param {Set<any>} set @param {unknown} v */
const untrack = (set, v) => apply(setDelete, set, [v]);
/** @param {Set<any>} set */
const sizeOf = (set) => apply(setSize, set, []);
/** @type {Set<number>} */
const liveTimers = new Set();
self.setTimeout = (fn, ms, ...args) => {
  const id = realSetTimeout(() => {
    untrack(liveTimers, id);
    if (typeof fn === "function") fn(...args);
  }, ms);
  track(liveTimers, id);
  return id;
};
// Only timers made through the tracked functions can be cleared: an id guessed by user code
// must not end one of this script's own (a wait that would then never end).
self.clearTimeout = (id) => {
  if (untrack(liveTimers, Number(id))) realClearTimeout(Number(id));
};
self.setInterval = (fn, ms, ...args) => {
  const id = realSetInterval(fn, ms, ...args);
  track(liveTimers, id);
  return id;
};
self.clearInterval = (id) => {
  if (untrack(liveTimers, Number(id))) realClearInterval(Number(id));
};
/**
 * Puts `obj`'s own (tracking) versions of `names` on every prototype of `obj` that has its own
 * copy too: else `WorkerGlobalScope.prototype.setInterval.call(self, ...)` would reach the
 * untracked original and leave work running past the run unseen.
 * @param {object} obj @param {string[]} names
 */
function shadowPrototypes(obj, names) {
  for (let o = Object.getPrototypeOf(obj); o; o = Object.getPrototypeOf(o)) {
    for (const name of names) {
      if (Object.hasOwn(o, name)) Object.defineProperty(o, name, { value: /** @type {any} */ (obj)[name], writable: true, configurable: true, enumerable: true });
    }
  }
}
shadowPrototypes(self, ["setTimeout", "clearTimeout", "setInterval", "clearInterval"]);
/** @param {number} ms */
const sleep = (ms) => new RealPromise((r) => realSetTimeout(r, ms));
// One turn of the message task queue, through a channel of this script's own (made before any
// tracking): while code floods that queue (a call_soon chain), timers may never get a turn, so
// waiting for the flood to end must not use them.
const turnChannel = new MessageChannel();
// Its waiters by number, in a prototype-less record (user code may replace Array.prototype's
// push and shift).
/** @type {Record<number, () => void>} */
const turnWaiters = Object.create(null);
let turnFirst = 0;
let turnNext = 0;
turnChannel.port1.onmessage = () => {
  if (turnFirst === turnNext) return;
  const w = turnWaiters[turnFirst];
  delete turnWaiters[turnFirst++];
  w();
};
const turnPost = MessagePort.prototype.postMessage;
const turnPort2 = turnChannel.port2;
const nextTurn = () =>
  new RealPromise((r) => {
    turnWaiters[turnNext++] = () => r(undefined);
    apply(turnPost, turnPort2, [0]);
  });

// Message loops (MessageChannel, BroadcastChannel), nested workers, scheduler.postTask and
// animation frames can keep JS running after a run ends without any timer. Channels and workers
// a run created are closed / terminated when it ends (documented: JS resources do not outlive
// the run that made them); pending postTask tasks and frames count as leftovers, like timers.
// Installed after Pyodide booted (it keeps one MessageChannel of its own for scheduling).
// The close functions of the channels and workers made by the current run, by number, in an
// object without a prototype, and the methods that close them, captured now: user code may
// replace Array.prototype.push, the array iterator, MessagePort.prototype.close or
// Worker.prototype.terminate, and none of those may keep a resource from being closed.
/** @type {Record<number, () => void>} */
const runResources = Object.create(null);
let runResourceCount = 0;
// The run made a Worker (ended with its resources): it may compute while input() waits.
let runWorkers = false;
const construct = Reflect.construct;
/** @param {Function | undefined} C @param {string} name @param {"value" | "get"} kind */
const method = (C, name, kind) => {
  const d = C && C.prototype ? getOwnDescriptor(C.prototype, name) : undefined;
  return d ? d[kind] : undefined;
};
const portClose = method(self.MessagePort, "close", "value");
const port1Of = method(self.MessageChannel, "port1", "get");
const port2Of = method(self.MessageChannel, "port2", "get");
const broadcastClose = method(self.BroadcastChannel, "close", "value");
const workerTerminate = method(/** @type {any} */ (self).Worker, "terminate", "value");
/** @type {Set<Promise<unknown>>} */
const pendingTasks = new Set();
/**
 * @param {"MessageChannel" | "BroadcastChannel" | "Worker"} name
 * @param {(obj: any) => void} close
 */
function trackConstructor(name, close) {
  const Real = /** @type {any} */ (self)[name];
  if (typeof Real !== "function") return;
  /** @param {...any} args */
  const Tracked = function (...args) {
    if (!new.target) throw new TypeError(`${name} must be called with new`);
    const obj = construct(Real, args);
    runResources[runResourceCount++] = () => close(obj);
    if (name === "Worker") runWorkers = true;
    return obj;
  };
  Tracked.prototype = Real.prototype;
  // The real constructor stays out of reach: instances and the prototype point at the wrapper.
  Object.defineProperty(Real.prototype, "constructor", { value: Tracked, writable: true, configurable: true });
  /** @type {any} */ (self)[name] = Tracked;
}
function installTracking() {
  // Promise.prototype and Promise (its species and statics) are frozen before any user code
  // runs: every `await` of this script reads `constructor` (and for a thenable, `then`) there,
  // and the run queue resolves with run()'s promise. A `then` or species of user code's would be
  // handed this script's resolvers, and could resume a run (and post its done) while the code
  // goes on.
  Object.freeze(Promise.prototype);
  Object.freeze(Promise);
  trackConstructor("MessageChannel", (c) => {
    apply(portClose, apply(port1Of, c, []), []);
    apply(portClose, apply(port2Of, c, []), []);
  });
  trackConstructor("BroadcastChannel", (c) => apply(broadcastClose, c, []));
  trackConstructor("Worker", (w) => apply(workerTerminate, w, []));
  const sched = /** @type {any} */ (self).scheduler;
  if (sched && typeof sched.postTask === "function") {
    const realPostTask = sched.postTask.bind(sched);
    /** @type {(fn: unknown, opts: unknown) => Promise<unknown>} */
    sched.postTask = (fn, opts) => {
      const p = realPostTask(fn, opts);
      track(pendingTasks, p);
      const settle = () => untrack(pendingTasks, p);
      apply(promiseThen, p, [settle, settle]);
      return p;
    };
    shadowPrototypes(sched, ["postTask"]);
  }
  if (typeof self.requestAnimationFrame === "function") {
    const realRaf = self.requestAnimationFrame.bind(self);
    const realCancel = self.cancelAnimationFrame.bind(self);
    // Frames in a set of their own: clearTimeout of a frame's id must not untrack the frame.
    self.requestAnimationFrame = (fn) => {
      const id = realRaf((t) => {
        untrack(liveFrames, id);
        if (typeof fn === "function") fn(t);
      });
      track(liveFrames, id);
      return id;
    };
    self.cancelAnimationFrame = (id) => {
      if (untrack(liveFrames, Number(id))) realCancel(Number(id));
    };
    shadowPrototypes(self, ["requestAnimationFrame", "cancelAnimationFrame"]);
  }
  // Pyodide's event loop schedules through _api.scheduleCallback, which sends a delay under
  // 3 ms through a MessageChannel of Pyodide's own (made before this tracking), not a timer: a
  // chain of call_soon callbacks would be invisible. The webloop module imported the function
  // at boot; both references are replaced by one that counts, so the original is out of reach.
  const api = /** @type {any} */ (py)?._api;
  const realSchedule = api && api.scheduleCallback;
  if (typeof realSchedule === "function") {
    // A later callback gets a timer of this script's (not a tracked one) that Python can clear:
    // a cancelled handle's timer (asyncio.wait_for's, asyncio.timeout's) would otherwise count
    // as work left behind until it fires, and restart the worker (variables lost).
    /** @param {any} cb @param {number} delay */
    const counted = (cb, delay) => {
      scheduled++;
      let ran = false;
      const done = () => {
        if (!ran) {
          ran = true;
          scheduled--;
        }
      };
      if (delay > 2) {
        const id = realSetTimeout(() => {
          delete cancellers[id];
          done();
          cb();
        }, delay);
        cancellers[id] = () => {
          delete cancellers[id];
          realClearTimeout(id);
          done();
          if (typeof cb.destroy === "function") cb.destroy();
        };
        lastTimer = id;
        return;
      }
      soon++;
      realSchedule(() => {
        soon--;
        done();
        cb();
      }, delay);
    };
    api.scheduleCallback = counted;
    const webloop = /** @type {PyodideAPI} */ (py).pyimport("pyodide.webloop");
    webloop.scheduleCallback = counted;
    webloop.destroy();
  }
}
/** @type {Set<number>} */
const liveFrames = new Set();
let scheduled = 0; // Pyodide event-loop callbacks scheduled and not run yet
let soon = 0; // those of them going through Pyodide's message channel (no timer)
/** @type {Record<number, () => void>} */
const cancellers = Object.create(null); // timer id -> clears an event-loop callback's timer
let lastTimer = 0; // the timer of the last event-loop callback scheduled (read once by Python)
/** The timer id of the event-loop callback just scheduled (0: none), for Python's handle. */
const takeLastTimer = () => {
  const id = lastTimer;
  lastTimer = 0;
  return id;
};
/** Clears the timer of a cancelled handle's callback. @param {number} id */
const cancelTimer = (id) => {
  const c = cancellers[Number(id)];
  if (c) c();
};
/** Closes the channels and terminates the workers the run made; true if there were any. */
function endRunResources() {
  const n = runResourceCount;
  runResourceCount = 0;
  runWorkers = false;
  for (let i = 0; i < n; i++) {
    const close = runResources[i];
    delete runResources[i];
    try {
      close();
    } catch (_) {
      /* already closed */
    }
  }
  return n > 0;
}
const leftoverCount = () => sizeOf(liveTimers) + sizeOf(liveFrames) + sizeOf(pendingTasks) + scheduled;


// Python helpers, defined once after boot. Variables of user code live in _foxden_ns and persist.
const PY_HELPERS = `
import ast, asyncio, inspect, io, sys, textwrap, traceback, os
from pyodide.code import should_quiet

class _FoxdenBytesOf:
    """sys.stdin.buffer of a stdin that is no file (none given, or asked line by line): its text
    as UTF-8 bytes (sys.stdin.buffer.readline and .read, as competitive-programming code uses)."""
    def __init__(self, text):
        self._text = text
        self._rest = b""
    def readable(self):
        return True
    def _more(self):
        line = self._text.readline()
        self._rest += line.encode("utf-8", "surrogatepass")
        return bool(line)
    def readline(self, size=-1):
        while b"\\n" not in self._rest and (size < 0 or len(self._rest) < size) and self._more():
            pass
        end = self._rest.find(b"\\n") + 1 or len(self._rest)
        if size >= 0:
            end = min(end, size)
        out, self._rest = self._rest[:end], self._rest[end:]
        return out
    def read(self, size=-1):
        while (size < 0 or len(self._rest) < size) and self._more():
            pass
        end = len(self._rest) if size < 0 else size
        out, self._rest = self._rest[:end], self._rest[end:]
        return out
    def readlines(self):
        return list(iter(self.readline, b""))
    def __iter__(self):
        return iter(self.readline, b"")

class _FoxdenNoStdin(io.TextIOBase):
    """sys.stdin of a run given no stdin: reading it says how to give some."""
    _why = ("this run has no stdin: pass it with den.run(code, { stdin: '3\\\\n4\\\\n' }) "
            "(input() then reads it line by line, and EOF after)")
    def readable(self):
        return True
    def read(self, size=-1):
        raise EOFError(self._why)
    def readline(self, size=-1):
        raise EOFError(self._why)
    @property
    def buffer(self):
        return _FoxdenBytesOf(self)

_FOXDEN_REPRS = (
    ("image/png", "_repr_png_"), ("image/jpeg", "_repr_jpeg_"), ("image/svg+xml", "_repr_svg_"),
    ("text/html", "_repr_html_"), ("text/markdown", "_repr_markdown_"), ("application/json", "_repr_json_"),
)
_FOXDEN_BINARY = ("image/png", "image/jpeg")
_FOXDEN_MIMES = tuple(m for m, _ in _FOXDEN_REPRS) + ("text/plain",)

def _foxden_bundle(obj, mime=None):
    """[[mime, str | bytes], ...], richest first, text/plain last."""
    import base64, json
    if mime is not None:
        if mime not in _FOXDEN_MIMES:
            raise ValueError("foxden.display: %r is not a type a den shows; use one of %s" % (mime, ", ".join(_FOXDEN_MIMES)))
        if mime in _FOXDEN_BINARY:
            data = base64.b64decode(obj) if isinstance(obj, str) else bytes(obj)
        else:
            data = obj.decode("utf-8") if isinstance(obj, (bytes, bytearray)) else str(obj)
        return [[mime, data]] + ([] if mime == "text/plain" else [["text/plain", "<%s>" % mime]])
    bundle = []
    for m, name in _FOXDEN_REPRS:
        fn = getattr(obj, name, None)
        if not callable(fn):
            continue
        try:
            v = fn()
        except Exception:
            continue
        if isinstance(v, tuple):
            v = v[0]
        if v is None:
            continue
        if m in _FOXDEN_BINARY:
            v = base64.b64decode(v) if isinstance(v, str) else bytes(v)
        elif m == "application/json":
            v = v if isinstance(v, str) else json.dumps(v)
        else:
            v = str(v)
        bundle.append([m, v])
    bundle.append(["text/plain", repr(obj)])
    return bundle

def _foxden_has_rich(obj):
    return not isinstance(obj, type) and any(callable(getattr(obj, n, None)) for _, n in _FOXDEN_REPRS)

def display(*objs, mime=None):
    """Shows each object as rich output (image, SVG, HTML, Markdown, JSON), in order with print().
    With mime="image/png" (etc.), the object is the data itself (bytes, or text)."""
    _foxden_flush()
    for obj in objs:
        refused = _foxden_post_display(_foxden_bundle(obj, mime))
        if refused:
            raise ValueError("foxden.display: " + refused)

def _foxden_auto_display(value, is_expr):
    # The last expression's rich forms (like a notebook); a broken _repr_*_ never fails the run.
    if is_expr and _foxden_has_rich(value):
        try:
            display(value)
        except Exception:
            pass

class FetchError(OSError):
    """foxden.fetch was refused by the host, or the request did not complete.
    .reason is the refusedBecause value (not-allowed, rate, too-large, redirect, ...)."""
    def __init__(self, reason, message):
        super().__init__("foxden.fetch refused (%s): %s" % (reason, message))
        self.reason = reason

class FetchResponse:
    """The answer of foxden.fetch: status, ok, headers (lower-case names), url, and the body
    as bytes(), text() or json()."""
    def __init__(self, url, status, headers, body):
        self.url = url
        self.status = status
        self.headers = headers
        self._body = body
    @property
    def ok(self):
        return 200 <= self.status < 300
    def bytes(self):
        return self._body
    def text(self, encoding="utf-8"):
        return self._body.decode(encoding, errors="replace")
    def json(self):
        import json
        return json.loads(self._body)
    def __repr__(self):
        return "<FetchResponse %d %s>" % (self.status, self.url)

def _foxden_fetch_start(url, method, headers, body):
    # The host's answer to come (a JS promise): shared by foxden.fetch and urllib.request.
    import json
    from pyodide.ffi import to_js
    if isinstance(headers, dict):
        headers = list(headers.items())
    pairs = [[str(k), str(v)] for k, v in (headers or [])]
    if isinstance(body, str):
        body = body.encode("utf-8")
    data = None if body is None else to_js(bytes(body))
    return _foxden_fetch_js(str(url), str(method), json.dumps(pairs), data)

def _foxden_fetch_answer(r):
    if r.refused == "interrupted":
        # The host stopped the run (or its time ran out) while it waited for this request.
        raise KeyboardInterrupt
    if r.refused is not None:
        raise FetchError(r.refused, r.message)
    hdrs = {}
    for name, value in r.headers.to_py():
        hdrs[name.lower()] = value
    return FetchResponse(r.url, int(r.status), hdrs, r.body.to_bytes())

async def fetch(url, method="GET", headers=None, body=None):
    """Asks the host page to make an HTTP request (the sandbox itself can reach nothing). The
    host checks the den's network allowlist, method, rate and sizes; a refusal raises FetchError.
    headers: a dict or a list of (name, value); body: bytes or str (UTF-8). Use with await."""
    return _foxden_fetch_answer(await _foxden_fetch_start(url, method, headers, body))

def _foxden_urllib_open(self, req):
    # http_open and https_open of urllib.request's HTTPHandler (so urlopen and openers built
    # with build_opener both use it): the host makes the request, as for foxden.fetch, while
    # Python waits through JSPI (a run on a den with network is entered so). Redirects are
    # refused by the host; other statuses come back as they are (urllib raises HTTPError).
    import email.message, http.client, io, urllib.error, urllib.response
    if not _foxden_can_run_sync():
        if not _foxden_run_network():
            why = ("this den has no network: the host page opens it with network: { allow: "
                   "[url patterns] } (openDen's option, or the element's network attribute)")
        elif not _foxden_jspi:
            why = ("urllib needs WebAssembly JSPI (JavaScript Promise Integration) to wait for "
                   "the host; use await foxden.fetch(url)")
        else:
            why = ("urllib cannot wait for the host here (in a function called from "
                   "JavaScript); call it from the run's own code, or use await foxden.fetch(url)")
        raise urllib.error.URLError(why)
    data = req.data
    if data is not None:
        try:
            data = memoryview(data).tobytes()
        except TypeError:
            # A file, or an iterable of bytes-like chunks (urllib sends those chunked).
            data = data.read() if hasattr(data, "read") else b"".join(memoryview(c).tobytes() for c in data)
    # Host, Content-Length, Connection and Transfer-Encoding are the browser's (urllib adds
    # them itself); so is urllib's default User-Agent, which Firefox would send from script
    # (Chromium drops it): a header that needs a CORS preflight, which a server answering
    # simple CORS only fails. A User-Agent the code set itself is sent.
    own = {"host", "content-length", "connection", "transfer-encoding"}
    headers = [(k, v) for k, v in req.header_items() if k.lower() not in own
               and not (k.lower() == "user-agent" and v.startswith("Python-urllib/"))]
    try:
        r = _foxden_fetch_answer(_foxden_run_sync_jspi(
            _foxden_fetch_start(req.full_url, req.get_method(), headers, data)))
    except FetchError as e:
        raise urllib.error.URLError(e) from None
    msg = email.message.Message()
    for name, value in r.headers.items():
        msg[name] = value
    resp = urllib.response.addinfourl(io.BytesIO(r.bytes()), msg, r.url or req.full_url, r.status)
    resp.msg = resp.reason = http.client.responses.get(r.status, "")
    # As http.client.HTTPResponse has them.
    resp.getheader = lambda name, default=None: msg.get(name, default)
    resp.getheaders = lambda: list(msg.items())
    return resp

def _foxden_patch_urllib(module):
    module.HTTPHandler.http_open = _foxden_urllib_open
    module.HTTPHandler.https_open = _foxden_urllib_open

class _FoxdenUrllibLoader:
    # Runs urllib.request's own loader, then patches the module (importing it at start-up
    # would cost every den its boot time).
    def __init__(self, inner):
        self._inner = inner
    def create_module(self, spec):
        return self._inner.create_module(spec)
    def exec_module(self, module):
        self._inner.exec_module(module)
        _foxden_patch_urllib(module)
    def __getattr__(self, name):
        return getattr(self._inner, name)

class _FoxdenUrllibFinder:
    _busy = False
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "urllib.request" or cls._busy:
            return None
        import importlib.machinery
        cls._busy = True
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        finally:
            cls._busy = False
        if spec is not None and spec.loader is not None:
            spec.loader = _FoxdenUrllibLoader(spec.loader)
        return spec

if "urllib.request" in sys.modules:
    _foxden_patch_urllib(sys.modules["urllib.request"])
sys.meta_path.insert(0, _FoxdenUrllibFinder)

def _foxden_module():
    import types
    m = types.ModuleType("foxden", "foxden's helpers: display(obj, mime=None); await fetch(url, method='GET', headers=None, body=None).")
    m.display = display
    m.fetch = fetch
    m.FetchError = FetchError
    m.FetchResponse = FetchResponse
    sys.modules["foxden"] = m
_foxden_module()

# Taken before any user code runs (which could replace pyodide.ffi's).
from pyodide.ffi import run_sync as _foxden_run_sync_jspi, can_run_sync as _foxden_can_run_sync

class _FoxdenAskStdin(io.TextIOBase):
    """sys.stdin of an interactive run: each line is asked of the host (the worker blocks on a
    SharedArrayBuffer until the person answers, or without one, Python is suspended through
    JSPI; the run's timeout stops meanwhile)."""
    def readable(self):
        return True
    def __init__(self):
        self._buf = ""  # the rest of a multi-line answer
    def _ask(self, prompt):
        if not _foxden_ask_buffer:
            # JSPI: the run was entered with callPromising (and Pyodide runs asyncio's tasks so
            # too); a Python function that JavaScript calls back (a timer's, an event's) was not,
            # and cannot be suspended.
            if not _foxden_can_run_sync():
                raise EOFError("input() cannot wait for an answer here (in a function called from "
                               "JavaScript) on a den without cross-origin isolation; call it from "
                               "the run's own code, or pass the run's input as "
                               "den.run(code, { stdin: '3\\\\n4\\\\n' })")
            state, text = _foxden_run_sync_jspi(_foxden_ask_input(prompt))
        else:
            state, text = _foxden_ask_input(prompt)
        if state == 1:
            return text if text.endswith("\\n") else text + "\\n"
        if state == 2:
            return ""
        if state == 4:
            # The host stopped the run (or its time ran out) while it waited for an answer.
            raise KeyboardInterrupt
        raise EOFError(text)
    def _line(self, prompt):
        if not self._buf:
            self._buf = self._ask(prompt)
        i = self._buf.find("\\n")
        line, self._buf = (self._buf[:i + 1], self._buf[i + 1:]) if i >= 0 else (self._buf, "")
        return line
    def readline(self, size=-1):
        _foxden_flush()
        return self._line("")
    @property
    def buffer(self):
        b = getattr(self, "_bytes", None)
        if b is None:
            b = self._bytes = _FoxdenBytesOf(self)
        return b
    def read(self, size=-1):
        lines = []
        while True:
            line = self.readline()
            if not line:
                return "".join(lines)
            lines.append(line)

class _FoxdenNotIsolated(_FoxdenNoStdin):
    _why = ("interactive input() needs a browser with WebAssembly JSPI (JavaScript Promise "
            "Integration) or a cross-origin isolated den: serve the host page with "
            "'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: require-corp', "
            "and den.html with 'Cross-Origin-Embedder-Policy: require-corp' and "
            "'Cross-Origin-Resource-Policy: cross-origin' (den.info.interruptible is then true); "
            "or pass the run's input as den.run(code, { stdin: '3\\\\n4\\\\n' })")

import builtins
_foxden_builtin_input = builtins.input
def _foxden_input(prompt=""):
    # input() of an interactive run: the prompt goes to stdout (as in a terminal) and to the host,
    # and the answer is echoed after it, so the output reads like a terminal session.
    if not isinstance(sys.stdin, _FoxdenAskStdin):
        return _foxden_builtin_input(prompt)
    prompt = str(prompt)
    sys.stdout.write(prompt)
    _foxden_flush()
    line = sys.stdin._line(prompt)
    if not line:
        raise EOFError("EOF when reading a line")
    sys.stdout.write(line)
    return line[:-1]
builtins.input = _foxden_input

def _foxden_stdin(text, interactive=False):
    # A fresh stdin per run: nothing one run left unread reaches the next.
    if isinstance(text, str):
        # A text file as a terminal's: sys.stdin.buffer reads its bytes, and "\\r\\n" reads
        # as "\\n".
        sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode("utf-8", "surrogatepass")),
                                     encoding="utf-8", errors="surrogatepass")
    elif interactive and _foxden_can_ask:
        sys.stdin = _FoxdenAskStdin()
    elif interactive:
        sys.stdin = _FoxdenNotIsolated()
    else:
        sys.stdin = _FoxdenNoStdin()

_foxden_ns = {"__name__": "__main__", "__builtins__": __builtins__}

def _foxden_format(exc):
    te = traceback.TracebackException.from_exception(exc)
    frames = list(te.stack)
    idx = next((i for i, f in enumerate(frames) if f.filename == "<exec>"), None)
    if idx is not None:
        # From the user's code on, without foxden's own wrappers (time.sleep, input): the
        # builtins they stand for have no frame either.
        frames = [f for f in frames[idx:] if f.filename != "<foxden>"]
        te.stack = traceback.StackSummary.from_list(frames)
    return "".join(te.format())

def _foxden_error(exc):
    # The code's exception may fail to describe itself (a __str__ that raises): the run still
    # ends as its error, not as a crash of the worker.
    try:
        name = str(type(exc).__name__)
    except BaseException:
        name = "Exception"
    try:
        message = str(exc)
    except BaseException as e:
        message = f"<str() of the exception failed: {type(e).__name__}>"
    try:
        tb = _foxden_format(exc)
    except BaseException:
        tb = f"{name}: {message}\\n"
    return [name, message, tb]

_FOXDEN_TLA = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

def _foxden_compile(code):
    """(body, last, is_expr): the code parsed once and compiled with top-level await allowed,
    run as pyodide.code.eval_code runs it (dedented; the value of a last expression statement is
    returned unless a trailing ';' quiets it: then is_expr is False, as for a statement). eval_code copies an AST template and compiles the
    whole module on every call (most of a short run's time); here the last expression is
    compiled on its own instead (last, mode "eval"; None when there is no value to return)."""
    tree = compile(textwrap.dedent(code), "<exec>", "exec", ast.PyCF_ONLY_AST | _FOXDEN_TLA)
    body = tree.body
    is_expr = bool(body) and isinstance(body[-1], ast.Expr)
    # A quieted last expression ("x;") runs as a statement: no value (result null), no display.
    if is_expr and ";" in code and should_quiet(code):
        is_expr = False
    last = None
    if is_expr:
        last = compile(ast.Expression(body.pop().value), "<exec>", "eval", _FOXDEN_TLA)
    return compile(tree, "<exec>", "exec", _FOXDEN_TLA), last, is_expr

def _foxden_is_async(code):
    return bool(code is not None and code.co_flags & inspect.CO_COROUTINE)

def _foxden_failed(e):
    if isinstance(e, SystemExit) and (e.code is None or e.code == 0):
        return [None, None]
    return [None, _foxden_error(e)]

def _foxden_flush(ignored=BaseException):
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except ignored:
        pass

# time.sleep blocks this worker (in a run entered with stack switching, an interactive run
# without isolation, Pyodide's sleep suspends Python instead, and JS timers run meanwhile):
# output held back for batching (up to 15 ms) would wait for the whole sleep. What was
# printed goes first.
import time as _foxden_time
_foxden_real_sleep = _foxden_time.sleep
_foxden_monotonic = _foxden_time.monotonic
_FOXDEN_SLEEP_SLICE = 0.05
def _foxden_sleep(secs, /):
    # Exceptions only: a timeout's KeyboardInterrupt can land in the flush and must reach the
    # user's code.
    _foxden_flush(Exception)
    _foxden_send_output()
    if isinstance(secs, bool) or not isinstance(secs, (int, float)) or not 0 <= secs < 1e9:
        _foxden_real_sleep(secs)  # its own checks and errors (a negative, a NaN, a str, too large)
        return
    # In slices, so that a stop or a timeout ends it within one (a short sleep is one slice):
    # on an isolated den the interrupt signal is read between slices; in a run entered through
    # JSPI (whose sleep lets the worker read messages), the flag the den page's interrupt sets.
    end = _foxden_monotonic() + secs
    while True:
        left = max(end - _foxden_monotonic(), 0)
        _foxden_real_sleep(min(left, _FOXDEN_SLEEP_SLICE))
        if _foxden_run_stopped():
            raise KeyboardInterrupt
        if left <= _FOXDEN_SLEEP_SLICE:
            return
_foxden_sleep.__code__ = _foxden_sleep.__code__.replace(co_name="sleep", co_qualname="sleep")
_foxden_sleep.__name__ = _foxden_sleep.__qualname__ = "sleep"
_foxden_sleep.__module__ = "time"
_foxden_sleep.__doc__ = _foxden_real_sleep.__doc__
_foxden_time.sleep = _foxden_sleep

# The compiled pieces of code with top-level await, handed from _foxden_run_sync to the
# _foxden_run call JS makes right after it (with the same code), so such code is compiled once.
_foxden_async_compiled = None

def _foxden_run_sync(code, stdin=None, interactive=False, variables=None):
    # Code without top-level await runs synchronously, on the JS stack (no promise machinery);
    # for code with it this returns None and JS calls _foxden_run. variables: the run's vars,
    # JSON text the host checked (names, size), set in the code's globals first.
    global _foxden_async_compiled
    _foxden_async_compiled = None
    _foxden_stdin(stdin, interactive)
    try:
        if variables is not None:
            import json
            _foxden_ns.update(json.loads(variables))
        body, last, is_expr = _foxden_compile(code)
        if _foxden_is_async(body) or _foxden_is_async(last):
            _foxden_async_compiled = (code, body, last, is_expr)
            return None
        eval(body, _foxden_ns)
        value = None if last is None else eval(last, _foxden_ns)
        _foxden_auto_display(value, is_expr)
        return [repr(value) if is_expr else None, None]
    except BaseException as e:
        return _foxden_failed(e)
    finally:
        _foxden_flush()

# The task of the run with top-level await in progress (see _foxden_interrupt_async).
_foxden_main_task = None
_foxden_interrupting = False

def _foxden_interrupt_async():
    # A stop while code with top-level await is suspended in an await: the future it waits
    # for fails with KeyboardInterrupt, which is so raised where the code waits (as a signal
    # would be; asyncio.sleep's own finally then cancels its timer). If what it awaited is
    # already done (it is about to resume), the task is cancelled instead, at its next step,
    # and _foxden_run reports that as the KeyboardInterrupt it stands for. False: no such run.
    # (A task suspended inside a step, through JSPI in input(), urllib or time.sleep, is the
    # loop's current task: those waits end by their own means, and cancelling it would undo the
    # KeyboardInterrupt it then handles.)
    global _foxden_interrupting
    t = _foxden_main_task
    if t is None or t.done() or asyncio.current_task(t.get_loop()) is t:
        return False
    w = getattr(t, "_fut_waiter", None)
    if w is not None and not w.done() and not isinstance(w, asyncio.Task):
        try:
            w.set_exception(KeyboardInterrupt())
            return True
        except Exception:
            pass
    # Awaiting a task (which cancel() cancels too), or about to resume.
    _foxden_interrupting = True
    t.cancel()
    return True

async def _foxden_run(code, stdin=None, interactive=False):
    global _foxden_async_compiled, _foxden_main_task, _foxden_interrupting
    _foxden_main_task = asyncio.current_task()
    _foxden_interrupting = False
    compiled, _foxden_async_compiled = _foxden_async_compiled, None
    _foxden_stdin(stdin, interactive)
    try:
        if compiled is not None and compiled[0] == code:
            _, body, last, is_expr = compiled
        else:
            body, last, is_expr = _foxden_compile(code)
        ran = eval(body, _foxden_ns)
        if _foxden_is_async(body):
            await ran
        value = None if last is None else eval(last, _foxden_ns)
        if _foxden_is_async(last):
            value = await value
        _foxden_auto_display(value, is_expr)
        return [repr(value) if is_expr else None, None]
    except asyncio.CancelledError as e:
        if _foxden_interrupting:
            return _foxden_failed(KeyboardInterrupt().with_traceback(e.__traceback__))
        return _foxden_failed(e)
    except BaseException as e:
        return _foxden_failed(e)
    finally:
        if _foxden_interrupting:
            # A cancel that found the task suspended inside a step (through JSPI) is still
            # pending when the code, interrupted there, returns: taken back, or asyncio would
            # turn the run's answer into a CancelledError.
            asyncio.current_task().uncancel()
        _foxden_main_task = None
        _foxden_interrupting = False
        _foxden_flush()

# Callbacks scheduled on the event loop (call_soon, call_later, call_at) that have not run:
# a chain of them (a callback that schedules itself again) is JS work left behind like a
# timer, but it runs through Pyodide's own scheduler, which is not tracked in JS. The loop's
# call_later (which the others call) is wrapped before any user code runs.
_foxden_handles = set()
# The JS timer of each handle's callback (a later one): cleared once the handle is cancelled.
_foxden_timers = {}

def _foxden_track_handles():
    import math
    from pyodide.webloop import WebLoop
    scheduled = WebLoop.call_later
    def call_later(self, delay, callback, *args, context=None):
        if isinstance(getattr(callback, "__self__", None), asyncio.Task):
            # A task's own step or wake-up: the task is counted (and cancelled) as a task, and
            # this must run for a cancelled task to end.
            return scheduled(self, delay, callback, *args, context=context)
        box = []
        def ran(*a):
            if box:
                _foxden_handles.discard(box[0])
                _foxden_timers.pop(box[0], None)
            return callback(*a)
        later = delay > 0.002  # the delays scheduleCallback gives a timer (not its channel)
        if later:
            _foxden_last_timer()  # forget a timer scheduled outside call_later
        h = scheduled(self, delay, ran, *args, context=context)
        timer = _foxden_last_timer() if later else 0
        if delay != math.inf:
            box.append(h)
            _foxden_handles.add(h)
            if timer:
                _foxden_timers[h] = timer
        return h
    WebLoop.call_later = call_later

def _foxden_drop_handle(h):
    _foxden_handles.discard(h)
    timer = _foxden_timers.pop(h, None)
    if timer:
        _foxden_cancel_timer(timer)

_foxden_track_handles()

def _foxden_pending_tasks(cancel):
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        return 0
    n = 0
    # The callbacks pending now, taken before the tasks are cancelled: cancelling a task
    # schedules its wake-up (call_soon), which must run for the task to end.
    handles = list(_foxden_handles)
    for t in asyncio.all_tasks(loop):
        if not t.done():
            n += 1
            if cancel:
                t.cancel()
    for h in handles:
        if h.cancelled():
            _foxden_drop_handle(h)
            continue
        n += 1
        if cancel:
            h.cancel()
            _foxden_drop_handle(h)
    return n

os.makedirs("/drop", exist_ok=True)
os.makedirs("/out", exist_ok=True)
os.makedirs("/work", exist_ok=True)
os.chdir("/work")
`;

/** @type {PyodideAPI | null} */
let py = null; // the Pyodide API once booted
/** @type {"" | "scratch" | "snapshot"} */
let bootedFrom = ""; // "scratch" or "snapshot"
// Python callables (PyProxy) of PY_HELPERS.
/** @type {any} */ let pyRun;
/** @type {any} */ let pyRunSync;
/** @type {any} */ let pyInterruptAsync;
/** @type {any} */ let pyPending;
/**
 * Python tasks still pending after a run (`first`: cancel them). A timeout's or Stop's signal
 * landing while this runs raises KeyboardInterrupt here: that counts as work left behind (the
 * worker is restarted), not as a fault of this script.
 * @param {boolean} first
 */
function pendingTaskCount(first) {
  try {
    return pyPending(first);
  } catch (_) {
    return 1;
  }
}
/** @type {string | null} */
let fatal = null; // set when Pyodide failed fatally: every later run reports "crashed"

// Files the worker holds: path -> {mtime, size, ino} as of the last sync or scan.
/** @type {Map<string, {mtime: number, size: number, ino: number, mode: number}>} */
const known = new Map();

// --- output capture: batched, capped, streamed to the den page as it is printed ---
/** @type {{id: number, used: number, cap: number, truncated: boolean, parts: import("./protocol").OutputPart[], held: number, last: number, wrote: number, sent: number, displayed: number, displays: number, displayCut: boolean, network: boolean, stopped?: boolean} | null} */
let current = null; // {id, used, cap, truncated, parts (held output, in print order), held (its UTF-16 length), last, network (the den may fetch)}
const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
const encoder = new TextEncoder();

// Held output goes in one message: one part per change of stream, so that output switching
// between stdout and stderr at every character costs a message per 1 024 switches, not two.
const MAX_OUT_PARTS = 1024; // foxden_core::protocol::MAX_OUT_PARTS
/** Output messages sent at once after a quiet spell (15 ms without output); more are batched. */
const OUT_BURST = 16;

// Output held back while the worker is free (Python awaits, a JS timer is pending) goes
// after 15 ms: a timer of this script's own (not a run's leftover).
let flushTimer = 0;

function flushOutput() {
  if (flushTimer) {
    realClearTimeout(flushTimer);
    flushTimer = 0;
  }
  if (!current) return;
  if (current.parts.length) {
    const parts = current.parts;
    current.parts = [];
    current.held = 0;
    post({ t: "out", id: current.id, parts });
  }
  current.last = performance.now();
}

/**
 * Posts a display of the current run, after the output printed before it (called from Python's
 * foxden.display with a list of [mime, str | bytes]; user code can call it too, so the den page
 * and the host check every display).
 * @param {{toJs: (o: {depth: number}) => unknown}} bundle
 * @returns {string | null} why it was refused, or null
 */
function postDisplay(bundle) {
  if (!current || !bundle || typeof bundle.toJs !== "function") return "no run is in progress";
  // A display refused by a cap is something the run did not show: the run is truncated.
  if (current.displays >= MAX_DISPLAYS_PER_RUN) {
    current.displayCut = true;
    return `this run already showed ${MAX_DISPLAYS_PER_RUN} displays; it was not shown`;
  }
  const items = bundle.toJs({ depth: 3 }); // list -> [mime, data] -> bytes as Uint8Array
  if (!Array.isArray(items)) return "not a bundle";
  /** @type {DisplayItem[]} */
  const out = [];
  for (const item of items) {
    if (!Array.isArray(item) || typeof item[0] !== "string") continue;
    const [mime, data] = item;
    if (typeof data === "string") out.push({ mime, text: data, bytes: null });
    // A copy of the view's bytes: posting the view would copy its whole buffer, however
    // large, while only its length is counted.
    else if (data instanceof Uint8Array) out.push({ mime, text: null, bytes: data.slice() });
  }
  const size = out.reduce((n, i) => n + (i.text !== null ? encoder.encode(i.text).length : /** @type {Uint8Array} */ (i.bytes).length), 0);
  if (current.displayed + size > MAX_DISPLAY_BYTES) {
    current.displayCut = true;
    return `this display (${size} bytes) would take the run's displays over ${MAX_DISPLAY_BYTES} bytes; it was not shown`;
  }
  current.displayed += size;
  current.displays += 1;
  flushOutput();
  if (out.length) post({ t: "display", id: current.id, bundle: out }, out.flatMap((i) => (i.bytes ? [i.bytes.buffer] : [])));
  return null;
}
const MAX_DISPLAY_BYTES = 16 * 1024 * 1024;
const MAX_DISPLAYS_PER_RUN = 1000; // foxden_core::outcome::MAX_DISPLAYS_PER_RUN

// Interactive input(): the den page's input buffer (cross-origin isolated dens only):
// [0] state (0 waiting, 1 text, 2 end of input, 3 failed: text is why, 4 the run is stopped:
// KeyboardInterrupt), [1] byte length, then UTF-8.
/** @type {Int32Array | null} */
let inputBuf = null;
/** Pyodide's interrupt buffer (isolated dens): the den page writes 2 (SIGINT) to stop a run. */
/** @type {Int32Array | null} */
let interruptBuf = null;
const INPUT_HEADER_BYTES = 8;

/**
 * The JSPI wait for an answer (no input buffer): the run that asked, and what settles it.
 * @type {{id: number, resolve: (a: [number, string]) => void} | null}
 */
let inputWaiting = null;

/**
 * Asks the host for a line and blocks this worker until the den page writes the answer; or,
 * without an input buffer, returns a promise of it that Python waits for with run_sync.
 * Called by Python's input()/sys.stdin of an interactive run.
 * @param {string} prompt
 * @returns {[number, string] | Promise<[number, string]>} [state, text]
 */
function askInput(prompt) {
  if (!current) return [3, "no run is in progress"];
  if (current.stopped) return [4, ""]; // the run is being stopped: KeyboardInterrupt
  flushOutput();
  if (!inputBuf) {
    if (inputWaiting) return [3, "input() is already waiting for an answer"];
    const id = current.id;
    return new RealPromise((resolve) => {
      inputWaiting = { id, resolve };
      post({ t: "input", id, prompt: String(prompt).slice(0, 4096) });
    });
  }
  // A SIGINT that came before Python polled it (Stop, or the timeout, just now): input() raises
  // KeyboardInterrupt at once instead of blocking, where nothing polls it.
  if (interruptBuf && apply(atomicsLoad, Atomics, [interruptBuf, 0]) === 2) {
    apply(atomicsStore, Atomics, [interruptBuf, 0, 0]);
    current.stopped = true;
    return [4, ""];
  }
  apply(atomicsStore, Atomics, [inputBuf, 0, 0]);
  post({ t: "input", id: current.id, prompt: String(prompt).slice(0, 4096), workers: runWorkers });
  apply(atomicsWait, Atomics, [inputBuf, 0, 0]);
  const state = apply(atomicsLoad, Atomics, [inputBuf, 0]);
  const room = inputBuf.buffer.byteLength - INPUT_HEADER_BYTES;
  const len = Math.min(Math.max(apply(atomicsLoad, Atomics, [inputBuf, 1]), 0), room);
  // A copy: TextDecoder does not read shared memory.
  const text = apply(decodeUtf8, inputDecoder, [apply(sliceBytes, new Uint8Array(inputBuf.buffer, INPUT_HEADER_BYTES, len), [])]);
  apply(atomicsStore, Atomics, [inputBuf, 0, 0]);
  current.last = performance.now();
  return [state >= 1 && state <= 4 ? state : 3, text];
}

// --- network: foxden.fetch asks the host (this worker's CSP, connect-src 'none', blocks every
// request of its own). Each request gets a number; the host's fetch-reply for it resolves the
// promise Python awaits. Requests still pending when the run ends resolve as "aborted".
/** @typedef {{url: string, status: number | undefined, headers: string[][], body: Uint8Array | undefined, refused: string | undefined, message: string}} FetchAnswer */
let fetchSeq = 0;
/** @type {Map<number, {url: string, resolve: (a: FetchAnswer) => void}>} */
const fetchPending = new Map();
/**
 * @param {string} url
 * @param {string} refused
 * @param {string} message
 * @returns {FetchAnswer}
 */
const refusedAnswer = (url, refused, message) => ({ url, status: undefined, headers: [], body: undefined, refused, message });

/**
 * Called from Python's foxden.fetch.
 * @param {string} url
 * @param {string} method
 * @param {string} headersJson [[name, value], ...]
 * @param {Uint8Array | undefined} body
 * @returns {Promise<FetchAnswer>}
 */
function fetchViaHost(url, method, headersJson, body) {
  url = String(url);
  if (!current) return RealPromise.resolve(refusedAnswer(url, "aborted", "no run is in progress"));
  if (current.stopped) return RealPromise.resolve(refusedAnswer(url, "interrupted", "the run is being stopped"));
  /** @type {{name: string, value: string}[]} */
  let headers;
  try {
    headers = JSON.parse(String(headersJson)).map((/** @type {unknown[]} */ h) => ({ name: String(h[0]), value: String(h[1]) }));
  } catch (_) {
    return RealPromise.resolve(refusedAnswer(url, "bad-request", "headers must be a dict or a list of (name, value)"));
  }
  const data = body instanceof Uint8Array ? body.slice() : null; // a copy of its own, transferred
  flushOutput(); // what was printed before the request shows while it is made
  const req = ++fetchSeq;
  return new RealPromise((resolve) => {
    fetchPending.set(req, { url, resolve });
    post({ t: "fetch", id: /** @type {NonNullable<typeof current>} */ (current).id, req, url, method: String(method), headers, body: data }, data ? [data.buffer] : []);
  });
}

/** @param {import("./protocol").DenToWorkerFetchReply} m the host's answer, forwarded by the den page */
function onFetchReply(m) {
  const p = fetchPending.get(m.req);
  if (!p) return;
  fetchPending.delete(m.req);
  if (typeof m.refused === "string") {
    p.resolve(refusedAnswer(p.url, m.refused, String(m.message)));
    return;
  }
  const headers = Array.isArray(m.headers) ? m.headers.map((h) => [String(h.name), String(h.value)]) : [];
  p.resolve({ url: p.url, status: Number(m.status), headers, body: m.body instanceof Uint8Array ? m.body : new Uint8Array(0), refused: undefined, message: "" });
}

/**
 * The host's answer to input(), forwarded by the den page (which checked its size), for a
 * worker that waits through JSPI.
 * @param {import("./protocol").DenToWorkerInputReply} m
 */
function onInputReply(m) {
  const w = inputWaiting;
  if (!w || !current || m.id !== w.id) return;
  inputWaiting = null;
  current.last = performance.now();
  if (typeof m.text === "string") w.resolve([1, m.text]);
  else if (typeof m.error === "string") w.resolve([3, m.error]);
  else w.resolve([2, ""]);
}

/**
 * The run was stopped (or timed out): what it waits for from the host, input() through JSPI
 * and each pending request, ends at once, raising KeyboardInterrupt in Python (in JavaScript,
 * a refusal `interrupted`), and so does its time.sleep (see _foxden_sleep), so the run can end
 * with its variables kept. The interrupt signal the den page may also have set (an isolated
 * den) is taken back when a wait ended: KeyboardInterrupt is raised once, where the code
 * waited. (A busy run reads this message only once it waits: the signal, or the restart after
 * the grace, stops it.)
 * @param {import("./protocol").DenToWorkerInterrupt} m
 */
function onInterrupt(m) {
  if (!current || m.id !== current.id) return;
  current.stopped = true;
  let waited = false;
  const w = inputWaiting;
  if (w && w.id === m.id) {
    inputWaiting = null;
    w.resolve([4, ""]);
    waited = true;
  }
  if (endFetches("interrupted", "the run was stopped while it waited for this request")) waited = true;
  try {
    if (pyInterruptAsync && pyInterruptAsync() === true) waited = true;
  } catch (_) {
    /* the run's own machinery failed: the signal or the restart stops it */
  }
  if (waited && interruptBuf) apply(atomicsStore, Atomics, [interruptBuf, 0, 0]);
  post({ t: "interrupted", id: m.id, waited });
}

/** Resolves the requests still pending at the end of a run as aborted. */
/**
 * Resolves every pending request as refused (`aborted` at the end of a run, `interrupted` when
 * it is stopped). Returns whether there was any.
 * @param {string} refused
 * @param {string} message
 */
function endFetches(refused = "aborted", message = "the run ended before the answer came") {
  const any = fetchPending.size > 0;
  for (const [req, p] of fetchPending) {
    fetchPending.delete(req);
    p.resolve(refusedAnswer(p.url, refused, message));
  }
  return any;
}

/**
 * @param {StreamName} stream
 * @param {Uint8Array} bytes
 */
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
  // stdout/stderr order stays exact: a change of stream starts a new part.
  const last = current.parts[current.parts.length - 1];
  if (last && last.stream === stream) last.text += text;
  else if (text) current.parts.push({ stream, text });
  current.held += text.length;
  // The first OUT_BURST chunks after 15 ms without output go at once: a print before code that
  // then computes without pause (no timer fires meanwhile) is not held, nor lost when a timeout
  // or Stop kills the worker. A flood then gets one message per 15 ms (or 8 KiB); only its tail
  // waits (for the timer, the next print, or a wait). Cut: nothing more comes, so what is held
  // goes now (a run killed later would lose it).
  const now = performance.now();
  if (now - current.wrote > 15) current.sent = 0;
  current.wrote = now;
  if (current.truncated || current.held > 8192 || current.parts.length >= MAX_OUT_PARTS || current.sent < OUT_BURST || now - current.last > 15) {
    current.sent++;
    flushOutput();
  } else if (!flushTimer && current.parts.length) flushTimer = realSetTimeout(flushOutput, 16);
  return bytes.length;
}

// --- files ---
/** @param {FS.Stats} st */
function statInfo(st) {
  const mtime = st.mtime instanceof Date ? st.mtime.getTime() : Number(st.mtime);
  return { mtime, size: st.size, ino: st.ino, mode: st.mode };
}

/** @param {string} path */
function fsStat(path) {
  return statInfo(/** @type {PyodideAPI} */ (py).FS.stat(path));
}

// lstat, or null when nothing is at `path`.
/**
 * @param {string} path
 * @returns {FS.Stats | null}
 */
function lstatOrNull(path) {
  try {
    return /** @type {PyodideAPI} */ (py).FS.lstat(path);
  } catch {
    return null;
  }
}

/** @param {string} path */
function removeTree(path) {
  const FS = /** @type {PyodideAPI} */ (py).FS;
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

/**
 * @param {PutFile[]} put
 * @param {string[]} del
 * @param {string[]} readOnly the den's read-only paths (normalized by the host)
 */
function applySync(put, del, readOnly) {
  // The host's own files are not changes of the run: not marked.
  tracking = false;
  try {
    asOwner(() => {
      applySyncUntracked(put, del);
      markReadOnly(put, readOnly);
    });
  } finally {
    tracking = true;
  }
}

// The host owns the den's files: it writes over a file the code made read-only, deletes in a
// folder the code locked, and the scan reads a file the code made unreadable (or found only
// through a locked folder: skipped, its files would look deleted). Emscripten checks the mode
// bits; this lifts the check for the host's own work only.
/**
 * @template T
 * @param {() => T} fn
 * @returns {T}
 */
function asOwner(fn) {
  const FS = /** @type {PyodideAPI} */ (py).FS;
  const before = FS.ignorePermissions;
  FS.ignorePermissions = true;
  try {
    return fn();
  } finally {
    FS.ignorePermissions = before;
  }
}

// An error's text for a message: Emscripten's file system throws ErrnoError objects, with an
// errno and no message (String() gives "[object Object]").
/** @param {any} e */
function errorText(e) {
  try {
    if (e && typeof e === "object" && typeof e.errno === "number") return `file system error ${ERRNO[e.errno] ? ERRNO[e.errno][0] : `errno ${e.errno}`}`;
    return String(e && e.message ? e.message : e);
  } catch {
    return "an error that could not be described"; // e.g. a getter of the code's that throws
  }
}

/**
 * The den's read-only paths: each file placed now that one covers gets mode 0444, and its
 * folders inside a covered folder (and every covered folder that exists) 0555, so an ordinary
 * write, a new file or a deletion there fails at once with PermissionError. Code that changes
 * the mode back gets no further: the host drops its changes to covered paths and puts its own
 * version back before the next run (foxden_core::readonly).
 * @param {PutFile[]} put
 * @param {string[]} readOnly
 */
function markReadOnly(put, readOnly) {
  readOnlyNow = Array.isArray(readOnly) ? readOnly : [];
  if (readOnlyNow.length === 0) return;
  const FS = /** @type {PyodideAPI} */ (py).FS;
  /** @param {string} dir */
  const lockDir = (dir) => {
    const st = lstatOrNull(dir);
    if (st && FS.isDir(st.mode) && (st.mode & 0o777) !== 0o555) FS.chmod(dir, 0o555);
  };
  for (const { path } of put) {
    if (!covered(path)) continue;
    FS.chmod(path, 0o444);
    known.set(path, fsStat(path));
    for (let dir = path.slice(0, path.lastIndexOf("/")); dir && covered(dir); dir = dir.slice(0, dir.lastIndexOf("/"))) {
      lockDir(dir);
    }
  }
  for (const r of readOnly) lockDir(r);
}

// What the modes cannot stop: POSIX lets whoever may write a folder delete or rename what is in
// it, so a covered file (or covered folder) in a folder that is not covered could be deleted,
// renamed or replaced; and a covered path the den has no file at yet has no mode at all, so it
// could be made. Two checks in Emscripten's FS close both, for Python and JavaScript alike:
// - deleting, renaming or replacing a covered file or folder from a folder that is not covered
//   is refused (EACCES, PermissionError) while it is still read-only (0444 / 0555), and so is
//   moving a folder that holds covered files or folders, or moving one into place over them;
// - making a covered path that does not exist, in a folder that is not covered, is refused.
// Inside covered folders their 0555 mode already decides. Code that changes a mode back gets
// its sandbox only, as before: the host drops its changes to covered paths.
/** @type {string[]} the den's read-only paths, as the last run's message gave them */
let readOnlyNow = [];
/** @param {string} p  a read-only path covers `p` (itself, or a folder above it) */
const covered = (p) => readOnlyNow.some((r) => p === r || p.startsWith(r + "/"));
/** @param {string} p @returns {string[]} the read-only paths below `p` */
const coveredBelow = (p) => readOnlyNow.filter((r) => r.startsWith(p === "/" ? "/" : p + "/"));
const EACCES = 2; // Emscripten's errno
function installReadOnlyGuard() {
  const FS = /** @type {PyodideAPI} */ (py).FS;
  /** @param {string} p  covered paths below `p` exist (looked at as the host: a mode cannot hide them) */
  const holdsCovered = (p) => coveredBelow(p).some((r) => asOwner(() => FS.analyzePath(r).exists));
  /** @param {any} dir @param {string} name */
  const pathIn = (dir, name) => {
    const d = FS.getPath(dir);
    return d === "/" ? "/" + name : d + "/" + name;
  };
  // Emscripten's permission checks (an errno, or 0 to allow) and rename, not in Pyodide's FS type.
  const fs = /** @type {{ mayCreate: (dir: any, name: string) => number, mayDelete: (dir: any, name: string, isdir: boolean) => number, rename: (from: string, to: string) => void, ErrnoError: new (errno: number) => Error }} */ (/** @type {unknown} */ (FS));
  // Each check runs Emscripten's first: its error (EEXIST, EISDIR, a mode's EACCES, …) stays the one raised.
  const realMayCreate = fs.mayCreate;
  /** @this {unknown} @param {any} dir @param {string} name */
  fs.mayCreate = function (dir, name) {
    const real = realMayCreate.call(this, dir, name);
    if (real || readOnlyNow.length === 0 || FS.ignorePermissions) return real;
    return covered(pathIn(dir, name)) && !covered(FS.getPath(dir)) ? EACCES : 0;
  };
  const realMayDelete = fs.mayDelete;
  /** @this {unknown} @param {any} dir @param {string} name @param {boolean} isdir */
  fs.mayDelete = function (dir, name, isdir) {
    const real = realMayDelete.call(this, dir, name, isdir);
    if (real || readOnlyNow.length === 0 || FS.ignorePermissions || covered(FS.getPath(dir)) || !covered(pathIn(dir, name))) return real;
    // Still read-only (no write bit): code that gave it one back gets its sandbox only.
    return (FS.lookupNode(dir, name).mode & 0o222) === 0 ? EACCES : 0;
  };
  // A folder moved brings what it holds: moving one that holds covered files or folders, or
  // moving one into place over covered paths, is refused too.
  const realRename = fs.rename;
  /** @this {unknown} @param {string} from @param {string} to */
  fs.rename = function (from, to) {
    if (readOnlyNow.length && !FS.ignorePermissions) {
      const src = absolutePath(FS, from);
      const dest = absolutePath(FS, to);
      /** @type {any} */
      let st = null;
      try {
        st = FS.lstat(from);
      } catch {
        // Emscripten's rename reports it
      }
      if (st && FS.isDir(st.mode) && ((!covered(src) && holdsCovered(src)) || coveredBelow(dest).length > 0)) {
        throw new fs.ErrnoError(EACCES);
      }
    }
    return realRename.call(this, from, to);
  };
}

/**
 * @param {PutFile[]} put
 * @param {string[]} del
 */
function applySyncUntracked(put, del) {
  const FS = /** @type {PyodideAPI} */ (py).FS;
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
    // Only a regular file is written over: a folder, or a symlink the code made (writing
    // through it would change the file it points to), is removed first.
    const existing = lstatOrNull(path);
    if (existing && !FS.isFile(existing.mode)) removeTree(path);
    FS.writeFile(path, data);
    // The host's time, 0 included (a file from encodeSnapshot); now only when none is given.
    const t = typeof mtime === "number" && Number.isFinite(mtime) ? mtime : Date.now();
    FS.utime(path, t, t);
    known.set(path, fsStat(path));
  }
}

/**
 * `p` made absolute (from the working directory) and normal, the way the host names files.
 * @param {PyodideAPI["FS"]} FS @param {string} p
 */
function absolutePath(FS, p) {
  /** @type {string[]} */
  const parts = [];
  for (const seg of (p.startsWith("/") ? p : `${FS.cwd()}/${p}`).split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  return "/" + parts.join("/");
}

// --- which files a run touched ---
// Emscripten's FS reports writes, creations and truncations on open, deletions, renames and new
// folders to FS.trackingDelegate; truncation (doTruncate) and msync() are wrapped too. A run's scan then
// visits only the paths it touched, so its cost does not grow with the number of unchanged
// files. Files the host syncs in are not marked; writes between runs are (they show up in the
// next run). A symlink anywhere makes writes through it
// invisible to this, so once one is made the scan walks every file (by stat) instead.
/** @type {Set<string>} */
const dirty = new Set();
let tracking = false;
let walkAll = false;
function installFsTracking() {
  const FS = /** @type {PyodideAPI} */ (py).FS;
  // The hooks get paths as the code wrote them (`./r.txt`, `../out/m.txt`, `//work/x` after
  // chdir("/")): each is made absolute and normal, the way the host names files. (A symlink
  // makes `..` ambiguous, but then every file is walked anyway.)
  /** @param {unknown} p */
  const abs = (p) => (typeof p === "string" ? absolutePath(FS, p) : null);
  /** @param {unknown} p */
  const mark = (p) => {
    const path = abs(p);
    if (tracking && path) dirty.add(path);
  };
  const td = FS.trackingDelegate;
  td.onWriteToFile = (p) => mark(p);
  td.onOpenFile = (p, flags) => {
    if (flags & (64 | 512)) mark(p); // O_CREAT | O_TRUNC
  };
  td.onDeletePath = (p) => mark(p);
  td.onMovePath = (from, to) => {
    mark(from);
    mark(to);
  };
  td.onMakeDirectory = (p) => mark(p);
  td.onMakeSymlink = () => {
    walkAll = true;
  };
  tracking = true; // from now on, also between runs (such writes show up in the next run)
  // truncate() and ftruncate() both end in doTruncate(stream, node, len).
  const realDoTruncate = FS.doTruncate;
  /** @this {unknown} */
  FS.doTruncate = function (stream, node, len) {
    mark(FS.getPath(node));
    return realDoTruncate.call(this, stream, node, len);
  };
  // Writes through an open file are marked at the file's current path: onWriteToFile and
  // stream.path keep the path the file was opened at, which a rename since made stale.
  // Regular files only: a pipe's or socket's node has no path (getPath would throw inside the
  // write, a fatal error for Pyodide), and ttys (print) need no mark.
  /** @param {any} stream */
  const markStream = (stream) => {
    const node = stream && stream.node;
    if (node && FS.isFile(node.mode)) {
      try {
        mark(FS.getPath(node));
      } catch (_) {
        walkAll = true; // a file we cannot name: find it by walking every file
      }
    }
  };
  const realWrite = FS.write;
  /** @this {unknown} */
  FS.write = function (stream, ...rest) {
    const n = realWrite.call(this, stream, ...rest);
    markStream(stream);
    return n;
  };
  const realMsync = FS.msync;
  /** @this {unknown} */
  FS.msync = function (stream, ...rest) {
    markStream(stream);
    return realMsync.call(this, stream, ...rest);
  };
}

/** @param {string} path */
const underRoots = (path) => ROOTS.some((r) => path === r || path.startsWith(r + "/"));

// A UTF-16 code unit of a surrogate pair standing alone (with the u flag, a pair is one
// astral code point and does not match).
const LONE_SURROGATE = /\p{Cs}/u;
/** Longest path a reply may name (den.js MAX_PATH; the host then keeps at most 1 024 bytes). */
const MAX_PATH_UNITS = 4096;
/** @type {Set<string>} files with such names (or longer paths), noted once and never sent */
const badNames = new Set();

// Most files in one reply's changed or deleted list (den.js MAX_FILES; a den holds at most
// foxden_core::limits::DEFAULT_MAX_FILES, so a run past it could never be kept).
const MAX_REPLY_FILES = 10000;

// Files changed or deleted since the last sync. With tracking, only touched paths are visited
// (a touched folder is walked); otherwise every file is compared by stat, never by content. A
// file written in the same millisecond as its sync could look unchanged by stat alone, so on a
// full walk files synced during the run's start millisecond are always reported; the host drops
// those whose hash did not change.
/** @param {number} runStart */
function scanChanges(runStart) {
  const FS = /** @type {PyodideAPI} */ (py).FS;
  /** @type {ChangedFile[]} */
  const changed = [];
  /** @type {Transferable[]} */
  const transfer = [];
  /** @type {Set<string>} */
  const seen = new Set();
  /** @type {Set<string>} */
  const sent = new Set();
  let overflow = 0; // changed files past MAX_REPLY_FILES
  /** @type {string[]} */
  const unnamed = []; // files first seen with a name the host cannot hold
  /**
   * Reports a file once (a file in a touched folder is also touched itself).
   * @param {string} path
   * @param {FS.Stats} st
   * @param {boolean} force
   */
  const report = (path, st, force) => {
    if (sent.has(path) || (seen.has(path) && !force)) return;
    // A lone surrogate: only JS makes such names (Python's are UTF-8); the host's are UTF-8
    // strings, where two of them would become one name. A path over 4 096 UTF-16 units (folders
    // nest without limit here): a reply holding one is refused whole, with the run's other
    // files. Either is not sent, not known (so never reported deleted), and noted once.
    if (path.length > MAX_PATH_UNITS || LONE_SURROGATE.test(path)) {
      if (!badNames.has(path)) {
        badNames.add(path);
        unnamed.push(path);
      }
      return;
    }
    seen.add(path);
    const now = statInfo(st); // one lookup per file: the lstat above is the stat of a file
    const before = known.get(path);
    if (force || !before || before.mtime !== now.mtime || before.size !== now.size || before.ino !== now.ino || now.mtime >= runStart - 1) {
      if (changed.length >= MAX_REPLY_FILES) {
        overflow++; // counted, not read: these changes cannot be kept (see run)
        sent.add(path);
        known.set(path, now);
        return;
      }
      const data = FS.readFile(path);
      sent.add(path);
      changed.push({ path, data });
      transfer.push(data.buffer);
    }
    known.set(path, now);
  };
  /**
   * Reports the files under `dir`; those the hooks saw written are sent whatever their stat
   * says (a same-size rewrite with its times put back). Symlinked folders are not walked.
   * @param {string} dir
   */
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
      if (FS.isDir(st.mode)) walk(path);
      else if (FS.isFile(st.mode)) report(path, st, dirty.has(path)); // symlinks and devices are not den files
    }
  };
  /** @type {string[]} */
  const deleted = [];
  if (walkAll) {
    for (const root of ROOTS) {
      // A root the code replaced by a symlink is not walked through (it could lead anywhere,
      // "/" included): like any symlink, it is not a den folder, and its known files are gone.
      const st = lstatOrNull(root);
      if (st && FS.isDir(st.mode)) walk(root);
    }
    for (const path of known.keys()) {
      if (!seen.has(path)) {
        deleted.push(path);
        known.delete(path);
      }
    }
  } else {
    // Touched paths that are gone, folders, or no longer files: known files at or under them
    // may be gone (also under a folder that is there again: renamed away, then made anew).
    /** @type {Set<string>} */
    const touched = new Set();
    for (const path of dirty) {
      if (!underRoots(path) && !ROOTS.some((r) => r.startsWith(path + "/"))) continue;
      const st = lstatOrNull(path);
      if (st && FS.isFile(st.mode) && underRoots(path)) {
        // A new file may stand where a folder of known files was (renamed away): those are
        // looked up below too.
        if (!known.has(path)) touched.add(path);
        report(path, st, true);
        continue;
      }
      touched.add(path);
      if (st && FS.isDir(st.mode)) walk(path);
    }
    // Each known file looks up its own ancestors: known files x depth, and nothing when only
    // files were written (the common run).
    if (touched.size) {
      for (const path of known.keys()) {
        if (seen.has(path)) continue;
        let hit = false;
        for (let p = path; p.length > 1 && !hit; p = p.slice(0, p.lastIndexOf("/")) || "/") hit = touched.has(p);
        if (!hit) continue;
        const st = lstatOrNull(path);
        if (!(st && FS.isFile(st.mode))) {
          deleted.push(path);
          known.delete(path);
        }
      }
    }
  }
  dirty.clear();
  return { changed, deleted, transfer, overflow, unnamed };
}

// --- memory cap ---
// Emscripten grows the heap by calling WebAssembly.Memory.prototype.grow from JS; refusing to
// grow past the cap makes malloc fail, which Python reports as MemoryError. The interpreter
// stays usable, so the den's variables survive. (The product sheet's sandbox could use the
// whole 4 GB before failing.)
let memoryCap = 0;
/** @param {number} cap */
function capMemory(cap) {
  if (!cap || memoryCap) return;
  memoryCap = cap;
  const realGrow = WebAssembly.Memory.prototype.grow;
  /** @this {WebAssembly.Memory} */
  WebAssembly.Memory.prototype.grow = function (pages) {
    if (this.buffer.byteLength + pages * 65536 > memoryCap) {
      throw new RangeError(`foxden: memory cap of ${memoryCap} bytes (maxMemoryBytes) reached`);
    }
    return realGrow.call(this, pages);
  };
}

// --- boot ---
/** A wheel the installer refused: names the package (the den page reports it to the host). */
class PackageError extends Error {
  /**
   * @param {string} pkg
   * @param {string} message
   */
  constructor(pkg, message) {
    super(message);
    this.package = pkg;
  }
}

/**
 * Installs the den's wheels into site-packages (den-page/wheels.py checks every wheel fully
 * before writing anything). Runs after the interpreter booted, before any user code. Returns
 * the files it wrote when this was the den page's first install (the den page hands them to
 * later workers as `installed`).
 * @param {PyodideAPI} api
 * @param {Wheel[]} packages
 * @param {boolean} verified an earlier worker of this den page checked the same bytes in full
 * @returns {ChangedFile[] | null}
 */
function installPackages(api, packages, verified) {
  const ns = api.toPy({}); // its own namespace: nothing of the installer stays in user globals
  try {
    api.runPython(WHEELS_PY, { globals: ns, filename: "<foxden-wheels>" });
    const install = ns.get("_foxden_install");
    const out = install(packages, !verified);
    install.destroy();
    const [pkg, second] = out.toJs();
    out.destroy();
    if (pkg !== null && pkg !== undefined) throw new PackageError(String(pkg), String(second));
    if (verified) return null;
    return /** @type {string[]} */ (second).map((path) => ({ path, data: api.FS.readFile(path) }));
  } finally {
    ns.destroy();
  }
}

/**
 * Writes what an earlier worker of this den page installed from the same wheels (it checked them
 * in full, before any user code ran): the same files, without unzipping or checking again.
 * @param {PyodideAPI} api
 * @param {ChangedFile[]} files
 */
function writeInstalled(api, files) {
  const FS = api.FS;
  // Each folder is looked up once: FS.mkdirTree on existing folders throws (and builds an error)
  // per path component, which for ~2000 files costs seconds in Firefox.
  /** @type {Set<string>} */
  const made = new Set();
  /** @param {string} dir */
  const ensureDir = (dir) => {
    if (!dir || made.has(dir)) return;
    ensureDir(dir.slice(0, dir.lastIndexOf("/")));
    if (!lstatOrNull(dir)) FS.mkdir(dir);
    made.add(dir);
  };
  for (const { path, data } of files) {
    ensureDir(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, data);
  }
  api.runPython("import importlib; importlib.invalidate_caches()");
}

/**
 * Unpacks a packed snapshot into `target` by its (from, to, length) copies (checked by the host
 * against the bytes; checked again here so that a bad one fails instead of resuming from half a
 * snapshot), or takes a whole one (`copies` null) of the right length. False when it does not fit.
 * @param {Uint8Array} target the unpacked snapshot's buffer (all zero)
 * @param {Uint8Array} packed
 * @param {number[] | null} copies
 */
function unpackSnapshot(target, packed, copies) {
  if (!Array.isArray(copies)) {
    if (packed.length !== target.length) return false;
    target.set(packed);
    return true;
  }
  if (copies.length % 3 !== 0) return false;
  for (let i = 0; i < copies.length; i += 3) {
    const [from, to, len] = [copies[i], copies[i + 1], copies[i + 2]];
    if (!(from >= 0 && to >= 0 && len >= 0 && from + len <= packed.length && to + len <= target.length)) return false;
    target.set(packed.subarray(from, from + len), to);
  }
  return true;
}

// The warm cache's snapshot for a worker booted before it came (boot.snapshotBytes, no
// snapshot): the den page posts it once, or null when the host had none after all.
/** @type {(m: import("./protocol").DenToWorkerSnapshot | null) => void} */
let onSnapshot = () => {};
/** @type {Promise<import("./protocol").DenToWorkerSnapshot | null>} */
const snapshotComing = new RealPromise((resolve) => {
  onSnapshot = (m) => {
    onSnapshot = () => {};
    resolve(m);
  };
});

/**
 * @param {DenToWorkerBoot} boot
 * @returns {Promise<{ms: number, packagesMs?: number, installed?: ChangedFile[], snapshot?: Uint8Array}>}
 */
async function boot({ role, module, stdlib, lock, interrupt, input, snapshot, copies, snapshotBytes, maxMemoryBytes, packages, verified, installed }) {
  capMemory(maxMemoryBytes);
  inputBuf = input;
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
    if (role === "maker") {
      // A fresh interpreter, booted only to be photographed: no helpers, no user code.
      py = await loadPyodide({ ...options, _makeSnapshot: true });
      return { ms: performance.now() - started, snapshot: py.makeMemorySnapshot() };
    }
    // Restarts resume from the maker's memory snapshot: ~4x faster than booting from scratch.
    // These loader options are Pyodide's private, experimental ones; any failure falls back to
    // a normal boot.
    // Pyodide sizes the memory from the snapshot's length, instantiates, and only then reads the
    // bytes (restoreSnapshot, right after createPyodideModule resolves). So a snapshot that is
    // still on its way (the warm cache's: the den page knew its length) or still packed is
    // handed over as a zeroed buffer of that length, and filled while Pyodide instantiates: the
    // module is returned only once the buffer is full.
    if (snapshot || snapshotBytes > 0) {
      const whole = snapshot && !copies && snapshot.length === snapshotBytes;
      const resume = whole ? snapshot : new Uint8Array(snapshotBytes);
      // Here (whole, or packed: unpacked now), or on its way (unpacked when it comes).
      const filled = whole || (snapshot ? unpackSnapshot(resume, snapshot, copies || null) : snapshotComing.then((m) => Boolean(m && m.snapshot instanceof Uint8Array && unpackSnapshot(resume, m.snapshot, m.copies))));
      /** @param {any} settings */
      const create = async (settings) => {
        const m = await createPyodideModule(settings);
        if (!(await filled)) throw new Error("no snapshot to resume from");
        return m;
      };
      try {
        py = await loadPyodide({ ...options, createPyodideModule: create, _loadSnapshot: resume });
        bootedFrom = "snapshot";
      } catch (_) {
        py = null;
      }
    }
    if (!py) {
      py = await loadPyodide(options);
      bootedFrom = "scratch";
    }
  } finally {
    self.fetch = realFetch;
    WebAssembly.instantiateStreaming = realStreaming;
  }
  // __FOXDEN_PYODIDE_VERSION__: package.json's pin, defined by the build (esbuild --define).
  if (py.version !== __FOXDEN_PYODIDE_VERSION__) throw new Error(`Pyodide core is ${py.version}, expected ${__FOXDEN_PYODIDE_VERSION__}`);
  if (interrupt) py.setInterruptBuffer(interrupt);
  interruptBuf = interrupt;
  py.setStdout({ write: (b) => capture("stdout", b) });
  py.setStderr({ write: (b) => capture("stderr", b) });
  py.globals.set("_foxden_post_display", postDisplay);
  py.globals.set("_foxden_ask_input", askInput);
  py.globals.set("_foxden_can_ask", inputBuf !== null || jspi);
  py.globals.set("_foxden_ask_buffer", inputBuf !== null);
  py.globals.set("_foxden_fetch_js", fetchViaHost);
  py.globals.set("_foxden_jspi", jspi);
  py.globals.set("_foxden_run_network", () => current !== null && current.network);
  // Read by time.sleep between its slices: the den page's interrupt message (read while a
  // JSPI sleep is suspended), or on an isolated den its signal, which Python itself checks only
  // every so many steps; taken here, so that KeyboardInterrupt is raised once, at once.
  py.globals.set("_foxden_run_stopped", () => {
    if (current === null) return false;
    if (interruptBuf && apply(atomicsLoad, Atomics, [interruptBuf, 0]) === 2) {
      apply(atomicsStore, Atomics, [interruptBuf, 0, 0]);
      current.stopped = true;
    }
    return current.stopped === true;
  });
  py.globals.set("_foxden_send_output", flushOutput);
  py.globals.set("_foxden_last_timer", takeLastTimer);
  py.globals.set("_foxden_cancel_timer", cancelTimer);
  // Compiled by the builtin compile(), not runPython's eval_code: eval_code parses to an AST,
  // copies it and compiles that, which for this source costs 5-10x more (~50-200 ms of boot).
  py.globals.set("_foxden_helpers_src", PY_HELPERS);
  py.runPython('exec(compile(_foxden_helpers_src, "<foxden>", "exec"), globals())\ndel _foxden_helpers_src', { filename: "<foxden>" });
  // An interpreter resumed from the memory snapshot starts with the maker's `random` state:
  // every resume would draw the same numbers. Reseeded from the OS (crypto.getRandomValues).
  // (The str hash secret is fixed at start-up and stays the snapshot's.)
  py.runPython("import random\nrandom.seed()\ndel random", { filename: "<foxden>" });
  pyRun = py.globals.get("_foxden_run");
  pyRunSync = py.globals.get("_foxden_run_sync");
  pyInterruptAsync = py.globals.get("_foxden_interrupt_async");
  pyPending = py.globals.get("_foxden_pending_tasks");
  // The den's wheels, before any user code (and before file tracking: they are not den files).
  let packagesMs;
  /** @type {ChangedFile[] | undefined} */
  let wrote;
  if (packages && packages.length) {
    const t = performance.now();
    if (installed && installed.length) writeInstalled(py, installed);
    else wrote = installPackages(py, packages, verified === true) || undefined;
    packagesMs = performance.now() - t;
  }
  installTracking();
  installFsTracking();
  installReadOnlyGuard();
  installConsole();
  installFs();
  return { ms: performance.now() - started, packagesMs, installed: wrote };
}

// --- JavaScript runs ---
// JavaScript code runs in this worker's global scope, beside Python, on the same Emscripten
// file system: its writes are tracked like Python's (run.files), and the den page's timeout,
// output cap and restarts apply unchanged. The host prepares the code
// (foxden_core::javascript::prepare): top-level let/const/class come as `var`, so that they
// persist like `var` and function declarations do. It runs
// - without top-level await or return: by indirect eval (the global scope); the result is the
//   script's completion value (the last expression statement's value);
// - with them: as the body of an async function inside `with (scope)`, where `scope` sends the
//   names the host found declared at top level to the global object, so that they persist too;
//   the result is the value of the last expression statement (its text is the longest tail,
//   from a top-level statement start, that the engine parses as an expression, with a head that
//   still parses), or of a top-level `return`.
// Eval needs 'unsafe-eval' in the den page's CSP: docs/architecture.md says why that opens no
// way out (Python reaches every JS global already; connect-src, script-src and worker-src stay).
const indirectEval = self.eval;
const RealFunction = Function;
const AsyncFunction = /** @type {FunctionConstructor} */ (Object.getPrototypeOf(async () => {}).constructor);
const fnToString = Function.prototype.toString;
/**
 * True if `source` parses as the body of a function made by `Ctor`.
 * @param {FunctionConstructor} Ctor
 * @param {string[]} args
 */
function parses(Ctor, ...args) {
  try {
    new Ctor(...args);
    return true;
  } catch (_) {
    return false;
  }
}

/**
 * A JS value as text for `result` and console output: strings quoted as JSON, containers to
 * depth 2 and 100 entries, cycles as [Circular]. Never throws.
 * @param {unknown} v
 * @param {number} [depth]
 * @param {Set<object>} [seen]
 * @returns {string}
 */
function inspect(v, depth = 0, seen = new Set()) {
  try {
    switch (typeof v) {
      case "string":
        return JSON.stringify(v);
      case "number":
        return Object.is(v, -0) ? "-0" : String(v);
      case "bigint":
        return `${v}n`;
      case "undefined":
      case "boolean":
        return String(v);
      case "symbol":
        return v.toString();
      case "function": {
        const name = v.name || "(anonymous)";
        return /^class\b/.test(apply(fnToString, v, [])) ? `[class ${name}]` : `[Function: ${name}]`;
      }
    }
    if (v === null) return "null";
    const o = /** @type {any} */ (v);
    if (seen.has(o)) return "[Circular]";
    if (o instanceof Error) return `${o.name}: ${o.message}`;
    if (o instanceof Date) return isNaN(o.getTime()) ? "Invalid Date" : o.toISOString();
    if (o instanceof RegExp) return String(o);
    if (o instanceof RealPromise) return "Promise {…}";
    if (o instanceof ArrayBuffer) return `ArrayBuffer { byteLength: ${o.byteLength} }`;
    const isArray = Array.isArray(o);
    if (depth > 2) return isArray ? "[Array]" : "[Object]";
    seen.add(o);
    try {
      /** @param {string[]} parts @param {number} total */
      const list = (parts, total) => parts.join(", ") + (total > parts.length ? `, … ${total - parts.length} more` : "");
      /** @param {unknown} x */
      const sub = (x) => inspect(x, depth + 1, seen);
      if (isArray) return `[${list(o.slice(0, 100).map(sub), o.length)}]`;
      if (ArrayBuffer.isView(o) && !(o instanceof DataView)) {
        const a = /** @type {any} */ (o);
        return `${a.constructor.name}(${a.length}) [${list(Array.from(a.subarray(0, 100), sub), a.length)}]`;
      }
      if (o instanceof Map) return `Map(${o.size}) {${list([...o].slice(0, 100).map(([k, x]) => `${sub(k)} => ${sub(x)}`), o.size)}}`;
      if (o instanceof Set) return `Set(${o.size}) {${list([...o].slice(0, 100).map(sub), o.size)}}`;
      const keys = Object.keys(o);
      const proto = Object.getPrototypeOf(o);
      const ctor = proto && proto !== Object.prototype && typeof proto.constructor === "function" ? `${proto.constructor.name} ` : "";
      if (!keys.length) return `${ctor}{}`;
      const key = (/** @type {string} */ k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));
      return `${ctor}{ ${list(keys.slice(0, 100).map((k) => `${key(k)}: ${sub(o[k])}`), keys.length)} }`;
    } finally {
      seen.delete(o);
    }
  } catch (_) {
    return "[object]"; // a getter or proxy trap threw
  }
}

/**
 * console arguments as one line: strings as they are, other values through inspect.
 * @param {unknown[]} args
 */
const consoleLine = (args) => args.map((a) => (typeof a === "string" ? a : inspect(a))).join(" ") + "\n";

// Whether this run's result or error text was cut (its reply is then `truncated`).
let clipped = false;
/**
 * `text` cut at the run's output cap (`cap` UTF-16 units, never half a surrogate pair): a long
 * `repr()` or message is cut, as the output is, not refused by the den page as a malformed reply
 * (which would lose the run's files).
 * @param {string | null} text
 * @param {number} cap
 */
function clipText(text, cap) {
  if (text === null || text.length <= cap) return text;
  clipped = true;
  const end = cap > 0 && (text.charCodeAt(cap - 1) & 0xfc00) === 0xd800 ? cap - 1 : cap;
  return text.slice(0, end);
}

/**
 * The run's error for what the code threw; texts cut at the run's output cap (the den page
 * refuses longer ones).
 * @param {unknown} e
 * @param {number} cap
 * @returns {import("./protocol").RunError}
 */
function jsError(e, cap) {
  try {
    const err = /** @type {any} */ (e);
    const isError = err instanceof Error || (err !== null && typeof err === "object" && typeof err.name === "string" && typeof err.message === "string");
    const type = isError ? String(err.name).slice(0, 256) : "Uncaught";
    const message = /** @type {string} */ (clipText(isError ? String(err.message) : inspect(e), cap));
    return { kind: "javascript", type, message, traceback: isError ? /** @type {string} */ (clipText(jsTraceback(err, type, message), cap)) : "" };
  } catch {
    // A thrown value that throws when looked at (a Proxy's traps, a getter): the run still ends
    // as its error, with its output and files, not as a crash of the worker.
    return { kind: "javascript", type: "Uncaught", message: "a value that could not be described", traceback: "" };
  }
}

// The lines the async-function wrapper adds before the body (differs between engines).
let headerLines = -1;
/** @param {string} stack @returns {{name: string, line: number, col: number}[]} */
function userFrames(stack) {
  const frames = [];
  for (const l of String(stack).split("\n")) {
    // Chromium: "at f (eval at runJavascript (blob:…), <anonymous>:2:9)"; Firefox:
    // "f@blob:… line 9 > eval:2:9" (or "> Function", "> AsyncFunction").
    const m = /<anonymous>:(\d+):(\d+)\)?$/.exec(l) || /> (?:eval|Function|AsyncFunction):(\d+):(\d+)$/.exec(l);
    if (!m) continue;
    const name = (/^\s*at (?:async )?([^\s(]+) \(/.exec(l) || /^([^@]*)@/.exec(l) || [])[1] || "";
    frames.push({ name: name === "eval" || name === "anonymous" ? "" : name, line: Number(m[1]), col: Number(m[2]) });
  }
  return frames;
}
/** @param {any} err @param {string} type @param {string} message */
function jsTraceback(err, type, message) {
  const inAsync = err && err[ASYNC_MARK] === true;
  const lines = userFrames(err.stack).map((f) => {
    const line = inAsync && headerLines > 0 ? f.line - headerLines : f.line;
    return `  at ${f.name || "<js>"} (line ${line}, column ${f.col})`;
  });
  return [`${type}: ${message}`, ...lines].join("\n");
}
const ASYNC_MARK = Symbol("foxden async run");

/**
 * Runs a JavaScript run's code. Never throws: the code's errors become `error`.
 * @param {DenToWorkerRun} msg
 * @returns {Promise<{result: string | null, error: import("./protocol").RunError | null}>}
 */
async function runJavascript(msg) {
  const code = msg.code;
  const prep = msg.js || { names: [], functions: [], splits: [0], topReturn: false, topAwait: false };
  // A top-level declaration becomes a global property: one the worker's global object keeps
  // read-only (`undefined`, `NaN`, `Infinity`, …) would silently keep its old value.
  const stuck = prep.names.find(readOnlyGlobal);
  if (stuck !== undefined) {
    const message = `${stuck} is a read-only global of the den's worker: a top-level declaration cannot change it; pick another name (or declare it inside a block)`;
    return { result: null, error: { kind: "javascript", type: "SyntaxError", message, traceback: `SyntaxError: ${message}` } };
  }
  // The run's vars (JSON text the host checked: identifiers, not reserved, no dunders) become
  // globals first, as top-level `var`s with those values would (own properties of the global
  // object: one on its prototype, such as `name`, is shadowed). Through intrinsics captured at
  // start: an earlier run may have replaced JSON or Object.
  if (typeof msg.vars === "string") {
    try {
      const vars = objectEntries(jsonParse(msg.vars));
      const fixed = vars.find(([name]) => readOnlyGlobal(name));
      if (fixed !== undefined) throw new TypeError(`${fixed[0]} is a read-only global of the den's worker: vars cannot set it; pick another name`);
      for (const [name, value] of vars) defineProperty(globalScope, name, { value, writable: true, enumerable: true, configurable: true });
    } catch (e) {
      return { result: null, error: jsError(e, msg.maxOutputBytes) };
    }
  }
  let value;
  try {
    // Code with top-level await (or return) runs as an async body even when it also parses
    // as a plain one (`await (p)` there would call a function named `await`).
    if (!prep.topReturn && !prep.topAwait && parses(RealFunction, code)) {
      value = indirectEval(code);
    } else if (parses(AsyncFunction, code)) {
      value = await runAsyncBody(code, prep);
    } else {
      // Plain code after all (an `await` that is a name), or the SyntaxError, with the
      // engine's message.
      value = indirectEval(code);
    }
  } catch (e) {
    return { result: null, error: jsError(e, msg.maxOutputBytes) };
  }
  if (value === undefined) return { result: null, error: null };
  try {
    return { result: inspect(value), error: null };
  } catch {
    return { result: "(a value that could not be described)", error: null };
  }
}

/**
 * True if a global `var k = …` would not change `k`: an own read-only property of the global
 * object (`undefined`, `NaN`, `Infinity`, …). One on a prototype (`name`, `location`) is shadowed
 * by the declaration, as in a browser.
 * @param {string} k
 */
function readOnlyGlobal(k) {
  const d = getOwnDescriptor(globalScope, k);
  return d !== undefined && (d.get ? !d.set : d.writable === false);
}

/**
 * Code with top-level await or return, as an async function body (see above).
 * @param {string} code
 * @param {import("./protocol").JsCode} prep
 */
async function runAsyncBody(code, prep) {
  if (headerLines < 0) {
    // Where the body's first line lands in the engine's line numbers.
    const probe = await new AsyncFunction("a", "b", "with (a) { throw new Error() }")({}, null).catch((/** @type {any} */ e) => e);
    headerLines = (userFrames(probe && probe.stack)[0] || { line: 1 }).line - 1;
  }
  // The last expression statement: the longest tail that is an expression (among the last 64
  // statement starts, so that a long script is not parsed again and again).
  let body = code;
  let best = -1;
  for (let i = prep.splits.length - 1; i >= 0 && i >= prep.splits.length - 64; i--) {
    const tail = code.slice(prep.splits[i]).replace(/[\s;]+$/, "");
    if (!tail || /^(?:function|class|async\s+function|var|let|const|import|export|if|for|while|do|try|switch|return|throw|break|continue)\b|^\{/.test(tail)) {
      if (best >= 0) break;
      continue;
    }
    if (parses(AsyncFunction, `return (${tail}\n);`)) best = i;
    else if (best >= 0) break;
  }
  if (best >= 0) {
    const split = prep.splits[best];
    const withReturn = `${code.slice(0, split)}return (${code.slice(split).replace(/[\s;]+$/, "")}\n);`;
    if (parses(AsyncFunction, withReturn)) body = withReturn;
  }
  const names = new Set(prep.names);
  const scope = new Proxy(Object.create(null), {
    has: (_, k) => typeof k === "string" && names.has(k),
    get: (_, k) => (k === Symbol.unscopables ? undefined : /** @type {any} */ (self)[k]),
    set: (_, k, v) => {
      /** @type {any} */ (self)[k] = v;
      return true;
    },
  });
  // Top-level function declarations are hoisted to the start of the block: publish them there.
  const publish = prep.functions.filter((f) => /^[A-Za-z_$][\w$]*$/.test(f)).map((f) => `__foxden_global.${f} = ${f};`).join(" ");
  const fn = new AsyncFunction("__foxden_scope", "__foxden_global", `with (__foxden_scope) { ${publish} ${body}\n}`);
  try {
    return await fn(scope, self);
  } catch (e) {
    if (e !== null && typeof e === "object") {
      try {
        Object.defineProperty(e, ASYNC_MARK, { value: true });
      } catch (_) {
        /* frozen */
      }
    }
    throw e;
  }
}

// console.log/info/debug/dir → stdout, console.warn/error/trace → stderr, during a run (also
// Python's js.console). Installed once after boot; outside a run the output is dropped.
function installConsole() {
  const c = /** @type {any} */ (self.console);
  /** @type {[string, StreamName][]} */
  const routes = [["log", "stdout"], ["info", "stdout"], ["debug", "stdout"], ["dir", "stdout"], ["warn", "stderr"], ["error", "stderr"], ["trace", "stderr"]];
  for (const [name, stream] of routes) {
    c[name] = (/** @type {unknown[]} */ ...args) => {
      if (current) capture(stream, encoder.encode(consoleLine(args)));
    };
  }
}

// The `fs` global of JavaScript runs: the den's files (/drop, /out, /work; relative paths are
// under /work), through the same file system Python uses. Every function returns a promise.
class FsError extends Error {
  /** @param {string} message @param {string} code */
  constructor(message, code) {
    super(message);
    this.name = "FsError";
    this.code = code;
  }
}
const ERRNO = /** @type {Record<number, [string, string]>} */ ({ 2: ["EACCES", "permission denied (read-only)"], 63: ["EPERM", "operation not permitted"], 20: ["EEXIST", "it exists"], 31: ["EISDIR", "it is a folder"], 44: ["ENOENT", "no such file or folder"], 54: ["ENOTDIR", "not a folder"], 55: ["ENOTEMPTY", "the folder is not empty"] });
/**
 * The absolute den path of `p`, or an FsError.
 * @param {string} op @param {unknown} p
 */
function denPath(op, p) {
  if (typeof p !== "string" || p === "") throw new TypeError(`fs.${op}: the path must be a non-empty string`);
  if (LONE_SURROGATE.test(p)) throw new FsError(`fs.${op}: ${JSON.stringify(p)} is not valid Unicode (a lone surrogate): the host could not name it`, "EINVAL");
  const parts = [];
  for (const seg of (p.startsWith("/") ? p : `/work/${p}`).split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  const abs = "/" + parts.join("/");
  if (!underRoots(abs)) throw new FsError(`fs.${op}: ${p} is not a den path (the den's files are under /drop, /out and /work)`, "EPERM");
  return abs;
}
/**
 * Runs one file system call; Emscripten's errors become FsErrors that name the path.
 * @template T @param {string} op @param {string} path @param {() => T} fn @returns {T}
 */
function fsCall(op, path, fn) {
  try {
    return fn();
  } catch (e) {
    const err = /** @type {any} */ (e);
    if (err instanceof FsError || err instanceof TypeError) throw err;
    const [code, why] = ERRNO[err && err.errno] || ["EIO", String(err && err.message ? err.message : err)];
    throw new FsError(`fs.${op}: ${path}: ${why}`, code);
  }
}
function installFs() {
  const FS = /** @type {PyodideAPI} */ (py).FS;
  const fs = {
    /** @param {string} path @param {string} [encoding] */
    async readFile(path, encoding) {
      const abs = denPath("readFile", path);
      if (encoding !== undefined && encoding !== "utf-8" && encoding !== "utf8") throw new TypeError(`fs.readFile: encoding must be "utf-8" or absent (bytes), not ${inspect(encoding)}`);
      const data = fsCall("readFile", abs, () => FS.readFile(abs));
      return encoding ? new TextDecoder().decode(data) : data;
    },
    /** @param {string} path @param {string | ArrayBuffer | ArrayBufferView} data */
    async writeFile(path, data) {
      const abs = denPath("writeFile", path);
      /** @type {Uint8Array} */
      let bytes;
      if (typeof data === "string") bytes = encoder.encode(data);
      else if (data instanceof ArrayBuffer) bytes = new Uint8Array(data);
      else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      else throw new TypeError("fs.writeFile: data must be a string, an ArrayBuffer or a typed array");
      if (ROOTS.includes(abs)) throw new FsError(`fs.writeFile: ${abs}: it is a folder`, "EISDIR");
      fsCall("writeFile", abs, () => {
        FS.mkdirTree(abs.slice(0, abs.lastIndexOf("/")));
        FS.writeFile(abs, bytes);
      });
    },
    /** @param {string} [dir] */
    async list(dir = "/work") {
      const abs = denPath("list", dir);
      return fsCall("list", abs, () => FS.readdir(abs).filter((n) => n !== "." && n !== "..").sort());
    },
    /** @param {string} path */
    async exists(path) {
      return lstatOrNull(denPath("exists", path)) !== null;
    },
    /** @param {string} path */
    async stat(path) {
      const abs = denPath("stat", path);
      const st = fsCall("stat", abs, () => FS.stat(abs));
      return { size: st.size, mtimeMs: statInfo(st).mtime, isFile: FS.isFile(st.mode), isDirectory: FS.isDir(st.mode) };
    },
    /** @param {string} path */
    async mkdir(path) {
      const abs = denPath("mkdir", path);
      fsCall("mkdir", abs, () => FS.mkdirTree(abs));
    },
    /** @param {string} path */
    async remove(path) {
      const abs = denPath("remove", path);
      if (ROOTS.includes(abs)) throw new FsError(`fs.remove: ${abs} is a root of the den and cannot be removed`, "EPERM");
      if (!lstatOrNull(abs)) throw new FsError(`fs.remove: ${abs}: no such file or folder`, "ENOENT");
      fsCall("remove", abs, () => removeTree(abs));
    },
  };
  Object.defineProperty(self, "fs", { value: Object.freeze(fs), writable: true, configurable: true, enumerable: false });
  installFoxdenJs();
}

/** What `foxden.fetch` throws in JavaScript when the host refuses (or the request fails). */
class JsFetchError extends Error {
  /** @param {string} reason @param {string} message */
  constructor(reason, message) {
    super(`foxden.fetch refused (${reason}): ${message}`);
    this.name = "FetchError";
    this.reason = reason;
  }
}

/**
 * The `foxden` global of JavaScript runs: `await foxden.fetch(url, { method, headers, body })`,
 * made by the host page under the den's network options, as Python's `foxden.fetch`. Resolves
 * `{ url, status, ok, headers (lower-case names), bytes(), text(), json() }`; a refusal throws a
 * FetchError with `.reason` (the request's refusedBecause).
 */
function installFoxdenJs() {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const foxden = {
    /**
     * @param {string} url
     * @param {{method?: string, headers?: Record<string, string> | [string, string][], body?: string | Uint8Array | ArrayBuffer | null}} [init]
     */
    async fetch(url, init) {
      // As the web's fetch(): an absent or null init is no options; anything else must be an object.
      if (init == null) init = {};
      else if (typeof init !== "object") throw new TypeError("foxden.fetch: the second argument must be an object { method, headers, body }");
      const given = init.headers == null ? [] : Array.isArray(init.headers) ? init.headers : Object.entries(init.headers);
      const headers = JSON.stringify(given.map((h) => [String(h[0]), String(h[1])]));
      const raw = init.body;
      const body = raw == null ? undefined : typeof raw === "string" ? encoder.encode(raw) : raw instanceof ArrayBuffer ? new Uint8Array(raw) : raw;
      if (body !== undefined && !(body instanceof Uint8Array)) throw new TypeError("foxden.fetch: body must be a string, a Uint8Array or an ArrayBuffer");
      const r = await fetchViaHost(String(url), String(init.method ?? "GET"), headers, body);
      if (r.refused !== undefined) throw new JsFetchError(r.refused, r.message);
      /** @type {Record<string, string>} */
      const names = {};
      for (const [name, value] of r.headers) names[name.toLowerCase()] = value;
      const bytes = /** @type {Uint8Array} */ (r.body);
      return Object.freeze({
        url: r.url,
        status: /** @type {number} */ (r.status),
        ok: /** @type {number} */ (r.status) >= 200 && /** @type {number} */ (r.status) < 300,
        headers: Object.freeze(names),
        bytes: () => bytes.slice(),
        text: () => decoder.decode(bytes),
        json: () => JSON.parse(decoder.decode(bytes)),
      });
    },
    FetchError: JsFetchError,
  };
  Object.defineProperty(self, "foxden", { value: Object.freeze(foxden), writable: true, configurable: true, enumerable: false });
  Object.defineProperty(self, "fetch", { value: brokeredFetch, writable: true, configurable: true, enumerable: false });
  // Pyodide's pyodide.http.pyfetch takes `fetch` from `js` when it is first imported, which is
  // after this: boot imports nothing of pyodide.http (neither does the wheel installer), and no
  // user code has run yet.
}

const RealRequest = self.Request;
const RealResponse = self.Response;

/**
 * The worker's `fetch`: the host-made request of `foxden.fetch` (allowlist, methods, rate,
 * sizes, `run.requests`), answered as a web Response, so that code written for fetch(), and
 * Pyodide's `pyodide.http.pyfetch`, which calls it, work on the den's allowed URLs. The den
 * page's CSP (connect-src 'none') blocks the browser's own fetch either way. A refusal is a
 * TypeError, as a network error is, with `.reason` (the request's refusedBecause).
 * @param {RequestInfo | URL} input
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
async function brokeredFetch(input, init) {
  // The browser's Request parses the arguments as fetch() does (method, headers, any body).
  const req = new RealRequest(input, init ?? undefined);
  // The host checks no Subresource Integrity: a request that asks for it is refused, not
  // answered unchecked.
  if (req.integrity) throw new TypeError("fetch: integrity is not supported in a den (the host does not check it)");
  const signal = req.signal;
  if (signal.aborted) throw signal.reason;
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : new Uint8Array(await req.arrayBuffer());
  if (signal.aborted) throw signal.reason;
  const asked = fetchViaHost(req.url, req.method, JSON.stringify([...req.headers]), body);
  const r = await new RealPromise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    asked.then((a) => {
      signal.removeEventListener("abort", onAbort);
      resolve(a);
    });
  });
  if (r.refused !== undefined) {
    const e = new TypeError(`fetch refused by foxden (${r.refused}): ${r.message}`);
    /** @type {any} */ (e).reason = r.refused;
    throw e;
  }
  const status = /** @type {number} */ (r.status);
  if (!(status >= 200 && status <= 599)) throw new TypeError(`fetch: the answer's status ${status} cannot be a Response`);
  const empty = req.method === "HEAD" || status === 204 || status === 205 || status === 304;
  return withUrl(new RealResponse(empty ? null : r.body, { status, headers: r.headers }), r.url);
}

/** A constructed Response has no url of its own: this one's, kept by its clones. @param {Response} res @param {string} url @returns {Response} */
function withUrl(res, url) {
  const clone = res.clone;
  Object.defineProperty(res, "url", { value: url });
  Object.defineProperty(res, "clone", { value: () => withUrl(apply(clone, res, []), url) });
  return res;
}

// --- run ---
/** @param {DenToWorkerRun} msg */
async function run(msg) {
  const started = performance.now();
  /** @type {WorkerToDenDone} */
  const reply = {
    t: "done",
    id: msg.id,
    result: null,
    error: null,
    truncated: false,
    changed: [],
    deleted: [],
    tooManyFiles: 0,
    leftover: false,
    durationMs: 0,
  };
  if (fatal) {
    reply.error = { kind: "crashed", type: "FatalError", message: fatal, traceback: "" };
    post(reply);
    return;
  }
  try {
    applySync(msg.put, msg.del, msg.readOnly);
  } catch (e) {
    reply.error = { kind: "storage", type: "SyncError", message: `could not place files in the sandbox: ${errorText(e)}`, traceback: "" };
    reply.leftover = true; // the worker's files are unknown now: restart it
    post(reply);
    return;
  }
  const runStart = Date.now();
  // The first OUT_BURST chunks after a quiet spell are sent at once; under a flood, at most one
  // message every 15 ms or 8 KiB.
  current = { id: msg.id, used: 0, cap: msg.maxOutputBytes, truncated: false, parts: [], held: 0, last: 0, wrote: 0, sent: 0, displayed: 0, displays: 0, displayCut: false, network: msg.network === true };
  decoders.stdout = new TextDecoder();
  decoders.stderr = new TextDecoder();
  clipped = false;
  if (msg.lang === "javascript") {
    // JavaScript runs in this worker's global scope, on the same files (see runJavascript); it
    // catches everything the code throws. Everything after this (leftovers, output, files) is
    // the same for both languages.
    const js = await runJavascript(msg);
    reply.result = clipText(js.result, msg.maxOutputBytes);
    reply.error = js.error;
  } else try {
    // undefined, not null: Pyodide passes JS null to Python as JsNull, not None.
    const stdin = typeof msg.stdin === "string" ? msg.stdin : undefined;
    const interactive = msg.interactive === true;
    const vars = typeof msg.vars === "string" ? msg.vars : undefined;
    // An interactive run without an input buffer, and a run on a den with network, are
    // entered with stack switching (JSPI), so that input() and urllib.request can suspend
    // them until the host's answer comes (and a stop can end their waits and their
    // time.sleep: the worker reads messages while they are suspended). Other runs are plain:
    // faster to enter, and independent of the scheduler Pyodide's JSPI machinery uses (which
    // reads globals the code may replace).
    const first = ((interactive && !inputBuf) || msg.network === true) && jspi ? await pyRunSync.callPromising(msg.code, stdin, interactive, vars) : pyRunSync(msg.code, stdin, interactive, vars);
    const out = first ?? (await pyRun(msg.code, stdin, interactive));
    const [result, err] = out.toJs();
    out.destroy();
    reply.result = clipText(result ?? null, msg.maxOutputBytes);
    if (err) {
      const [type, message, traceback] = [err[0], err[1], err[2]].map((t) => clipText(typeof t === "string" ? t : String(t), msg.maxOutputBytes));
      reply.error = { kind: "python", type: /** @type {string} */ (type).slice(0, 256), message: /** @type {string} */ (message), traceback: /** @type {string} */ (traceback) };
    }
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
    endRunResources();
    let tasks = pendingTaskCount(true);
    if (tasks > 0 || leftoverCount() > 0) {
      const deadline = performance.now() + msg.killGraceMs;
      while (performance.now() < deadline) {
        await (soon > 0 ? nextTurn() : sleep(5));
        endRunResources();
        tasks = pendingTaskCount(false);
        if (tasks === 0 && leftoverCount() === 0) break;
      }
      if (tasks > 0 || leftoverCount() > 0) reply.leftover = true;
    }
  }
  endFetches();
  if (inputWaiting) {
    inputWaiting.resolve([3, "the run ended"]);
    inputWaiting = null;
  }
  /** @type {ReturnType<typeof scanChanges> | null} */
  let scan = null;
  // Also after a fatal error of the interpreter: the file system is plain JavaScript state, and
  // what the run wrote before it failed is kept (this worker is replaced all the same).
  try {
    scan = asOwner(() => scanChanges(runStart));
  } catch (e) {
    // E.g. a file too big to copy out of the sandbox. The output is still sent below; this
    // worker's files are unknown now, so it is replaced and the host re-sends its files.
    const why = `the run's file changes were not kept: they could not be read (${errorText(e)}); the worker was restarted`;
    if (reply.error === null) reply.error = { kind: "storage", type: "StorageError", message: why, traceback: "" };
    else capture("stderr", encoder.encode(`foxden: ${why}\n`));
  }
  if (fatal) reply.leftover = true;
  const transfer = [];
  if (!scan) {
    reply.leftover = true;
  } else if (scan.overflow || scan.deleted.length > MAX_REPLY_FILES) {
    // More changes than a den can hold: none is sent, only their number (the host refuses
    // them as it refuses a commit over maxFiles, and says so), and this worker, whose files now
    // differ from the host's, is replaced (the host re-sends its files to the next one).
    reply.tooManyFiles = Math.max(scan.changed.length + scan.overflow, scan.deleted.length);
    reply.leftover = true;
  } else {
    reply.changed = scan.changed;
    reply.deleted = scan.deleted;
    transfer.push(...scan.transfer);
  }
  await reportUnhandled();
  for (const path of scan ? scan.unnamed : []) {
    const why = path.length > MAX_PATH_UNITS ? `its path is ${path.length} characters long (a den path is at most 1024 bytes)` : "its name is not valid Unicode (a lone surrogate)";
    const named = path.length > 200 ? `${JSON.stringify(path.slice(0, 200))}…` : JSON.stringify(path);
    capture("stderr", encoder.encode(`foxden: ${named} was not kept: ${why}\n`));
  }
  flushOutput();
  reply.truncated = current.truncated || current.displayCut || clipped;
  clipped = false;
  current = null;
  reply.durationMs = performance.now() - started;
  post(reply, transfer);
}

// The boot message comes first, before any user code can run; it carries the key. Then runs,
// fetch replies and the warm snapshot, handled one run at a time. Only trusted events count:
// user code can dispatch synthetic ones on this global, but only the den page can post to it.
let queue = Promise.resolve();
/** @param {DenToWorkerRun} m */
const enqueue = (m) => {
  const ran = apply(promiseThen, queue, [() => run(m)]);
  queue = apply(promiseThen, ran, [
    undefined,
    (/** @type {unknown} */ e) => {
      // A fault in this script itself (not in user code): report it; the den page restarts us.
      post({ t: "done", id: m.id, result: null, error: { kind: "crashed", type: "WorkerError", message: errorText(e), traceback: "" }, truncated: false, changed: [], deleted: [], tooManyFiles: 0, leftover: true, durationMs: 0 });
    },
  ]);
};
self.addEventListener(
  "message",
  (event) => {
    if (!event.isTrusted) return;
    const data = apply(eventData, event, []);
    if (!data || typeof data !== "object") return;
    // A copy of its own fields, made now: user code's message listeners (called after this one)
    // get the same object and may change it while a run still reads it (after its awaits).
    /** @type {import("./protocol").DenToWorker} */
    const m = { ...data };
    if (!key) {
      if (m.t === "boot" && typeof m.key === "string" && m.key) onBoot(m);
      return;
    }
    // Answers to foxden.fetch are handled at once (the run that asked is waiting for them).
    if (m.t === "fetch-reply") return onFetchReply(m);
    if (m.t === "input-reply") return onInputReply(m);
    if (m.t === "interrupt") return onInterrupt(m);
    if (m.t === "snapshot") return onSnapshot(m);
    if (m.t === "run") enqueue(m);
  },
  true,
);
/** @param {DenToWorkerBoot} msg */
function onBoot(msg) {
  key = msg.key;
  queue = queue.then(async () => {
    try {
      const booted = await boot(msg);
      if (msg.role === "maker") post({ t: "snapshot", ms: booted.ms, snapshot: /** @type {Uint8Array} */ (booted.snapshot) }, [/** @type {Uint8Array} */ (booted.snapshot).buffer]);
      else {
        const files = booted.installed || [];
        const msg = { t: /** @type {const} */ ("booted"), ms: booted.ms, from: /** @type {"scratch" | "snapshot"} */ (bootedFrom), packagesMs: booted.packagesMs };
        post(files.length ? { ...msg, installed: files } : msg, files.map((f) => f.data.buffer));
      }
    } catch (e) {
      if (e instanceof PackageError) post({ t: "boot-error", message: e.message, package: e.package });
      else post({ t: "boot-error", message: String(e && e.stack ? e.stack : e) });
    }
  });
}
// A promise rejected with nothing to handle it during a run (a JavaScript run's `main()` called
// without await, an async Python function a JS timer called) is the run's error output, as an
// uncaught exception is; it does not reach the console. An interrupted async run can leave a
// rejected promise of its own behind (KeyboardInterrupt): that one is not the code's error.
// Reported when the run ends, unless a handler came meanwhile (`rejectionhandled`: a promise
// awaited later in a loop, say).
/** @type {Map<Promise<unknown>, unknown>} */
const unhandled = new Map();
self.addEventListener("rejectionhandled", (e) => {
  unhandled.delete(e.promise);
});
self.addEventListener("unhandledrejection", (e) => {
  e.preventDefault();
  if (!py || !current || current.stopped || unhandled.size >= 100) return;
  unhandled.set(e.promise, e.reason);
});
/** Writes the run's rejections that nothing handled to its stderr (see above), after a task:
 * `rejectionhandled` for a handler the run's last step added comes as a task of its own. */
async function reportUnhandled() {
  if (!unhandled.size) return;
  await new Promise((res) => realSetTimeout(res, 1));
  const reasons = [...unhandled.values()];
  unhandled.clear();
  if (!current || current.stopped) return;
  for (const reason of reasons) reportRejection(reason);
}
/** @param {any} reason */
function reportRejection(reason) {
  let type = "";
  try {
    type = reason && typeof reason === "object" ? String(reason.type || "") : "";
  } catch {
    /* a getter of the code's that throws */
  }
  if (type === "KeyboardInterrupt") return;
  let name = "";
  try {
    name = reason instanceof Error && reason.name !== "PythonError" ? `${reason.name}: ` : "";
  } catch {
    /* as above */
  }
  capture("stderr", encoder.encode(`Uncaught (in promise) ${name}${errorText(reason)}\n`));
}
// An exception nothing caught (a timer's or callback's, in JavaScript or through Python's js
// module) once the interpreter is up is the run's error output, not a crash of this worker
// (the den page would restart it and the run's files and variables would be lost). Before
// that, it is a failure of this script and reaches the den page as one.
self.addEventListener("error", (e) => {
  if (!py) return;
  e.preventDefault();
  // (Chromium's message starts with "Uncaught " already.)
  if (current) capture("stderr", encoder.encode(`Uncaught ${String(e.message || "error").replace(/^Uncaught /, "")}\n`));
});
