// @ts-check
// foxden den page script. Inlined into den.html by the build and allowed there by its SHA-256
// only: the page's CSP names no URL as a script source, so nothing can load code from anywhere.
//
// The den page: (1) accepts one MessagePort from its parent, once; (2) refuses to start unless
// its origin is opaque and no extension API is reachable; (3) compiles the Pyodide wasm it is
// handed, and starts the worker from the string below (a Blob URL: an opaque origin cannot
// start a worker from a URL); (4) relays runs, enforces run timeouts by killing and restarting
// the worker, and restarts it when a run leaves tasks or timers alive.
//
// Messages: den-page/protocol.d.ts (generated from foxden-core's protocol table) types every
// message this page sends and receives; `tsc -p den-page/tsconfig.json` checks this file with it.
/** @typedef {import("./protocol").HostToDen} HostToDen */
/** @typedef {import("./protocol").HostToDenBoot} HostToDenBoot */
/** @typedef {import("./protocol").HostToDenWarm} HostToDenWarm */
/** @typedef {import("./protocol").HostToDenRun} HostToDenRun */
/** @typedef {import("./protocol").DenToHost} DenToHost */
/** @typedef {import("./protocol").DenToHostDone} DenToHostDone */
/** @typedef {import("./protocol").DenToWorkerBoot} DenToWorkerBoot */
/** @typedef {import("./protocol").WorkerToDen} WorkerToDen */
/** @typedef {import("./protocol").WorkerToDenDone} WorkerToDenDone */
/** @typedef {import("./protocol").RunError} RunError */
/** @typedef {import("./protocol").DisplayItem} DisplayItem */
/** @typedef {import("./protocol").Wheel} Wheel */
/** @typedef {{ms: number, from: "scratch" | "snapshot", packagesMs?: number}} Booted How a worker booted. */
/** @typedef {{w: Worker, input: Int32Array | null, interrupt: Int32Array | null}} Spawned A started worker, its input and interrupt buffers (isolated dens). */
/**
 * A "run" worker.
 * @typedef {Spawned & {ready: Promise<Booted>, booting: {resolve: (b: Booted) => void, reject: (e: Error) => void} | null, booted: boolean}} RunWorker
 */
/**
 * The run the worker is executing.
 * @typedef {{id: number, timer: number, timeoutMs: number, cap: number, used: number, truncated: boolean, started: boolean, interrupted?: boolean, waitCounts?: boolean, displayed?: number, displays?: number, dropped?: boolean, deadline?: number, left?: number, onTimeout?: () => void, asking?: boolean, paused?: boolean, pausedAt?: number, rate?: number, interactive?: boolean, network?: boolean, python?: boolean, onInterrupted?: () => void, sigint?: number, stopping?: boolean, stoppedEarly?: boolean, fetches?: number, asked?: number}} Inflight
 */
/** A `done` for the host, before the den page acts on the worker's `leftover`. @typedef {DenToHostDone & {leftover?: boolean}} CheckedDone */
(() => {
  "use strict";
  // Replaced by the build with the esbuild bundle of worker.js + Pyodide's loader (a JS string).
  const WORKER_SOURCE = __FOXDEN_WORKER_SOURCE__;
  // Pyodide probes for a classic worker with importScripts("data:...") and refuses to run in
  // one; under this page's CSP the probe would also log a violation. Our worker is classic
  // (Chromium refuses module workers from blob: in an opaque origin) but loads nothing by URL,
  // so importScripts is replaced by a function that refuses. Real script loads (through the
  // prototype's copy) stay refused by the CSP, whose script-src has no URL source.
  // The prelude first tells the den page (on the worker's global channel, read only before boot)
  // whether the worker is a secure context: the first worker is the blob: probe (see below).
  // It starts with "use strict": the worker bundle's own directive is no directive once the
  // prelude comes before it, and in sloppy code a global that user code replaced would see the
  // worker's functions as its `caller` (and could call them: its run() posts a genuine done).
  const PRELUDE = '"use strict"; postMessage(self.isSecureContext === true); self.importScripts = function () { throw new TypeError("foxden: importScripts is disabled in the sandbox"); };\n';

  // den.html inlines this script; den-ext.html (extensions only) loads it as den/den.js through
  // script-src 'self'. 'self' is safe only where it means an extension's packaged files: served
  // from a website it would be that website's server, and the worker could load code from it.
  const LOADED_BY_URL = Boolean(document.currentScript && /** @type {HTMLScriptElement} */ (document.currentScript).src);

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

  // Limits on what a worker may send (it runs user code: every message is hostile). The host
  // checks all of these again (and the bytes of the files, which pass through here by transfer,
  // without a copy); here they keep the den page itself bounded.
  const PROTOCOL = 13;
  const MAX_FILES = 10000; // files in one reply (changed, deleted)
  const MAX_PATH = 4096; // UTF-16 units, as the host reads them (it applies the path rules after: a longer path is noted, not kept)
  const MAX_FETCHES_PER_RUN = 1000; // foxden_core::net::MAX_RECORDS_PER_RUN: the host records (and answers) no more
  const STREAMS = ["stdout", "stderr"];
  const MAX_OUT_PARTS = 1024; // foxden_core::protocol::MAX_OUT_PARTS: parts of one `out` message
  const ERROR_KINDS = ["python", "timeout", "crashed", "storage", "javascript"];

  // The host talks to this page with window.postMessage (a MessagePort costs Firefox ~0.15 ms
  // per message, window messages ~0.02 ms): only messages from our parent window are read, and
  // only after its `connect`. This page posts to the parent with target "*" (an opaque origin
  // cannot name the host's), which is where the host's window listener checks the source.
  const host = window.parent;
  let connected = false;
  let refused = false; // isolation failed: the host gets load-error, then nothing is read
  /** @type {WebAssembly.Module | null} */
  let module = null; // the compiled Pyodide wasm, posted to every new worker
  // Memory snapshot of a fresh interpreter, for fast restarts. It comes only from a "maker"
  // worker that boots with Pyodide's snapshot options, posts the snapshot, and is terminated
  // without ever receiving a run; it is set once and never replaced.
  /** @type {Uint8Array | null} */
  let snapshot = null;
  // The snapshot as it came: packed by the host's warm cache (all-zero pages left out, unpacked
  // by each worker with these copies), or whole from the maker (copies null).
  /** @type {number[] | null} */
  let snapshotCopies = null;
  let snapshotBytes = 0; // its unpacked length
  /**
   * Keeps the snapshot for later workers (null: none).
   * @param {Uint8Array | null} bytes
   * @param {number[] | null} copies
   * @param {number} total
   */
  function keepSnapshot(bytes, copies, total) {
    snapshot = bytes;
    snapshotCopies = bytes ? copies : null;
    snapshotBytes = bytes ? total : 0;
  }
  /** @type {Spawned | null} */
  let maker = null;
  let offerSnapshot = false; // the host asked for the snapshot (its warm cache had none)
  let maxMemoryBytes = 0; // cap on each worker's WebAssembly memory (0: none)
  /** @type {ArrayBuffer | null} */
  let stdlib = null; // python_stdlib.zip bytes (copied to every new worker)
  /** @type {string | null} */
  let lock = null; // pyodide-lock.json text
  // The den's wheels (checked by the host against their pins), installed by every run worker
  // after it boots; kept here for restarts. Once one worker installed them, later ones skip
  // re-hashing each file (the bytes are the same; the first check ran before any user code).
  /** @type {Wheel[]} */
  let packages = [];
  let packagesVerified = false;
  // What the first worker installed from them (it checked every wheel, before any user code):
  // later workers write these files as they are instead of unzipping again (fast restarts).
  /** @type {import("./protocol").ChangedFile[] | null} */
  let installedImage = null;
  const MAX_INSTALLED_BYTES = 1 << 30;
  /** @type {RunWorker | null} */
  let worker = null; // {w, input, ready, booting, booted} of the worker that runs code
  /** @type {Promise<Booted> | null} */
  let workerReady = null; // promise: resolves when the current worker booted
  /** @type {Inflight | null} */
  let inflight = null; // {id, timer, timeoutMs, cap, used, truncated, started, interrupted} of the run the worker is executing
  /** @type {HostToDenRun[]} */
  const queue = []; // runs waiting for the worker
  /** @type {string | null} */
  let lostBetweenRuns = null; // why the worker was replaced since the last run (see bootWorker)
  const queuedRuns = new Set(); // ids of the runs said to be `queued`, until they start or end
  const stoppedEarly = new Set(); // ids of queued runs the host stopped: they never start
  // When this page is cross-origin isolated (host page with COOP + COEP, iframe allowed
  // "cross-origin-isolated"), a SharedArrayBuffer lets a timeout interrupt Python (SIGINT ->
  // KeyboardInterrupt) without killing the worker, so Python variables survive. The worker is
  // killed only if the interrupt does not end the run within INTERRUPT_GRACE_MS. Each run
  // worker has its own buffer (spawn): a signal left unread by a worker that was then killed
  // must not reach the next interpreter (it would fail its boot with KeyboardInterrupt), and a
  // timeout must not land in a standby that is booting.
  const interruptible = self.crossOriginIsolated === true && typeof SharedArrayBuffer === "function";
  const MAX_STRAY_MESSAGES = 10000;
  const INTERRUPT_GRACE_MS = 1000;
  // Interactive input() (isolated dens): each run worker gets an input buffer, [0] state
  // (0 waiting, 1 text, 2 end of input, 3 failed), [1] byte length, then up to 1 MiB of UTF-8.
  const INPUT_HEADER_BYTES = 8;
  const MAX_ANSWER_BYTES = 1 << 20;
  // Without isolation (no input buffer), a worker waits for input() through JSPI, WebAssembly
  // stack switching, where the browser has it: the answer then goes to it as a message.
  const jspi = typeof WebAssembly === "object" && typeof (/** @type {any} */ (WebAssembly)).Suspending === "function";

  /**
   * Posts to the host (only after it connected).
   * @param {DenToHost} msg
   * @param {Transferable[]} [transfer]
   */
  const send = (msg, transfer) => host.postMessage(msg, "*", transfer || []);

  /**
   * One shape for every run the den page ends itself.
   * @param {number} id
   * @param {RunError["kind"]} kind
   * @param {string} type
   * @param {string} message
   * @param {number} [durationMs]
   * @returns {DenToHostDone}
   */
  function failedReply(id, kind, type, message, durationMs) {
    return { t: "done", id, result: null, error: { kind, type, message, traceback: "" }, truncated: false, changed: [], deleted: [], tooManyFiles: 0, restarted: true, durationMs: durationMs || 0 };
  }

  // Where a blob: worker of this opaque origin is a secure context (Firefox), the worker starts
  // from a blob: URL; where it is not (Chromium), from a data: URL, which is a secure context in
  // both, so that Python's `js.crypto.randomUUID()`, `js.crypto.subtle` etc. exist as in bare
  // Pyodide. Extension den pages always use blob:
  // (their manifest CSP allows only that). The first worker is started as soon as the host
  // connects, from blob: in Gecko (`blobGuess`) and from data: elsewhere, and is the probe: a
  // blob: one says whether it is a secure context before anything else (PRELUDE), and if it is
  // not, it is replaced by a data: one (ensureEarly); a data: one is a secure context in both
  // browsers, and then every worker starts from data:. (A separate probe worker cost the
  // critical path one more worker start.)
  /** @type {string | null} */
  let dataSource = null;
  const blobGuess = LOADED_BY_URL || (typeof CSS !== "undefined" && typeof CSS.supports === "function" && CSS.supports("-moz-appearance", "none"));
  let blobIsSecure = LOADED_BY_URL; // set by the first blob: worker's answer
  /** @type {() => void} */
  let probed = () => {};
  /** Resolves once the kind of URL for the workers is known (blobIsSecure). */
  const probeBlob = /** @type {Promise<void>} */ (
    new Promise((resolve) => {
      probed = resolve;
      if (LOADED_BY_URL || !blobGuess) resolve();
    })
  );
  // A data: worker does not carry the script in its URL: Chromium takes ~0.4 s longer to start
  // a worker whose data: URL holds the whole 1.1 MB script than one from a one-line data: URL
  // that is then handed the script as a string and evaluates it (indirect eval, as a classic
  // script; this page's CSP has 'unsafe-eval', which the worker inherits). The script is the
  // first message the worker gets, posted before anything else, so it runs before any other
  // message is read; the bootstrap's handler is gone by then. `sourceURL` names the script in
  // stack traces (worker.js tells its own frames from a JavaScript run's by it).
  const DATA_BOOTSTRAP = "data:text/javascript;charset=utf-8," + encodeURIComponent('"use strict"; onmessage = function (e) { onmessage = null; (0, eval)(e.data); };');

  /**
   * A new worker (its script starts loading at once; it waits for its boot message).
   * @param {boolean} [blob] from a blob: URL (default: as the probe said)
   */
  function newWorker(blob = blobIsSecure) {
    if (blob) {
      const url = URL.createObjectURL(new Blob([PRELUDE, WORKER_SOURCE], { type: "text/javascript" }));
      const w = new Worker(url); // classic: Chromium refuses module workers from blob: in an opaque origin
      URL.revokeObjectURL(url);
      return w;
    }
    if (dataSource === null) dataSource = PRELUDE + WORKER_SOURCE + "\n//# sourceURL=foxden-worker.js\n";
    const w = new Worker(DATA_BOOTSTRAP);
    w.postMessage(dataSource);
    return w;
  }
  // The first run worker, started when the host connects (before the assets come) so that its
  // script loads while the host fetches the assets and reads its warm cache and the wasm
  // compiles; spawn() boots it. An error before then is kept.
  /** @type {{w: Worker, blob: boolean, error: string | null} | null} */
  let early = null;
  /** @param {boolean} blob */
  function startEarly(blob) {
    const rec = { w: newWorker(blob), blob, error: /** @type {string | null} */ (null) };
    // The blob: probe: its prelude's first message (a worker that fails to start is not secure).
    const asking = blob && !LOADED_BY_URL;
    /** @param {boolean} secure */
    const answer = (secure) => {
      if (!asking || rec.w.onmessage === null) return;
      rec.w.onmessage = null;
      blobIsSecure = secure;
      probed();
    };
    if (asking) rec.w.onmessage = (e) => answer(e.data === true);
    rec.w.onerror = (e) => {
      e.preventDefault();
      rec.error = `worker error: ${e.message || "unknown"}`;
      answer(false);
    };
    early = rec;
  }
  /** Once the probe answered: the early worker exists and is of the kind the probe said. */
  function ensureEarly() {
    if (early && early.blob !== blobIsSecure) {
      early.w.terminate();
      early = null;
    }
    if (!early && !module) startEarly(blobIsSecure);
  }

  /**
   * Starts a worker: role "run" (runs code) or "maker" (makes the snapshot, then ends).
   * @param {DenToWorkerBoot["role"]} role
   * @param {(msg: WorkerToDen) => void} onMessage gets what the worker script posts with its key (unchecked)
   * @param {(text: string, fatal?: boolean) => void} onError `fatal`: the worker must be replaced
   * @param {number} [pending] the unpacked length of a snapshot that follows (`snapshot`, first worker)
   * @returns {Spawned}
   */
  function spawn(role, onMessage, onError, pending = 0) {
    // The first run worker was started ahead of its boot message (see onBoot).
    const pre = role === "run" ? early : null;
    early = null;
    const w = pre ? pre.w : newWorker();
    // The worker's global channel is also where user code can post (js.postMessage): only what
    // carries this worker's key, given in the boot message before any user code ran, is read
    // (worker.js posts [key, message]). A message that cannot be deserialized is dropped like
    // any unkeyed one: it cannot be told apart from user code's. (The global channel, not a
    // MessageChannel: a port costs Firefox ~0.15 ms per message, this ~0.02 ms.)
    // User code has no reason to post there (nothing reads it), and each message costs this page
    // a deserialization (in Firefox on the host's thread): a worker that posts
    // MAX_STRAY_MESSAGES unkeyed ones is ended, like a crash.
    const key = randomKey();
    let stray = 0;
    w.onmessage = (e) => {
      const d = e.data;
      if (Array.isArray(d) && d.length === 2 && d[0] === key) onMessage(d[1]);
      else if (++stray === MAX_STRAY_MESSAGES) {
        w.onmessage = null;
        onError(`the worker posted ${MAX_STRAY_MESSAGES} messages of its own on its global channel (js.postMessage), which foxden does not read; it was restarted`, true);
      }
    };
    w.onerror = (e) => {
      e.preventDefault();
      onError(`worker error: ${e.message || "unknown"}`);
    };
    if (pre && pre.error) queueMicrotask(() => onError(/** @type {string} */ (pre.error)));
    const input = role === "run" && interruptible ? new Int32Array(new SharedArrayBuffer(INPUT_HEADER_BYTES + MAX_ANSWER_BYTES)) : null;
    const interrupt = role === "run" && interruptible ? new Int32Array(new SharedArrayBuffer(4)) : null;
    /** @type {DenToWorkerBoot} */
    const boot = { t: "boot", role, key, module: /** @type {WebAssembly.Module} */ (module), stdlib: /** @type {ArrayBuffer} */ (stdlib).slice(0), lock: /** @type {string} */ (lock), interrupt, input, maxMemoryBytes, snapshot: role === "run" && snapshot ? snapshot.slice() : null, copies: role === "run" && snapshot ? snapshotCopies : null, snapshotBytes: role !== "run" ? 0 : snapshot ? snapshotBytes : pending, packages: role === "run" ? packages : [], verified: packagesVerified, installed: role === "run" ? installedImage : null };
    // The copies of the stdlib and the snapshot are transferred, not copied a second time.
    /** @type {Transferable[]} */
    const transfer = [boot.stdlib];
    if (boot.snapshot) transfer.push(boot.snapshot.buffer);
    w.postMessage(boot, transfer);
    return { w, input, interrupt };
  }

  /** 128 random bits, hex: a worker's key. */
  function randomKey() {
    const b = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  /**
   * Boots a "run" worker; its record's `ready` resolves {ms, from} once it booted. Only the
   * current worker's messages reach fromWorker; a standby's are ignored until it is swapped in.
   */
  /** @param {number} [pending] as in spawn */
  function bootWorker(pending = 0) {
    const rec = /** @type {RunWorker} */ (/** @type {unknown} */ ({ w: null, input: null, ready: null, booting: null, booted: false }));
    rec.ready = new Promise((resolve, reject) => {
      rec.booting = { resolve, reject };
    });
    rec.ready.catch(() => {});
    /** @param {WorkerToDen} msg */
    const onMessage = (msg) => {
      if (!msg || typeof msg !== "object") return;
      if (rec.booting) {
        // Booting: only the boot answer counts (no user code has run in this worker yet).
        const s = rec.booting;
        if (msg.t === "booted") {
          rec.booting = null;
          rec.booted = true;
          const packagesMs = typeof msg.packagesMs === "number" && msg.packagesMs >= 0 ? msg.packagesMs : undefined;
          // Only the den page's first install is kept (a booting worker has run no user code).
          if (!packagesVerified && !installedImage && Array.isArray(msg.installed)) installedImage = checkInstalled(msg.installed);
          s.resolve({ ms: typeof msg.ms === "number" ? msg.ms : 0, from: msg.from === "snapshot" ? "snapshot" : "scratch", packagesMs });
        } else if (msg.t === "boot-error") {
          rec.booting = null;
          const err = new Error(String(msg.message).slice(0, 4096));
          // A refused wheel names its package (the host reports DenLoadError stage "package").
          if (typeof msg.package === "string") /** @type {Error & {package?: string}} */ (err).package = msg.package.slice(0, 256);
          s.reject(err);
          if (rec === standby) {
            // A standby that did not boot is no standby: ended (the next restart boots a new
            // worker and a new standby, rather than swapping in this one).
            standby = null;
            rec.w.terminate();
          }
        }
        return;
      }
      if (rec === worker) fromWorker(msg);
    };
    /**
     * @param {string} text
     * @param {boolean} [fatal] replace the worker even between runs
     */
    const onError = (text, fatal) => {
      if (rec.booting) {
        rec.booting.reject(new Error(text));
        rec.booting = null;
      }
      if (rec === standby) {
        // Dropped as the standby, so ended too (else it would live on, unreachable).
        standby = null;
        rec.w.terminate();
      }
      if (rec === worker && inflight && inflight.started) crashInflight(text);
      else if (rec === worker && fatal) {
        // Between runs: the new worker has none of the den's files, and the host, which ships
        // a run only the files the worker lacks, does not know. The next run is answered as
        // crashed and restarted instead (the host then ships every file to the one after).
        restartWorker();
        lostBetweenRuns = text;
      }
    };
    Object.assign(rec, spawn("run", onMessage, onError, pending));
    return rec;
  }

  /**
   * The files a first install wrote, if they look like one: site-packages paths, bytes, bounded.
   * @param {unknown[]} files
   * @returns {import("./protocol").ChangedFile[] | null}
   */
  function checkInstalled(files) {
    if (files.length > 50000) return null;
    const out = [];
    let size = 0;
    for (const f of files) {
      const file = /** @type {{path?: unknown, data?: unknown}} */ (f);
      const path = file && file.path;
      const data = file && file.data;
      if (typeof path !== "string" || !path.startsWith("/lib/") || path.includes("/../") || path.includes("/./") || path.length > 4096) return null;
      if (!(data instanceof Uint8Array)) return null;
      size += data.length;
      if (size > MAX_INSTALLED_BYTES) return null;
      out.push({ path, data });
    }
    return out;
  }

  /** @param {number} [pending] as in spawn */
  function startWorker(pending = 0) {
    worker = bootWorker(pending);
    workerReady = worker.ready;
  }

  /** @param {RunWorker} rec */
  function endWorker(rec) {
    // A worker replaced while booting: whoever waits for it moves on to the new one.
    if (rec.booting) rec.booting.reject(new Error("replaced"));
    rec.booting = null;
    rec.w.terminate();
  }

  // The standby: a fresh interpreter booted from the snapshot ahead of need, so that a timeout
  // or reset swaps it in at once instead of booting. It costs one more interpreter's memory
  // (about 40-60 MB) per den; the host turns it off with iframeRuntime({ standby: false }).
  /** @type {RunWorker | null} */
  let standby = null;
  let standbyWanted = false;
  function refillStandby() {
    if (!standbyWanted || standby || !snapshot) return;
    standby = bootWorker();
  }

  /** Boots the maker once, when no snapshot exists yet; its snapshot is the only one accepted. */
  function makeSnapshot() {
    if (snapshot || maker) return;
    let done = false;
    const end = () => {
      done = true;
      if (maker) {
        maker.w.terminate();
      }
    };
    maker = spawn(
      "maker",
      (msg) => {
        if (done) return;
        if (msg && msg.t === "snapshot" && msg.snapshot instanceof Uint8Array && !snapshot) {
          keepSnapshot(msg.snapshot, null, msg.snapshot.length);
          refillStandby();
          // The host may keep it for later visits (its warm cache); it gets a copy.
          if (offerSnapshot) {
            const copy = msg.snapshot.slice();
            send({ t: "snapshot", snapshot: copy }, [copy.buffer]);
          }
        }
        end();
      },
      () => {
        if (!done) end();
      },
    );
  }

  function restartWorker() {
    if (worker) endWorker(worker);
    if (standby) {
      worker = standby;
      standby = null;
      workerReady = worker.ready;
    } else {
      try {
        startWorker();
      } catch (e) {
        // (Out of memory, most likely.) The run being ended is still answered; the next one
        // fails to start, saying why (and tries again).
        worker = null;
        workerReady = Promise.reject(new Error(`a new worker could not be made: ${e && e.message ? e.message : e}`));
        workerReady.catch(() => {});
      }
    }
    // The standby is ahead of need: made in a later task, and not making it fails no run.
    setTimeout(() => {
      try {
        refillStandby();
      } catch (_) {
        standby = null;
      }
    }, 0);
  }

  /**
   * Ends the run in flight with this reply to the host.
   * @param {DenToHostDone} reply
   * @param {Transferable[]} [transfer]
   */
  function finish(reply, transfer) {
    const done = /** @type {Inflight} */ (inflight);
    inflight = null;
    queuedRuns.delete(reply.id);
    stoppedEarly.delete(reply.id);
    clearTimeout(done.timer);
    // What this page cut (output over the cap, displays dropped) counts too; and for a run
    // ended without the worker's own reply (timeout, Stop, crash), output that reached the cap.
    if (done.truncated || done.dropped || (reply.restarted && done.cap > 0 && done.used >= done.cap)) reply.truncated = true;
    try {
      send(reply, transfer);
    } catch (e) {
      send(failedReply(reply.id, "crashed", "WorkerError", `the run's reply could not be sent: ${e.message}`));
    }
    pump();
  }

  /** @param {string} text */
  function crashInflight(text) {
    const id = /** @type {Inflight} */ (inflight).id;
    restartWorker();
    finish(failedReply(id, "crashed", "WorkerError", text));
  }

  // One encoder and decoder for the output cap (on the hot path of every `out` message).
  const utf8 = new TextEncoder();
  const utf8Decoder = new TextDecoder();

  /**
   * @param {unknown} v
   * @param {number} cap
   * @returns {v is string}
   */
  const isText = (v, cap) => typeof v === "string" && v.length <= cap;

  /**
   * Checks a worker's `done`; returns the reply to forward, or a string saying what is wrong.
   * @param {WorkerToDenDone} msg as the worker sent it: typed as it should be, checked here
   * @returns {CheckedDone | string}
   */
  function checkDone(msg) {
    const run = /** @type {Inflight} */ (inflight);
    const cap = run.cap + 65536;
    if (!(msg.result === null || isText(msg.result, cap))) return "result is not text within the output cap";
    const err = msg.error;
    if (err !== null) {
      if (!err || typeof err !== "object" || !ERROR_KINDS.includes(err.kind)) return "error is not an error object";
      if (!isText(err.type, 256) || !isText(err.message, cap) || !isText(err.traceback, cap)) return "error fields are not text within the caps";
    }
    if (!Array.isArray(msg.changed) || msg.changed.length > MAX_FILES) return "changed is not a list within the file cap";
    if (!Array.isArray(msg.deleted) || msg.deleted.length > MAX_FILES) return "deleted is not a list within the file cap";
    const changed = [];
    for (let i = 0; i < msg.changed.length; i++) {
      const f = msg.changed[i];
      if (!f || !isText(f.path, MAX_PATH) || !(f.data instanceof Uint8Array) || !(f.data.buffer instanceof ArrayBuffer)) return `changed[${i}] is not {path, data: Uint8Array}`;
      // Only the view's bytes go on: a small view over a big (or shared, or resizable) buffer
      // is copied, as a display's are, else the whole buffer would go to the host.
      const whole = f.data.byteOffset === 0 && f.data.byteLength === f.data.buffer.byteLength && !(/** @type {any} */ (f.data.buffer).resizable);
      changed.push({ path: f.path, data: whole ? f.data : f.data.slice() });
    }
    for (let i = 0; i < msg.deleted.length; i++) {
      if (!isText(msg.deleted[i], MAX_PATH)) return `deleted[${i}] is not a path`;
    }
    if (!Number.isSafeInteger(msg.tooManyFiles) || msg.tooManyFiles < 0) return "tooManyFiles is not a whole number";
    return {
      t: "done",
      id: run.id,
      result: msg.result,
      error: err === null ? null : { kind: err.kind, type: err.type, message: err.message, traceback: err.traceback },
      truncated: msg.truncated === true || run.truncated,
      changed,
      deleted: msg.deleted.slice(),
      tooManyFiles: msg.tooManyFiles,
      restarted: false,
      durationMs: typeof msg.durationMs === "number" && msg.durationMs >= 0 ? msg.durationMs : 0,
      leftover: msg.leftover === true,
    };
  }

  // Displays: the MIME types a display may carry (true: bytes), at most 16 items each and
  // 16 MiB per run (the host checks the same).
  const DISPLAY_MIMES = { "image/png": true, "image/jpeg": true, "image/svg+xml": false, "text/html": false, "text/markdown": false, "application/json": false, "text/plain": false };
  const MAX_DISPLAY_BYTES = 16 * 1024 * 1024;
  const MAX_DISPLAYS_PER_RUN = 1000; // foxden_core::outcome::MAX_DISPLAYS_PER_RUN

  /**
   * Checks a worker's display bundle; returns the copy to forward, or what is wrong.
   * @param {unknown} bundle
   * @returns {DisplayItem[] | string}
   */
  function checkDisplay(bundle) {
    const run = /** @type {Inflight} */ (inflight);
    if (!Array.isArray(bundle) || bundle.length === 0 || bundle.length > 16) return "not a bundle";
    // A count cap too: a display of empty texts costs no bytes, but becomes an element (an
    // iframe for text/html) of the host page.
    if ((run.displays || 0) >= MAX_DISPLAYS_PER_RUN) return "too many displays";
    /** @type {DisplayItem[]} */
    const out = [];
    let size = 0;
    for (const item of bundle) {
      const mime = item && item.mime;
      if (typeof mime !== "string" || !Object.hasOwn(DISPLAY_MIMES, mime)) return "unknown type";
      const binary = DISPLAY_MIMES[/** @type {keyof typeof DISPLAY_MIMES} */ (mime)];
      if (binary) {
        if (!(item.bytes instanceof Uint8Array) || !(item.bytes.buffer instanceof ArrayBuffer)) return "not bytes";
        // Forwarded as a copy of the view's bytes only: posting the view itself would copy
        // its whole underlying buffer, which may be far larger than what was counted.
        size += item.bytes.length;
        if ((run.displayed || 0) + size > MAX_DISPLAY_BYTES) return "over the display budget";
        out.push({ mime, text: null, bytes: item.bytes.slice() });
      } else {
        if (typeof item.text !== "string") return "not text";
        size += utf8.encode(item.text).length; // UTF-8 bytes, as the host counts them
        out.push({ mime, text: item.text, bytes: null });
      }
    }
    if ((run.displayed || 0) + size > MAX_DISPLAY_BYTES) return "over the display budget";
    run.displayed = (run.displayed || 0) + size;
    run.displays = (run.displays || 0) + 1;
    return out;
  }

  // foxden.fetch: the worker asks, the host decides and fetches (this page fetches nothing).
  // Checked here for shape and size only (the host checks everything again, and decides);
  // a request that fails these checks is answered "bad-request" at once.
  const MAX_FETCH_URL = 16384; // UTF-16 units; the host's own cap is 8192 bytes
  const MAX_FETCH_HEADERS = 64;
  const MAX_FETCH_HEADER_CHARS = 32768;
  const MAX_FETCH_BODY = 2 * 1024 * 1024; // bytes; the host's own cap is 1 MiB

  /**
   * Checks a worker's fetch; returns the message for the host, or what is wrong.
   * @param {import("./protocol").WorkerToDenFetch} msg
   * @returns {import("./protocol").DenToHostFetch | string}
   */
  function checkFetch(msg) {
    const run = /** @type {Inflight} */ (inflight);
    if (!isText(msg.url, MAX_FETCH_URL) || !isText(msg.method, 32)) return "url and method must be text";
    if (!Array.isArray(msg.headers) || msg.headers.length > MAX_FETCH_HEADERS) return "too many headers";
    const headers = [];
    let chars = 0;
    for (const h of msg.headers) {
      if (!h || typeof h.name !== "string" || typeof h.value !== "string") return "headers must be {name, value} text";
      chars += h.name.length + h.value.length;
      if (chars > MAX_FETCH_HEADER_CHARS) return "the headers are too long";
      headers.push({ name: h.name, value: h.value });
    }
    const body = msg.body;
    if (body !== null && !(body instanceof Uint8Array && body.buffer instanceof ArrayBuffer && body.buffer.byteLength <= MAX_FETCH_BODY)) return "the body must be bytes of at most 2 MiB";
    return { t: "fetch", id: run.id, req: msg.req, url: msg.url, method: msg.method, headers, body };
  }

  /** @param {WorkerToDen} msg what the current worker posted (unchecked) */
  function fromWorker(msg) {
    if (!inflight || !inflight.started) return; // a run that ended (its late messages)
    if (/** @type {{id?: unknown}} */ (msg).id !== inflight.id) return;
    // A worker that waits for input() through JSPI is suspended only in Python: JavaScript the
    // code left running may still work, uncounted. Output, a display or a request shows that it
    // does: the clock goes on (the answer is still awaited).
    if (inflight.paused && inflight.rate && msg.t !== "input") resumeClock(inflight);
    if (msg.t === "interrupted") {
      // The worker read the run's interrupt (once; a hostile worker gains at most the grace).
      // If that ended a wait (where KeyboardInterrupt is now raised), the signal still to come
      // is not sent: it would be a second one.
      if (msg.waited === true) clearTimeout(inflight.sigint);
      const then = inflight.onInterrupted;
      inflight.onInterrupted = undefined;
      if (then) then();
    } else if (msg.t === "out") {
      // Output is capped here too: a worker that ignores the cap cannot flood the host. The
      // parts (one per change of stream, in print order) are checked whole: a malformed
      // message is dropped, not half forwarded.
      const parts = msg.parts;
      if (!Array.isArray(parts) || parts.length === 0 || parts.length > MAX_OUT_PARTS || inflight.truncated) return;
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i];
        if (!p || !STREAMS.includes(p.stream) || typeof p.text !== "string") return;
      }
      /** @type {import("./protocol").OutputPart[]} */
      const kept = [];
      for (let i = 0; i < parts.length && !inflight.truncated; i++) {
        let text = parts[i].text;
        const bytes = utf8.encode(text);
        const room = Math.max(inflight.cap - inflight.used, 0);
        if (bytes.length > room) {
          // Cut at a character boundary: back over UTF-8 continuation bytes (10xxxxxx).
          let end = room;
          while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
          text = utf8Decoder.decode(bytes.subarray(0, end));
          inflight.truncated = true;
        }
        inflight.used += Math.min(bytes.length, room);
        if (text) kept.push({ stream: parts[i].stream, text });
      }
      if (kept.length) send({ t: "out", id: msg.id, parts: kept });
    } else if (msg.t === "display") {
      // A display is forwarded whole or not at all, within the run's display budget.
      const bundle = checkDisplay(msg.bundle);
      if (typeof bundle === "string") {
        inflight.dropped = true;
        return;
      }
      send({ t: "display", id: inflight.id, bundle }, bundle.flatMap((item) => (item.bytes ? [item.bytes.buffer] : [])));
    } else if (msg.t === "input") {
      // One question at a time, from a run that may ask (not while being interrupted or
      // stopped: such a run waits, unanswered, until the kill; a question would pause the clock).
      const buf = /** @type {RunWorker} */ (worker).input;
      if ((!buf && !jspi) || !inflight.interactive || inflight.asking || inflight.interrupted || inflight.stopping || typeof msg.prompt !== "string") return;
      inflight.asking = true;
      // A run with workers of its own goes on computing while this one waits: its wait counts
      // as without isolation (JSPI_WAIT_RATE), not at all.
      inflight.waitCounts = msg.workers === true;
      pauseClock(inflight);
      send({ t: "input", id: inflight.id, prompt: msg.prompt.slice(0, 4096) });
    } else if (msg.t === "fetch") {
      if (typeof msg.req !== "number" || !Number.isInteger(msg.req) || msg.req < 0 || msg.req > 0xffffffff) return;
      const req = inflight.interrupted || inflight.stopping ? null : checkFetch(msg);
      const id = inflight.id;
      /**
       * Answers the worker's fetch here, refused (the host never sees it).
       * @param {string} refused
       * @param {string} message
       */
      const refuse = (refused, message) => {
        const no = /** @type {import("./protocol").DenToWorkerFetchReply} */ (/** @type {unknown} */ ({ t: "fetch-reply", id, req: msg.req, status: null, headers: [], body: null, refused, message }));
        /** @type {RunWorker} */ (worker).w.postMessage(no);
      };
      // The run is being stopped (or timed out): no new request is made for it. (`interrupted`
      // is the worker's own reason, as for a request the stop ended: not one the host sends.)
      if (req === null) return refuse("interrupted", "the run is being stopped: no new request is made");
      if (typeof req === "string") return refuse("bad-request", req);
      // Past MAX_FETCHES_PER_RUN asks the host would refuse each (unrecorded) anyway: answered
      // here, so that a loop of requests costs the host page nothing.
      inflight.asked = (inflight.asked || 0) + 1;
      if (inflight.asked > MAX_FETCHES_PER_RUN) return refuse("rate", `more than ${MAX_FETCHES_PER_RUN} requests in one run`);
      inflight.fetches = (inflight.fetches || 0) + 1;
      send(req, req.body ? [req.body.buffer] : []);
    } else if (msg.t === "done") {
      const reply = checkDone(msg);
      if (typeof reply === "string") {
        crashInflight(`the worker sent a malformed reply (${reply}); it was restarted`);
        return;
      }
      const transfer = reply.changed.map((f) => f.data.buffer);
      if (inflight.interrupted) {
        // The run ended through our interrupt: it is a timeout, but the worker and its
        // variables are kept (unless it left work behind: then it is restarted below).
        reply.error = {
          kind: "timeout",
          type: "TimeoutError",
          message: `the run took longer than ${inflight.timeoutMs} ms and was interrupted (${inflight.python ? "KeyboardInterrupt" : "its requests ended"}); ${reply.tooManyFiles ? "its file changes could not be kept, so the worker was restarted (the den's files kept, Python and JavaScript variables lost)" : reply.leftover ? "it left work running, so the worker was restarted (files kept, Python and JavaScript variables lost)" : inflight.python ? "Python variables were kept" : "JavaScript variables were kept"}`,
          traceback: (reply.error && reply.error.traceback) || "",
        };
        reply.result = null;
      }
      if (inflight.stoppedEarly && reply.error === null) {
        // (An error placing its files, which restarts the worker, is said as it is.)
        reply.error = { kind: "crashed", type: "Stopped", message: "the run was stopped before it started: none of its code ran (files and variables kept)", traceback: "" };
        reply.result = null;
      }
      if (reply.leftover) {
        restartWorker();
        reply.restarted = true;
      }
      delete reply.leftover;
      finish(reply, transfer.length === new Set(transfer).size ? transfer : []);
    }
  }

  // The run's timeout counts Python's time only: it stops while input() waits for a person.
  // Without an input buffer (JSPI), only Python is suspended: JavaScript the code left running
  // could work meanwhile, unseen. There the wait counts at JSPI_WAIT_RATE, so that no run gets
  // more than 1 / JSPI_WAIT_RATE times its timeout, however its questions are answered.
  const JSPI_WAIT_RATE = 0.1;
  /** @param {Inflight} run */
  function pauseClock(run) {
    clearTimeout(run.timer);
    const now = performance.now();
    run.left = Math.max(0, (run.deadline || 0) - now);
    run.paused = true;
    run.pausedAt = now;
    run.rate = worker && worker.input && !run.waitCounts ? 0 : JSPI_WAIT_RATE;
    if (run.rate > 0 && run.onTimeout) run.timer = setTimeout(run.onTimeout, run.left / run.rate);
  }
  /** @param {Inflight} run */
  function resumeClock(run) {
    if (!run.paused) return;
    run.paused = false;
    clearTimeout(run.timer);
    const now = performance.now();
    const left = Math.max(0, (run.left || 0) - (now - (run.pausedAt || now)) * (run.rate || 0));
    run.deadline = now + left;
    if (run.onTimeout) run.timer = setTimeout(run.onTimeout, left);
  }

  /**
   * The host's answer to the run's input() (checked: the host is trusted, but a late answer
   * for an ended run is dropped). Written into the worker's buffer, then the worker is woken;
   * or, for a worker without one (JSPI), posted to it.
   * @param {import("./protocol").HostToDenInputReply} msg
   */
  function onInputReply(msg) {
    const run = inflight;
    const buf = worker && worker.input;
    if (!run || !run.asking || msg.id !== run.id || !worker) return;
    run.asking = false;
    if (!buf) {
      const over = typeof msg.text === "string" && utf8.encode(msg.text).length > MAX_ANSWER_BYTES;
      /** @type {import("./protocol").DenToWorkerInputReply} */
      const reply = over
        ? { t: "input-reply", id: run.id, text: null, error: `the answer to input() is over ${MAX_ANSWER_BYTES} bytes` }
        : { t: "input-reply", id: run.id, text: typeof msg.text === "string" ? msg.text : null, error: typeof msg.error === "string" ? msg.error : null };
      resumeClock(run);
      worker.w.postMessage(reply);
      return;
    }
    let state = 2;
    let bytes = new Uint8Array(0);
    if (typeof msg.text === "string") {
      bytes = utf8.encode(msg.text);
      state = 1;
    } else if (typeof msg.error === "string") {
      bytes = utf8.encode(msg.error);
      state = 3;
    }
    if (bytes.length > MAX_ANSWER_BYTES) {
      bytes = utf8.encode(`the answer to input() is over ${MAX_ANSWER_BYTES} bytes`);
      state = 3;
    }
    new Uint8Array(buf.buffer, INPUT_HEADER_BYTES, bytes.length).set(bytes);
    Atomics.store(buf, 1, bytes.length);
    resumeClock(run);
    Atomics.store(buf, 0, state);
    Atomics.notify(buf, 0);
  }

  /**
   * Whether a stop or timeout may interrupt the run (KeyboardInterrupt, variables kept) rather
   * than restart its worker at once: on an isolated den (the interrupt signal), and any Python
   * run: a worker that is not busy reads `interrupt` (and says so: see awaitInterrupted), which
   * ends its waits for the host (input(), requests), an await of code with top-level await,
   * and the time.sleep of a run entered through JSPI. A JavaScript run has nothing to end but
   * its requests.
   * @param {Inflight} run
   */
  const canInterrupt = (run) => !!(worker && worker.interrupt) || run.python === true || (run.fetches || 0) > 0;

  /**
   * Whether the worker enters the run through JSPI (see worker.js: a den with network, an
   * interactive run without an input buffer), so that it can be suspended: its time.sleep,
   * for one, lets the worker read messages.
   * @param {Inflight} run
   */
  const suspends = (run) => jspi && run.python === true && (run.network === true || (run.interactive === true && !(worker && worker.input)));

  // Without the signal, a run is stopped without a restart only if the worker reads
  // `interrupt` (it waits or sleeps: it answers `interrupted`); busy code cannot be, so a worker
  // that has not answered within this time is restarted.
  const INTERRUPT_ACK_MS = 400;

  /**
   * After interruptRun: how long the run has to end before `restart` (of the worker): the grace
   * on an isolated den, whose signal stops busy code too; elsewhere the grace once the worker
   * answered `interrupted`, else INTERRUPT_ACK_MS.
   * @param {Inflight} run
   * @param {() => void} restart
   */
  function awaitInterrupted(run, restart) {
    if (worker && worker.interrupt) {
      run.timer = setTimeout(restart, INTERRUPT_GRACE_MS);
      return;
    }
    run.timer = setTimeout(restart, INTERRUPT_ACK_MS);
    run.onInterrupted = () => {
      clearTimeout(run.timer);
      run.timer = setTimeout(restart, INTERRUPT_GRACE_MS);
    };
  }

  // In a run entered through JSPI, the interrupt signal must not land while Python is
  // suspended: Pyodide's event loop would raise it in one of its own callbacks, and the
  // suspended code would never resume. Such a run gets `interrupt` first (which ends its
  // waits and sleeps) and the signal only if it still runs this much later (busy code).
  const SIGNAL_DELAY_MS = 200;

  /**
   * Interrupts the run's Python: the signal on an isolated den (not while input() waits on
   * the buffer: state 4 there is its KeyboardInterrupt), and `interrupt` to the worker, which
   * ends what the run waits for from the host (input() through JSPI, its requests) and its
   * time.sleep with KeyboardInterrupt. The host's answers, if they still come, are dropped.
   * @param {Inflight} run
   */
  function interruptRun(run) {
    const buf = worker && worker.input;
    const signal = worker && worker.interrupt;
    if (signal && !run.asking) {
      const sigint = () => {
        if (inflight === run) Atomics.store(signal, 0, 2); // SIGINT
      };
      if (suspends(run)) run.sigint = setTimeout(sigint, SIGNAL_DELAY_MS);
      else sigint();
    }
    if (run.asking) {
      run.asking = false;
      resumeClock(run);
      clearTimeout(run.timer);
      if (buf) {
        Atomics.store(buf, 1, 0);
        Atomics.store(buf, 0, 4);
        Atomics.notify(buf, 0);
      }
    }
    if (worker) {
      /** @type {import("./protocol").DenToWorkerInterrupt} */
      const stop = { t: "interrupt", id: run.id };
      worker.w.postMessage(stop);
    }
  }

  /**
   * Stop (the element's Stop button). The run is interrupted (KeyboardInterrupt, variables
   * kept) where it can be (see canInterrupt); its worker is restarted when it does not end in
   * time (see awaitInterrupted), and at once for a JavaScript run that waits for nothing on a
   * den without isolation.
   * @param {import("./protocol").HostToDenStop} msg
   */
  function onStop(msg) {
    const run = inflight;
    if (!(run && run.started && run.id === msg.id)) {
      // Not started yet (waiting for its worker, or behind another run): it never starts
      // (see pump).
      if ((run && run.id === msg.id) || queue.some((m) => m.id === msg.id)) stoppedEarly.add(msg.id);
      return;
    }
    if (run.stopping || run.interrupted) return;
    run.stopping = true;
    const restart = () => {
      if (inflight !== run) return;
      restartWorker();
      finish(failedReply(run.id, "crashed", "Stopped", "the run was stopped; the worker was restarted (files kept, Python and JavaScript variables lost)"));
    };
    clearTimeout(run.timer);
    if (canInterrupt(run)) {
      interruptRun(run);
      awaitInterrupted(run, restart);
    } else {
      restart();
    }
  }

  async function pump() {
    if (inflight || queue.length === 0) return;
    const msg = /** @type {HostToDenRun} */ (queue.shift());
    inflight = { id: msg.id, timer: 0, timeoutMs: msg.timeoutMs, cap: msg.maxOutputBytes, used: 0, truncated: false, started: false, interactive: msg.interactive === true, network: msg.network === true, python: msg.lang !== "javascript" };
    if (lostBetweenRuns !== null) {
      const why = lostBetweenRuns;
      lostBetweenRuns = null;
      finish(failedReply(msg.id, "crashed", "WorkerError", `this run was not started: after the last run, ${why}; files kept, Python and JavaScript variables lost (run it again)`));
      return;
    }
    for (;;) {
      const ready = workerReady;
      try {
        await ready;
        if (ready === workerReady) break;
      } catch (e) {
        if (ready !== workerReady) continue; // replaced by a restart: wait for the new one
        // The worker did not boot (it was fine before, so this is a crash of the runtime).
        crashInflight(`the Python worker failed to start: ${e.message}`);
        return;
      }
    }
    const started = performance.now();
    inflight.started = true;
    const interrupt = /** @type {RunWorker} */ (worker).interrupt;
    if (interrupt) Atomics.store(interrupt, 0, 0);
    const kill = () => {
      if (!inflight || inflight.id !== msg.id) return;
      restartWorker();
      finish(failedReply(msg.id, "timeout", "TimeoutError", `the run took longer than ${msg.timeoutMs} ms; the worker was restarted (files kept, Python and JavaScript variables lost)`, performance.now() - started));
    };
    inflight.onTimeout = () => {
      if (!inflight || inflight.id !== msg.id) return;
      if (canInterrupt(inflight)) {
        // Python is interrupted (KeyboardInterrupt) where it can be: the signal, and what it
        // waits for (input() through JSPI counts at a tenth, a request in full). A worker that
        // does not end the run within the grace (busy, or catching it) is restarted.
        inflight.interrupted = true;
        interruptRun(inflight);
        awaitInterrupted(inflight, kill);
      } else {
        kill();
      }
    };
    inflight.deadline = performance.now() + msg.timeoutMs;
    inflight.timer = setTimeout(inflight.onTimeout, msg.timeoutMs);
    let sent = msg;
    if (stoppedEarly.delete(msg.id)) {
      // Stopped before it started: none of its code runs, but its files still go to the worker
      // (the host counts them as delivered), which places them and answers at once.
      sent = { ...msg, code: "", lang: "python", js: null, vars: null, stdin: null, interactive: false };
      inflight.stopping = true;
      inflight.stoppedEarly = true;
    }
    /** @type {RunWorker} */ (worker).w.postMessage(sent, sent.put.map((f) => f.data.buffer));
    // A queued run's clock on the host starts now: it has timeoutMs (+ the host's grace).
    if (queuedRuns.delete(msg.id)) send({ t: "started", id: msg.id });
  }

  // The host's `warm` (its warm cache's snapshot, or null) comes after `boot`, once it read
  // that cache; the wasm compiles and the first worker's script loads meanwhile.
  /** @type {(msg: HostToDenWarm) => void} */
  let onWarm = () => {};
  /** @type {Promise<HostToDenWarm>} */
  const warmed = new Promise((resolve) => {
    onWarm = (msg) => {
      onWarm = () => {};
      resolve(msg);
    };
  });

  /** @type {Promise<WebAssembly.Module> | null} */
  let streamCompile = null; // the compile of the wasm streamed in `wasm`

  /** @param {HostToDenBoot} msg */
  async function onBoot(msg) {
    const started = performance.now();
    if (module || stdlib) return; // booted once already
    stdlib = msg.stdlib;
    lock = msg.lock;
    maxMemoryBytes = msg.maxMemoryBytes;
    packages = Array.isArray(msg.packages) ? msg.packages : [];
    standbyWanted = msg.standby !== false;
    // The wasm came as a stream in `wasm` (compiling since), or comes here as bytes.
    const compiling = streamCompile || (msg.wasm instanceof ArrayBuffer ? WebAssembly.compile(msg.wasm) : Promise.reject(new Error("no wasm was handed over")));
    compiling.catch(() => {});
    await probeBlob;
    ensureEarly(); // normally started at hello already
    try {
      module = await compiling;
    } catch (e) {
      send({ t: "load-error", stage: "wasm", message: `pyodide.asm.wasm did not compile: ${e.message}` });
      return;
    }
    // The host's warm cache has an entry of this length (read from its headers, before the host
    // checked it): the first worker starts instantiating Pyodide for it now, and gets the
    // snapshot when `warm` comes (Pyodide reads the bytes only after instantiating).
    const hint = typeof msg.snapshotBytes === "number" && msg.snapshotBytes > 0 ? msg.snapshotBytes : 0;
    if (hint) startWorker(hint);
    const warm = await warmed;
    // A snapshot from the host's warm cache (made by a maker worker on an earlier visit, checked
    // by the host against its SHA-256, packed): the first worker resumes from it instead of booting.
    if (warm.snapshot instanceof Uint8Array && Array.isArray(warm.copies) && typeof warm.snapshotBytes === "number" && warm.snapshotBytes > 0) keepSnapshot(warm.snapshot, warm.copies, warm.snapshotBytes);
    offerSnapshot = warm.wantSnapshot === true;
    const first = /** @type {RunWorker} */ (worker);
    if (!hint) startWorker();
    else if (snapshot && snapshotBytes === hint) {
      const copy = snapshot.slice();
      first.w.postMessage({ t: "snapshot", snapshot: copy, copies: snapshotCopies }, [copy.buffer]);
    } else if (snapshot) {
      // The hint was wrong (the entry changed): this worker sized Pyodide for another length.
      endWorker(first);
      startWorker();
    } else {
      // No entry for these assets after all: the worker boots from scratch.
      first.w.postMessage({ t: "snapshot", snapshot: null, copies: null });
    }
    /** @type {Booted} */
    let booted;
    try {
      booted = await /** @type {Promise<Booted>} */ (workerReady);
    } catch (e) {
      if (typeof e.package === "string") send({ t: "load-error", stage: "package", package: e.package, message: e.message });
      else send({ t: "load-error", stage: "pyodide", message: `Pyodide did not start: ${e.message}` });
      return;
    }
    packagesVerified = true;
    // worker.js falls back to a normal boot when a snapshot does not load: then it is not used again.
    const warmth = snapshot ? (booted.from === "snapshot" ? "hit" : "rejected") : "miss";
    if (warmth === "rejected") keepSnapshot(null, null, 0);
    send({ t: "ready", bootMs: booted.ms, denMs: performance.now() - started, interruptible, warm: warmth, packagesMs: booted.packagesMs });
    // The snapshot for fast restarts is made now, off the critical path, by a separate worker
    // (or came from the host's warm cache); then the standby boots from it. Both start in a
    // later task: spawning copies the snapshot and posts it, and where this page shares its
    // main thread with the host (Chromium without isolated sandboxed iframes) that would hold
    // up the host's `ready` by 80-160 ms.
    setTimeout(() => {
      makeSnapshot();
      refillStandby();
    }, 0);
  }

  /** @param {MessageEvent<HostToDen>} event */
  function onHostMessage(event) {
    const msg = event.data;
    if (!msg || typeof msg !== "object") return; // other scripts of the host page may post here too
    if (msg.t === "boot") {
      // A step of the boot that throws (a worker that cannot be made, a buffer that cannot be
      // posted) is said at once, not left to the host's load timeout.
      onBoot(msg).catch((e) => send({ t: "load-error", stage: "den", message: `the den page could not boot: ${e && e.message ? e.message : e}` }));
    }
    else if (msg.t === "wasm") {
      // pyodide.asm.wasm as it downloads (before `boot`): compiled while the bytes come.
      if (!streamCompile && !module && msg.wasm instanceof ReadableStream) {
        streamCompile = WebAssembly.compileStreaming(new Response(msg.wasm, { headers: { "content-type": "application/wasm" } }));
        streamCompile.catch(() => {});
      }
    }
    else if (msg.t === "warm") onWarm(msg);
    else if (msg.t === "run") {
      // A run that cannot start at once (its worker is booting, or a run is in flight) is said
      // to be `queued`: the host's watchdog then waits for `started` (it allows a boot's time).
      // Any other run starts now, and its clock on the host started when it was posted.
      if (inflight || queue.length > 0 || !worker || !worker.booted) {
        queuedRuns.add(msg.id);
        send({ t: "queued", id: msg.id });
      }
      // A run stopped as it was posted (from its own start listener) never starts either.
      if (msg.stopped === true) stoppedEarly.add(msg.id);
      queue.push(msg);
      pump();
    } else if (msg.t === "input-reply") {
      onInputReply(msg);
    } else if (msg.t === "stop") {
      onStop(msg);
    } else if (msg.t === "fetch-reply") {
      // The host's answer to a fetch of the run in flight goes to its worker; a late one (the
      // run ended, or its worker was replaced) is dropped.
      if (inflight && inflight.started && msg.id === inflight.id && worker) {
        inflight.fetches = Math.max(0, (inflight.fetches || 0) - 1);
        worker.w.postMessage(msg, msg.body instanceof Uint8Array ? [msg.body.buffer] : []);
      }
    } else if (msg.t === "reset") {
      // New interpreter, files gone from the worker (the host re-sends them on the next run).
      // A run in flight is ended as crashed first.
      try {
        if (inflight && inflight.started) crashInflight("the den was reset during the run");
        else restartWorker();
      } catch (e) {
        send({ t: "reset-done", id: msg.id, error: `the den page could not restart the interpreter: ${e && e.message ? e.message : e}` });
        return;
      }
      lostBetweenRuns = null; // the host forgets what the worker held on a reset
      /** @type {Promise<Booted>} */ (workerReady).then(
        (b) => send({ t: "reset-done", id: msg.id, from: b.from, bootMs: b.ms, packagesMs: b.packagesMs }),
        (e) => send({ t: "reset-done", id: msg.id, error: e.message }),
      );
    }
  }

  window.addEventListener("message", (event) => {
    // Only our parent is read, and only once it connected (once).
    if (event.source !== host || refused) return;
    if (connected) return onHostMessage(event);
    const data = event.data;
    if (!data || data.foxden !== "connect") return;
    connected = true;
    const problem = isolationProblem();
    if (problem) {
      refused = true;
      send({ t: "load-error", stage: "isolation", message: problem });
      return;
    }
    send({ t: "hello", protocol: PROTOCOL });
  });
  window.addEventListener("messageerror", (event) => {
    if (event.source === host && connected && !refused) send({ t: "load-error", stage: "message", message: "a message from the host could not be deserialized" });
  });
  // The first run worker starts now, once this page found itself isolated and before the host
  // even connects, from the URL kind the probe is expected to choose (checked when it answers):
  // starting a worker and parsing its ~1.1 MB script (Pyodide's loader included) takes
  // 300-450 ms in Chromium, which then overlaps the iframe's load event, the host's asset fetch
  // and warm cache read instead of following them. It loads nothing and waits for its boot
  // message (spawn), which comes only after the host connected and this page said `hello`.
  if (!isolationProblem()) {
    startEarly(blobGuess);
    probeBlob.then(ensureEarly);
  }
})();
