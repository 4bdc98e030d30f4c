// foxden den page script. Inlined into den.html by the build and allowed there by its SHA-256
// only: the page's CSP names no URL as a script source, so nothing can load code from anywhere.
//
// The den page: (1) accepts one MessagePort from its parent, once; (2) refuses to start unless
// its origin is opaque and no extension API is reachable; (3) compiles the Pyodide wasm it is
// handed, and starts the worker from the string below (a Blob URL: an opaque origin cannot
// start a worker from a URL); (4) relays runs, enforces run timeouts by killing and restarting
// the worker, and restarts it when a run leaves tasks or timers alive.
(() => {
  "use strict";
  // Replaced by the build with the esbuild bundle of worker.js + Pyodide's loader (a JS string).
  const WORKER_SOURCE = __FOXDEN_WORKER_SOURCE__;
  // Pyodide probes for a classic worker with importScripts("data:...") and refuses to run in
  // one; under this page's CSP the probe would also log a violation. Our worker is classic
  // (Chromium refuses module workers from blob: in an opaque origin) but loads nothing by URL,
  // so importScripts is replaced by a function that refuses. Real script loads (through the
  // prototype's copy) stay refused by the CSP, whose script-src has no URL source.
  const PRELUDE = 'self.importScripts = function () { throw new TypeError("foxden: importScripts is disabled in the sandbox"); };\n';

  // den.html inlines this script; den-ext.html (extensions only) loads it as den/den.js through
  // script-src 'self'. 'self' is safe only where it means an extension's packaged files: served
  // from a website it would be that website's server, and the worker could load code from it.
  const LOADED_BY_URL = Boolean(document.currentScript && document.currentScript.src);

  function isolationProblem() {
    if (LOADED_BY_URL && !location.protocol.endsWith("-extension:")) return `den-ext.html is for extensions, but it was served from ${location.protocol}//${location.host}; a website must use den.html (no URL is a script source there)`;
    if (self.origin !== "null") return `the den page's origin is ${self.origin}, not opaque (is the iframe sandboxed without allow-same-origin?)`;
    try {
      if (typeof browser !== "undefined" && browser && browser.runtime) return "the extension API `browser.runtime` is reachable";
    } catch (_) {
      /* access refused: fine */
    }
    try {
      if (typeof chrome !== "undefined" && chrome && chrome.runtime && chrome.runtime.id) return "the extension API `chrome.runtime` is reachable";
    } catch (_) {
      /* access refused: fine */
    }
    return null;
  }

  let port = null;
  let module = null; // the compiled Pyodide wasm, posted to every new worker
  let snapshot = null; // memory snapshot of a fresh interpreter, for fast restarts
  let maxMemoryBytes = 0; // cap on each worker's WebAssembly memory (0: none)
  let stdlib = null; // python_stdlib.zip bytes (copied to every new worker)
  let lock = null; // pyodide-lock.json text
  let worker = null;
  let workerReady = null; // promise: resolves when the current worker booted
  let inflight = null; // {id, timer, resolve} of the run the worker is executing
  const queue = []; // runs waiting for the worker
  let generation = 0;
  // When this page is cross-origin isolated (host page with COOP + COEP, iframe allowed
  // "cross-origin-isolated"), a SharedArrayBuffer lets a timeout interrupt Python (SIGINT ->
  // KeyboardInterrupt) without killing the worker, so Python variables survive. The worker is
  // killed only if the interrupt does not end the run within INTERRUPT_GRACE_MS.
  const interrupt =
    self.crossOriginIsolated === true && typeof SharedArrayBuffer === "function"
      ? new Int32Array(new SharedArrayBuffer(4))
      : null;
  const INTERRUPT_GRACE_MS = 1000;

  const send = (msg, transfer) => port.postMessage(msg, transfer || []);

  function startWorker() {
    const gen = ++generation;
    const url = URL.createObjectURL(new Blob([PRELUDE, WORKER_SOURCE], { type: "text/javascript" }));
    const w = new Worker(url); // classic: Chromium refuses module workers from blob: in an opaque origin
    URL.revokeObjectURL(url);
    worker = w;
    workerReady = new Promise((resolve, reject) => {
      w.onmessage = (e) => {
        const msg = e.data;
        if (msg.t === "booted") {
          if (msg.snapshot) snapshot = msg.snapshot; // kept for every later restart
          resolve(msg.ms);
        }
        else if (msg.t === "boot-error") reject(new Error(msg.message));
        else if (gen === generation) fromWorker(msg);
      };
      w.onerror = (e) => {
        e.preventDefault();
        if (gen !== generation) return;
        const text = `worker error: ${e.message || "unknown"}`;
        reject(new Error(text));
        if (inflight) crashInflight(text);
      };
    });
    workerReady.catch(() => {});
    // A copy of the memory snapshot: the worker's loader takes ownership of what it is given.
    w.postMessage({ t: "boot", module, stdlib: stdlib.slice(0), lock, interrupt, maxMemoryBytes, snapshot: snapshot ? snapshot.slice() : null });
  }

  function restartWorker() {
    if (worker) worker.terminate();
    startWorker();
  }

  function finish(reply, transfer) {
    const done = inflight;
    inflight = null;
    clearTimeout(done.timer);
    send(reply, transfer);
    pump();
  }

  function crashInflight(text) {
    const id = inflight.id;
    restartWorker();
    finish({ t: "done", id, result: null, error: { kind: "crashed", type: "WorkerError", message: text, traceback: "" }, truncated: false, changed: [], deleted: [], restarted: true, durationMs: 0 });
  }

  function fromWorker(msg) {
    if (msg.t === "out") {
      send(msg);
    } else if (msg.t === "done" && inflight && msg.id === inflight.id) {
      const transfer = msg.changed.map((f) => f.data.buffer);
      if (inflight.interrupted) {
        // The run ended through our interrupt: it is a timeout, but the worker and its
        // variables are kept.
        msg.error = {
          kind: "timeout",
          type: "TimeoutError",
          message: `the run took longer than ${inflight.timeoutMs} ms and was interrupted (KeyboardInterrupt); Python variables were kept`,
          traceback: (msg.error && msg.error.traceback) || "",
        };
        msg.result = null;
      }
      if (msg.leftover) {
        restartWorker();
        msg.restarted = true;
      } else {
        msg.restarted = false;
      }
      finish(msg, transfer);
    }
  }

  async function pump() {
    if (inflight || queue.length === 0) return;
    const msg = queue.shift();
    inflight = { id: msg.id };
    try {
      await workerReady;
    } catch (e) {
      // The worker did not boot (it was fine before, so this is a crash of the runtime).
      inflight = { id: msg.id, timer: 0 };
      crashInflight(`the Python worker failed to start: ${e.message}`);
      return;
    }
    const started = performance.now();
    inflight.timeoutMs = msg.timeoutMs;
    if (interrupt) Atomics.store(interrupt, 0, 0);
    const kill = () => {
      if (!inflight || inflight.id !== msg.id) return;
      restartWorker();
      finish({ t: "done", id: msg.id, result: null, error: { kind: "timeout", type: "TimeoutError", message: `the run took longer than ${msg.timeoutMs} ms; the worker was restarted (files kept, Python variables lost)`, traceback: "" }, truncated: false, changed: [], deleted: [], restarted: true, durationMs: performance.now() - started });
    };
    inflight.timer = setTimeout(() => {
      if (!inflight || inflight.id !== msg.id) return;
      if (interrupt) {
        inflight.interrupted = true;
        Atomics.store(interrupt, 0, 2); // SIGINT
        inflight.timer = setTimeout(kill, INTERRUPT_GRACE_MS);
      } else {
        kill();
      }
    }, msg.timeoutMs);
    worker.postMessage(msg, msg.put.map((f) => f.data.buffer));
  }

  async function onBoot(msg) {
    const started = performance.now();
    try {
      module = await WebAssembly.compile(msg.wasm);
    } catch (e) {
      send({ t: "load-error", stage: "wasm", message: `pyodide.asm.wasm did not compile: ${e.message}` });
      return;
    }
    stdlib = msg.stdlib;
    lock = msg.lock;
    maxMemoryBytes = msg.maxMemoryBytes;
    startWorker();
    try {
      const bootMs = await workerReady;
      send({ t: "ready", bootMs, denMs: performance.now() - started, interruptible: interrupt !== null });
    } catch (e) {
      send({ t: "load-error", stage: "pyodide", message: `Pyodide did not start: ${e.message}` });
    }
  }

  function onHostMessage(event) {
    const msg = event.data;
    if (msg.t === "boot") onBoot(msg);
    else if (msg.t === "run") {
      queue.push(msg);
      pump();
    } else if (msg.t === "reset") {
      // New interpreter, files gone from the worker (the host re-sends them on the next run).
      // A run in flight is ended as crashed first.
      if (inflight) crashInflight("the den was reset during the run");
      else restartWorker();
      workerReady.then(
        () => send({ t: "reset-done", id: msg.id }),
        (e) => send({ t: "reset-done", id: msg.id, error: e.message }),
      );
    }
  }

  window.addEventListener("message", (event) => {
    // Only our parent may connect, only once, and only with a port.
    if (port || event.source !== window.parent) return;
    const data = event.data;
    if (!data || data.foxden !== "connect" || !event.ports || event.ports.length !== 1) return;
    port = event.ports[0];
    port.onmessage = onHostMessage;
    port.onmessageerror = () => send({ t: "load-error", stage: "message", message: "a message from the host could not be deserialized" });
    const problem = isolationProblem();
    if (problem) {
      send({ t: "load-error", stage: "isolation", message: problem });
      port.onmessage = null;
      return;
    }
    send({ t: "hello", protocol: 1 });
  });
})();
