// An example runtime adapter for Node.js: each den gets a Pyodide interpreter in a worker thread,
// and a run that outlives its timeoutMs terminates the thread; a new one boots at once, so the
// next run finds it ready (the den's files are the host's and survive; Python variables do not).
// The Node suite uses it to check that foxden's adapter contract carries a real interpreter,
// files in and out, streamed output, in Node.js.
//
// NOT A SANDBOX: Python reaches Node.js through Pyodide's `js` module (files, processes,
// network). Use it for code you trust, or for tests; foxden's isolation is the iframe runtime's.
import { Worker } from "node:worker_threads";

const WORKER = new URL("./pyodide-worker.mjs", import.meta.url);

const failure = (kind, type, message) => ({ error: { kind, type, message, traceback: "" } });

/** `{ start, run, close, reset }` for `openDen({ runtime })`. */
export function pyodideAdapter() {
  const dens = new Map(); // den name -> its thread: { worker, ready, seq }
  const live = new Set(); // every thread not yet exited (liveThreads(), for tests)

  /** A new thread for `den`, in place of any other. Its `ready` rejects if it cannot boot (the
   * thread is then ended and forgotten: the next run boots another). */
  function boot(den) {
    stop(den);
    const worker = new Worker(WORKER);
    live.add(worker);
    worker.once("exit", () => live.delete(worker));
    const entry = { worker, seq: 0 };
    entry.ready = new Promise((resolve, reject) => {
      worker.once("message", (m) => (m.ready ? resolve() : reject(new Error(`Pyodide did not boot: ${m.error}`))));
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the Pyodide thread exited (${code}) while booting`)));
    });
    entry.ready.catch(() => end(den, entry));
    dens.set(den, entry);
    return entry.ready;
  }

  /** Ends this thread, and forgets it if it is still the den's. */
  function end(den, entry) {
    if (dens.get(den) === entry) dens.delete(den);
    entry.worker.terminate();
  }

  function stop(den) {
    const entry = dens.get(den);
    if (entry) end(den, entry);
  }

  return {
    /** Threads that have not exited yet. */
    liveThreads: () => live.size,
    start: ({ den }) => boot(den),
    close: ({ den }) => stop(den),
    reset: ({ den }) => boot(den),
    async run(req) {
      const { signal, output, ...message } = req; // the functions stay on this side
      if (!dens.has(req.den)) boot(req.den);
      const entry = dens.get(req.den);
      try {
        await entry.ready;
      } catch (e) {
        return failure("crashed", "BootError", e.message);
      }
      if (signal?.aborted) return failure("timeout", "TimeoutError", "the host gave up on the run");
      const id = ++entry.seq;
      return new Promise((resolve) => {
        let timer;
        const done = (reply) => {
          clearTimeout(timer);
          entry.worker.off("message", onMessage);
          entry.worker.off("exit", onExit);
          signal?.removeEventListener("abort", onAbort);
          resolve(reply);
        };
        // Python cannot be interrupted from outside while it holds the thread: past timeoutMs
        // (or when the host gives up) the thread is ended and a new one boots for the next run.
        const kill = (why) => {
          done(failure("timeout", "TimeoutError", why));
          // Still the den's thread: a new one boots for the next run. Not when close() (or a
          // reset) already ended it: a closed den must leave no thread behind.
          const mine = dens.get(req.den) === entry;
          end(req.den, entry);
          if (mine) boot(req.den).catch(() => {}); // a failed boot is said by the next run
        };
        const onAbort = () => kill("the host gave up on the run");
        const onExit = (code) => {
          done(failure("crashed", "WorkerExit", `the Pyodide thread exited (${code}) during the run`));
          end(req.den, entry);
        };
        // Output as Python writes it, then the reply (the thread posts them in that order).
        const onMessage = (m) => {
          if (m.id !== id) return;
          if (m.stream) output(m.stream, m.text);
          else done(m.reply);
        };
        entry.worker.on("message", onMessage);
        entry.worker.once("exit", onExit);
        signal?.addEventListener("abort", onAbort, { once: true });
        timer = setTimeout(() => kill(`the run took longer than ${req.timeoutMs} ms`), req.timeoutMs);
        entry.worker.postMessage({ ...message, id });
      });
    },
  };
}
