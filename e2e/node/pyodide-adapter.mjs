// An example runtime adapter for Node.js: each den gets a Pyodide interpreter in a worker thread,
// and a run that outlives its timeoutMs terminates the thread; a new one boots at once, so the
// next run finds it ready (the den's files are the host's and survive; Python variables do not).
// The Node suite uses it to check that foxden's adapter contract carries a real interpreter,
// files in and out, streamed output, displays and interactive input(), in Node.js.
//
// NOT A SANDBOX: Python reaches Node.js through Pyodide's `js` module (files, processes,
// network). Use it for code you trust, or for tests; foxden's isolation is the iframe runtime's.
import { MessageChannel, Worker } from "node:worker_threads";

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
    // input() answers: posted on a port, then the flag the thread waits on is raised.
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(WORKER, { workerData: { answers: port2, flag }, transferList: [port2] });
    live.add(worker);
    worker.once("exit", () => {
      live.delete(worker);
      port1.close();
    });
    const answer = (text) => {
      port1.postMessage(text);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    };
    const entry = { worker, seq: 0, answer };
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
      const { signal, output, ...message } = req; // the functions stay on this side (display and input are not enumerable)
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
        // The run's clock: it stops while input() waits for the host's answer.
        let left = req.timeoutMs;
        let since;
        const tick = () => {
          since = Date.now();
          timer = setTimeout(() => kill(`the run took longer than ${req.timeoutMs} ms`), left);
        };
        const pause = () => {
          clearTimeout(timer);
          left -= Date.now() - since;
        };
        let finished = false;
        const done = (reply) => {
          finished = true;
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
        // Output, displays and questions as Python makes them, then the reply (the thread
        // posts them in that order).
        const onMessage = (m) => {
          if (m.id !== id) return;
          if (m.stream) output(m.stream, m.text);
          else if (m.display) {
            try {
              req.display(m.display);
            } catch (e) {
              output("stderr", `display not shown: ${e.message}\n`);
            }
          } else if (typeof m.input === "string") {
            pause();
            req.input(m.input).then(
              (text) => text,
              () => null, // a failed answer is the end of input
            ).then((text) => {
              if (finished) return; // timed out, stopped or closed meanwhile: the thread is gone
              tick();
              entry.answer(text);
            });
          } else done(m.reply);
        };
        entry.worker.on("message", onMessage);
        entry.worker.once("exit", onExit);
        signal?.addEventListener("abort", onAbort, { once: true });
        tick();
        entry.worker.postMessage({ ...message, id });
      });
    },
  };
}
