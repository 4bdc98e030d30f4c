// A user's program against foxden's published types (dist/foxden.d.ts), type-checked strictly
// and without skipLibCheck by `cargo xtask test` (see tsconfig.json here): a declaration file
// that does not compile, or types that refuse the README's examples, fail the build. Not run.
import {
  decodeSnapshot,
  DenError,
  DenLoadError,
  encodeSnapshot,
  iframeRuntime,
  idbStore,
  memoryStore,
  normalizePath,
  openDen,
  PathError,
  runShell,
  SnapshotError,
  type AdapterRunReply,
  type AdapterRunRequest,
  type RuntimeAdapter,
} from "foxden-sandbox";

// The product sheet's quickstart.
const den = await openDen({
  name: "notes",
  store: idbStore(),
  runtime: iframeRuntime({ denUrl: "/foxden/den/den.html", pyodideUrl: "/foxden/pyodide/" }),
});
await den.writeFile("/drop/sales.csv", "region,amount\nnorth,10\nsouth,20\n");
const run = await den.run("sum([10, 20])", { timeoutMs: 5000, maxOutputBytes: 1 << 20, onOutput: (c) => console.log(c.stream, c.text) });
const result: string | null = run.result;
// A Cancel button: a run's signal, or den.stop() for whatever runs.
const cancel = new AbortController();
const cancellable = den.run("while True: pass", { signal: cancel.signal });
cancel.abort();
const wasRunning: boolean = await den.stop();
console.log((await cancellable).error?.type, wasRunning);
if (run.error) {
  const kind: string = run.error.kind;
  console.log(kind, run.error.type, run.error.message, run.error.traceback);
}
const changed: string[] = [...run.files.created, ...run.files.changed, ...run.files.deleted];
const sh = await den.sh("grep north /drop/sales.csv");
const shOut: [string, string, number, boolean] = [sh.stdout, sh.stderr, sh.code, sh.truncated];
const listing = (await den.list()).map((f) => [f.path, f.size, f.sha256] as const);
const bytes: Uint8Array = await den.snapshot();
await den.restore(bytes);
const fork = await den.fork({ name: "notes-fork" });
await fork.close();
console.log(den.info.kind, den.info.isolation, den.info.loadMs);
await den.close();

// The pure helpers.
const path: string = normalizePath("/work/./a.txt");
const shell = runShell("cat /work/a.txt | wc -l", { "/work/a.txt": "x\n", "/work/b.bin": new Uint8Array(2) }, { maxOutputBytes: 1024 });
const files: Record<string, Uint8Array> = decodeSnapshot(encodeSnapshot({ "/work/a.txt": "x" }), { maxDenBytes: 1 << 20 });

// A runtime adapter of one's own.
const adapter: RuntimeAdapter = {
  start: ({ den }) => console.log("start", den),
  async run(req: AdapterRunRequest): Promise<AdapterRunReply> {
    req.signal?.addEventListener("abort", () => {});
    return { stdout: `${req.lang}: ${req.code}`, result: null, files: { "/out/x.txt": "x", "/work/old.txt": null } };
  },
  close: () => {},
};
const adapted = await openDen({ name: "adapted", runtime: adapter, store: memoryStore() });
await adapted.close();

// The typed errors.
try {
  normalizePath("/work/../x");
} catch (e) {
  if (e instanceof PathError) console.log(e.path, e.rule);
  else if (e instanceof SnapshotError || e instanceof DenError) console.log(e.code);
  else if (e instanceof DenLoadError) console.log(e.stage);
}

// The element: the tag map gives its type, its events their details.
const el = document.querySelector("foxden-den");
if (el) {
  el.timeout = 9000;
  el.addEventListener("output", (ev) => console.log(ev.detail.stream, ev.detail.text));
  el.addEventListener("file-change", (ev) => console.log(ev.detail));
  const ready = await el.ready;
  const r = await el.run("1 + 1");
  const stopped: boolean = await el.stop();
  console.log(ready, r.result, stopped);
}
const made = document.createElement("foxden-den");
made.setAttribute("name", "made");
// A runtime adapter of the page's, or null (the iframe runtime).
made.runtime = { start() {}, run: (req) => ({ stdout: req.code, result: null }), close() {} };
made.runtime = null;
// @ts-expect-error an iframeRuntime() object is not an adapter: the attributes set that runtime
made.runtime = iframeRuntime({ denUrl: "/den/den.html" });

console.log(result, changed, shOut, listing, path, shell.stdout, files, fork.name);
