// An example runtime adapter for Node.js: each den gets a Pyodide interpreter in a worker thread,
// and a run that outlives its timeoutMs terminates the thread (a new one boots for the next run;
// the den's files are the host's and survive). The Node suite uses it to check that foxden's
// adapter contract carries a real interpreter, files in and out, in Node.js.
//
// NOT A SANDBOX: Python reaches Node.js through Pyodide's `js` module (files, processes,
// network). Use it for code you trust, or for tests; foxden's isolation is the iframe runtime's.
import { Worker } from "node:worker_threads";

const WORKER = new URL("./pyodide-worker.mjs", import.meta.url);

/** `{ start, run, close, reset }` for `openDen({ runtime })`. */
export function pyodideAdapter() {
  const dens = new Map(); // den name -> { worker, ready }

  function boot(den) {
    const worker = new Worker(WORKER);
    const ready = new Promise((resolve, reject) => {
      worker.once("message", (m) => (m.ready ? resolve() : reject(new Error(m.error))));
      worker.once("error", reject);
    });
    const entry = { worker, ready, seq: 0 };
    dens.set(den, entry);
    return ready;
  }

  function stop(den) {
    const entry = dens.get(den);
    dens.delete(den);
    if (entry) entry.worker.terminate();
  }

  return {
    start: ({ den }) => boot(den),
    close: ({ den }) => stop(den),
    reset: ({ den }) => (stop(den), boot(den)),
    async run(req) {
      let entry = dens.get(req.den);
      if (!entry) {
        await boot(req.den);
        entry = dens.get(req.den);
      }
      await entry.ready;
      const id = ++entry.seq;
      const { signal, ...message } = req;
      return new Promise((resolve) => {
        let timer;
        const done = (reply) => {
          clearTimeout(timer);
          entry.worker.off("message", onMessage);
          signal?.removeEventListener("abort", onAbort);
          resolve(reply);
        };
        // Past timeoutMs (or when the host gives up), the thread is killed: Python cannot be
        // interrupted from outside while it holds the thread, and a new one boots at the next run.
        const kill = (why) => {
          stop(req.den);
          done({ error: { kind: "timeout", type: "TimeoutError", message: why, traceback: "" } });
        };
        const onAbort = () => kill("the host gave up on the run");
        const onMessage = (m) => m.id === id && done(m.reply);
        entry.worker.on("message", onMessage);
        signal?.addEventListener("abort", onAbort, { once: true });
        timer = setTimeout(() => kill(`the run took longer than ${req.timeoutMs} ms`), req.timeoutMs);
        entry.worker.postMessage({ ...message, id });
      });
    },
  };
}
