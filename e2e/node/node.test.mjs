// foxden in Node.js (the product sheet: "Pure helpers such as runShell can run without an
// iframe"). The built module (FOXDEN_DIST, else dist/) is imported as a Node.js program would
// import the package: no DOM, no fetch of file: URLs, no window timers. Checked: the pure
// helpers; that the iframe runtime and idbStore refuse with a typed error saying why; and dens
// with a runtime adapter: a scripted one (the host's side: timeouts, signals, no timers left
// behind) and a real one, Pyodide in a worker thread (pyodide-adapter.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { pyodideAdapter } from "./pyodide-adapter.mjs";

const dist = process.env.FOXDEN_DIST || resolve(import.meta.dirname, "../../dist");
const m = await import(pathToFileURL(join(dist, "foxden.js")).href);
const text = (b) => new TextDecoder().decode(b);

test("the module loads without a DOM and defines no element", { timeout: 120000 }, () => {
  assert.equal(typeof globalThis.document, "undefined");
  assert.equal(typeof globalThis.customElements, "undefined");
  for (const f of ["openDen", "iframeRuntime", "memoryStore", "idbStore", "normalizePath", "runShell", "encodeSnapshot", "decodeSnapshot", "clearWarmCache"]) {
    assert.equal(typeof m[f], "function", f);
  }
  assert.deepEqual(m.liveCounts(), { listeners: 0, connections: 0 });
});

test("foxden/api (api.js, the module without the element) exports the same API and works", { timeout: 120000 }, async () => {
  const api = await import(pathToFileURL(join(dist, "api.js")).href);
  assert.deepEqual(Object.keys(api).sort(), Object.keys(m).sort());
  // Its own wasm module: its classes are not the element build's.
  assert.notEqual(api.Den, m.Den);
  assert.equal(api.runShell("grep north /drop/s.csv", { "/drop/s.csv": "north,1\nsouth,2\n" }).stdout, "north,1\n");
  assert.throws(() => api.normalizePath("/etc/x"), (e) => e instanceof api.PathError && e instanceof api.FoxdenError);
  const back = api.decodeSnapshot(m.encodeSnapshot({ "/work/a": "a" }));
  assert.equal(text(back["/work/a"]), "a");
  const den = await api.openDen({ name: "api", runtime: { start() {}, run: () => ({ stdout: "hi\n", result: "1" }), close() {} } });
  assert.ok(den instanceof api.Den);
  const r = await den.run("x");
  assert.deepEqual([r.stdout, r.result], ["hi\n", "1"]);
  await den.close();
  assert.deepEqual(api.liveCounts(), { listeners: 0, connections: 0 });
});

test("a name is open once per program, whichever foxden module opened it", { timeout: 120000 }, async () => {
  const api = await import(pathToFileURL(join(dist, "api.js")).href);
  const rt = () => ({ start() {}, run: () => ({ result: "1" }), close() {} });
  const a = await m.openDen({ name: "shared-name", runtime: rt() });
  await assert.rejects(api.openDen({ name: "shared-name", runtime: rt() }), (e) => e instanceof api.DenError && e.code === "name-in-use");
  await a.close();
  const b = await api.openDen({ name: "shared-name", runtime: rt() });
  await assert.rejects(m.openDen({ name: "shared-name", runtime: rt() }), (e) => e instanceof m.DenError && e.code === "name-in-use");
  await b.close();
  const c = await m.openDen({ name: "shared-name", runtime: rt() });
  await c.close();
  // The registry both modules use: one per realm, read-only on the global object.
  const reg = globalThis[Symbol.for("foxden.dens")];
  assert.equal(reg.open.has("shared-name"), false);
  const d = Object.getOwnPropertyDescriptor(globalThis, Symbol.for("foxden.dens"));
  assert.deepEqual([d.writable, d.enumerable, d.configurable, Object.isFrozen(reg)], [false, false, false, true]);
  assert.ok(reg.open instanceof Set && reg.closing instanceof Map && Object.isFrozen(reg.open) && Object.isFrozen(reg.closing));
  assert.equal(reg.closing.size, 0);
});

test("pure helpers: paths, the shell, the snapshot codec", { timeout: 120000 }, () => {
  assert.equal(m.normalizePath("/work//a/./b.txt"), "/work/a/b.txt");
  assert.throws(() => m.normalizePath("/work/../etc/passwd"), (e) => e instanceof m.PathError && e.name === "PathError" && e instanceof m.FoxdenError);

  const files = { "/drop/sales.csv": "region,amount\nnorth,10\nsouth,20\n", "/work/bin.dat": new Uint8Array([0, 1, 2]) };
  assert.deepEqual(m.runShell("grep north /drop/sales.csv", files), { stdout: "north,10\n", stderr: "", code: 0, truncated: false });
  assert.equal(m.runShell("cat /drop/sales.csv | grep -v region | wc -l", files).stdout, "2\n");
  assert.equal(m.runShell("ls /work", files).stdout, "bin.dat\n");
  assert.equal(m.runShell("echo a > /out/x", files).code, 2);
  assert.equal(m.runShell("curl http://example.com", files).code, 127);
  assert.equal(m.runShell("cat /drop/sales.csv", files, { maxOutputBytes: 10 }).truncated, true);

  const snap = m.encodeSnapshot(files);
  const back = m.decodeSnapshot(snap);
  assert.deepEqual(Object.keys(back).sort(), ["/drop/sales.csv", "/work/bin.dat"]);
  assert.equal(text(back["/drop/sales.csv"]), files["/drop/sales.csv"]);
  assert.deepEqual([...back["/work/bin.dat"]], [0, 1, 2]);
  // One flipped byte anywhere is refused, with the typed error.
  let refused = 0;
  for (const at of [0, 100, snap.length - 1]) {
    const bad = snap.slice();
    bad[at] ^= 1;
    assert.throws(() => m.decodeSnapshot(bad), (e) => e instanceof m.SnapshotError && typeof e.code === "string");
    refused++;
  }
  assert.equal(refused, 3);
});

test("the iframe runtime, idbStore and the warm cache say why they cannot work here", { timeout: 120000 }, async () => {
  await assert.rejects(m.openDen({ name: "no-page" }), (e) => e instanceof m.DenLoadError && e.stage === "iframe" && /Node\.js/.test(e.message));
  const rt = m.iframeRuntime({ denUrl: "http://127.0.0.1:9/den/den.html", pyodideUrl: "http://127.0.0.1:9/pyodide/" });
  await assert.rejects(m.openDen({ name: "no-page", runtime: rt }), (e) => e instanceof m.DenLoadError && e.stage === "iframe");
  // A relative URL has no page to be relative to.
  assert.throws(() => m.iframeRuntime({ denUrl: "/den/den.html" }), (e) => e instanceof m.DenError && e.code === "bad-option");
  const adapter = { start() {}, run() { return {}; }, close() {} };
  await assert.rejects(m.openDen({ name: "no-idb", store: m.idbStore(), runtime: adapter }), (e) => e instanceof m.DenError && e.code === "storage" && /memoryStore/.test(e.message));
  // Node.js has no Cache Storage: there is no warm cache to clear.
  assert.equal(await m.clearWarmCache(), false);
  // The name is free again after each failed opening.
  const den = await m.openDen({ name: "no-page", runtime: adapter });
  await den.close();
});

test("a den with a scripted adapter: files, output, timeouts, close; no timer left behind", { timeout: 120000 }, async () => {
  const calls = [];
  let lastSignal;
  const adapter = {
    start: ({ den }) => calls.push(["start", den]),
    close: ({ den }) => calls.push(["close", den]),
    run(req) {
      lastSignal = req.signal;
      calls.push(["run", req.code, Object.keys(req.files)]);
      if (req.code === "hang") return new Promise(() => {});
      return new Promise((r) => setTimeout(r, 20)).then(() => ({ stdout: "out\n", result: "7", files: { "/out/new.txt": "new", "/work/a.txt": null } }));
    },
  };
  const chunks = [];
  const den = await m.openDen({ name: "scripted", runtime: adapter });
  assert.equal(den.info.kind, "adapter");
  await den.writeFile("/work/a.txt", "a");
  const r = await den.run("go", { onOutput: (c) => chunks.push(c) });
  assert.equal(r.result, "7");
  assert.equal(r.stdout, "out\n");
  assert.deepEqual(r.files, { created: ["/out/new.txt"], changed: [], deleted: ["/work/a.txt"] });
  assert.ok(r.durationMs >= 15, `durationMs ${r.durationMs} is measured`);
  assert.deepEqual(chunks.map((c) => [c.stream, c.text]), [["stdout", "out\n"]]);
  assert.deepEqual((await den.list()).map((f) => f.path), ["/out/new.txt"]);
  assert.equal((await den.sh("cat /out/new.txt")).stdout, "new");

  // No answer within timeoutMs + 3 s: the run ends as a timeout and its signal is aborted.
  const t0 = performance.now();
  const hung = await den.run("hang", { timeoutMs: 100 });
  const took = performance.now() - t0;
  assert.equal(hung.error.kind, "timeout");
  assert.ok(took >= 3000 && took < 6000, `gave up after ${took} ms`);
  assert.equal(lastSignal.aborted, true);

  // close() ends a run in flight at once, and aborts its signal.
  lastSignal = undefined;
  const runs = calls.length;
  const pending = den.run("hang", { timeoutMs: 60000 });
  while (calls.length === runs) await new Promise((r) => setTimeout(r, 5));
  assert.equal(lastSignal.aborted, false);
  const t1 = performance.now();
  await den.close();
  const closed = await pending;
  assert.ok(performance.now() - t1 < 1000, "ended at once");
  assert.equal(closed.error.kind, "crashed");
  assert.match(closed.error.message, /closed/);
  assert.equal(lastSignal.aborted, true);
  assert.deepEqual(calls.filter((c) => c[0] !== "run"), [["start", "scripted"], ["close", "scripted"]]);
  // Every timer foxden set is cleared: nothing keeps Node.js running.
  assert.deepEqual(process.getActiveResourcesInfo().filter((k) => k === "Timeout"), []);
});

test("an adapter streams output while it runs: onOutput at once, the answer's text after, all within the cap", { timeout: 120000 }, async () => {
  let later;
  const thrown = [];
  const adapter = {
    start() {},
    close() {},
    async run(req) {
      req.output("stdout", "one\n");
      req.output("stderr", "warn\n");
      for (const bad of [["stdin", "x"], ["stdout", 42], [undefined, "x"]]) {
        try {
          req.output(...bad);
        } catch (e) {
          thrown.push(e instanceof TypeError);
        }
      }
      await new Promise((r) => setTimeout(r, 300));
      // Past the cap (16 bytes in all): cut, and the run is truncated.
      req.output("stdout", "two: ééééé\n");
      later = req.output;
      return { stdout: "three\n", result: "1" };
    },
  };
  const den = await m.openDen({ name: "streaming", runtime: adapter });
  const chunks = [];
  const t0 = performance.now();
  const r = await den.run("go", { maxOutputBytes: 16, onOutput: (c) => chunks.push([c.stream, c.text, performance.now() - t0]) });
  const took = performance.now() - t0;
  assert.deepEqual(thrown, [true, true, true]);
  assert.deepEqual(chunks.map(([s, t]) => [s, t]), [["stdout", "one\n"], ["stderr", "warn\n"], ["stdout", "two: é"]]);
  // The first chunks came before the run ended, not with its answer.
  assert.ok(chunks[0][2] < took - 200, `first chunk at ${chunks[0][2]} ms, run ended at ${took} ms`);
  assert.equal(r.stdout, "one\ntwo: é");
  assert.equal(r.stderr, "warn\n");
  assert.equal(r.truncated, true);
  // After the run, output() throws a TypeError.
  assert.throws(() => later("stdout", "late"), (e) => e instanceof TypeError && /the run has ended/.test(e.message));
  await den.close();
});

test("arguments of the wrong type are typed errors, not a crash of the wasm module", { timeout: 120000 }, async () => {
  const bad = (option) => (e) => e instanceof m.DenError && e.code === "bad-option" && e.option === option;
  for (const v of [5, {}, null, undefined, ["/work/a"], Symbol("s")]) {
    assert.throws(() => m.normalizePath(v), bad("path"), String(typeof v));
    assert.throws(() => m.runShell(v, {}), bad("command"));
  }
  assert.throws(() => m.idbStore(5), bad("dbName"));
  const den = await m.openDen({ name: "typed", runtime: { start() {}, run: () => ({ result: "1" }), close() {} } });
  // Den methods reject (they never throw): every one is a promise.
  const calls = [
    ["code", () => den.run(5)],
    ["command", () => den.sh({})],
    ["path", () => den.writeFile(5, "x")],
    ["path", () => den.readFile(null)],
    ["path", () => den.readText(undefined)],
    ["path", () => den.deleteFile([])],
  ];
  for (const [option, call] of calls) {
    const p = call();
    assert.ok(p instanceof Promise);
    await assert.rejects(p, bad(option));
  }
  // The module is fine afterwards.
  await den.writeFile("/work/a.txt", "a");
  assert.equal((await den.run("x")).result, "1");
  assert.equal(m.normalizePath("/work/a.txt"), "/work/a.txt");
  await den.close();
});

test("an option whose getter (or Proxy) throws is the call's error, not an absent option", { timeout: 120000 }, async () => {
  const boom = (where) => ({ get() { throw new Error(`boom: ${where}`); } });
  const thrower = (key) => Object.defineProperty({}, key, boom(key));
  const adapter = () => ({ start() {}, run: (r) => ({ result: String(r.timeoutMs) }), close() {} });
  const opened = (extra) => m.openDen({ name: "getters", runtime: adapter(), ...extra });
  // openDen: the den's own options and the nested ones (runtime, store, network, packages).
  for (const [key, options] of [
    ["name", Object.defineProperty({ runtime: adapter() }, "name", boom("name"))],
    ["maxDenBytes", Object.defineProperty({ name: "getters", runtime: adapter() }, "maxDenBytes", boom("maxDenBytes"))],
    ["onProgress", Object.defineProperty({ name: "getters", runtime: adapter() }, "onProgress", boom("onProgress"))],
    ["run", { name: "getters", runtime: Object.defineProperty({ start() {}, close() {} }, "run", boom("run")) }],
    ["kind", { name: "getters", runtime: adapter(), store: thrower("kind") }],
    ["perMinute", { name: "getters", runtime: adapter(), network: Object.defineProperty({ allow: [] }, "perMinute", boom("perMinute")) }],
    ["proxy", { name: "getters", runtime: adapter(), store: new Proxy({}, { get() { throw new Error("boom: proxy"); } }) }],
    ["length", { name: "getters", runtime: adapter(), packages: new Proxy([], { get: (t, k) => { if (k === "length") throw new Error("boom: length"); return Reflect.get(t, k); } }) }],
    ["0", { name: "getters", runtime: adapter(), packages: new Proxy([""], { get: (t, k) => { if (k === "0") throw new Error("boom: 0"); return Reflect.get(t, k); } }) }],
  ]) {
    await assert.rejects(m.openDen(options), { message: `boom: ${key}` }, key);
  }
  assert.throws(() => m.iframeRuntime(thrower("denUrl")), { message: "boom: denUrl" });
  // run() and fork(): the den is fine afterwards, and its name was never taken by a failed open.
  const den = await opened({});
  await assert.rejects(den.run("1", thrower("timeoutMs")), { message: "boom: timeoutMs" });
  await assert.rejects(den.run("1", thrower("onOutput")), { message: "boom: onOutput" });
  await assert.rejects(den.fork(thrower("name")), { message: "boom: name" });
  await den.writeFile("/work/a.txt", "a");
  await assert.rejects(den.readFile("/work/a.txt", thrower("encoding")), { message: "boom: encoding" });
  assert.equal((await den.run("1", { timeoutMs: 1234 })).result, "1234");
  await den.close();
});

test("an adapter answer that names one file twice (/work/a, /work//a) counts it once against the caps, and its last key is kept", { timeout: 120000 }, async () => {
  let reply;
  const den = await m.openDen({ name: "aliases", maxDenBytes: 1000, runtime: { start() {}, close() {}, run: () => reply } });
  const big = "x".repeat(600);
  // 600 + 600 bytes named by two keys of one path: one 600-byte file, within the 1000-byte cap.
  reply = { files: { "/work/a": big, "/work//a": big.replace(/x/g, "y") } };
  let r = await den.run("go");
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(await den.readText("/work/a"), big.replace(/x/g, "y"));
  // A key deleting a file written by an earlier key of the same answer deletes it, new or not.
  reply = { files: { "/work/b": "b", "/work/./b": null, "/work/a": "a", "/work//a": null } };
  r = await den.run("go");
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual((await den.list()).map((f) => f.path), []);
  // Two different files over the cap together are still refused.
  reply = { files: { "/work/a": big, "/work/b": big } };
  r = await den.run("go");
  assert.equal(r.error.kind, "storage");
  assert.deepEqual((await den.list()).map((f) => f.path), []);
  await den.close();
});

test("an adapter answer that changes a read-only path is not kept there, with a note; other changes are", { timeout: 120000 }, async () => {
  let reply;
  const den = await m.openDen({ name: "guarded", readOnlyPaths: ["/work/data"], runtime: { start() {}, close() {}, run: () => reply } });
  await den.writeFile("/work/data/a.csv", "1,2");
  reply = { files: { "/work/data/a.csv": "spoiled", "/work/data/new.csv": "n", "/work/out.txt": "kept" } };
  let r = await den.run("go");
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(r.files, { created: ["/work/out.txt"], changed: [], deleted: [] });
  assert.match(r.stderr, /foxden: "\/work\/data\/a\.csv" was not kept: it is read-only \(readOnlyPaths\)/);
  assert.match(r.stderr, /foxden: "\/work\/data\/new\.csv" was not kept: it is read-only/);
  reply = { files: { "/work/data/a.csv": null } };
  r = await den.run("go");
  assert.match(r.stderr, /"\/work\/data\/a\.csv" was not kept: it is read-only/);
  // Sending a covered file back unchanged, or deleting one the den does not have, is no change.
  reply = { files: { "/work/data/a.csv": "1,2", "/work/data/none.csv": null } };
  r = await den.run("go");
  assert.equal(r.stderr, "");
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.equal(await den.readText("/work/data/a.csv"), "1,2");
  assert.deepEqual((await den.list()).map((f) => f.path), ["/work/data/a.csv", "/work/out.txt"]);
  await den.close();
});

test("an adapter den's run is stopped by den.stop() or its signal (the adapter's signal aborts); an aborted signal keeps a run from starting", { timeout: 120000 }, async () => {
  const calls = [];
  const adapter = {
    start() {},
    close() {},
    // "hang" never answers until its signal aborts (then it answers, too late to be kept).
    run(r) {
      calls.push(r.code);
      if (r.code !== "hang") return { result: r.code };
      return new Promise((resolve) => r.signal.addEventListener("abort", () => { calls.push("aborted"); resolve({ result: "late", files: { "/work/late.txt": "x" } }); }));
    },
  };
  const listenersBefore = m.liveCounts().listeners;
  const den = await m.openDen({ name: "stopping", runtime: adapter });
  assert.equal(await den.stop(), false);
  const hung = den.run("hang", { timeoutMs: 60000 });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await den.stop(), true);
  let r = await hung;
  assert.deepEqual([r.error.kind, r.error.type, r.result], ["crashed", "Stopped", null]);
  assert.deepEqual(calls, ["hang", "aborted"]);
  assert.deepEqual(await den.list(), []); // the late answer's file is not kept
  // The run's signal does the same.
  const c = new AbortController();
  const hung2 = den.run("hang", { timeoutMs: 60000, signal: c.signal });
  setTimeout(() => c.abort(), 50);
  r = await hung2;
  assert.equal(r.error.type, "Stopped");
  // Aborted before it starts, or while it waits for the den's turn: the adapter never sees it.
  calls.length = 0;
  await assert.rejects(den.run("never", { signal: AbortSignal.abort(new Error("no")) }), { message: "no" });
  const ahead = den.run("hang", { timeoutMs: 60000 });
  const w = new AbortController();
  const behind = den.run("never", { signal: w.signal });
  w.abort();
  await assert.rejects(behind, { name: "AbortError" });
  assert.equal(await den.stop(), true);
  assert.equal((await ahead).error.type, "Stopped");
  assert.equal((await den.run("ok")).result, "ok");
  assert.deepEqual(calls, ["hang", "aborted", "ok"]);
  // A signal that aborts after its run ended stops nothing later.
  const old = new AbortController();
  assert.equal((await den.run("done", { signal: old.signal })).result, "done");
  const next = den.run("hang", { timeoutMs: 60000 });
  old.abort();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await den.stop(), true);
  assert.equal((await next).error.type, "Stopped");
  // A signal of the wrong type is a bad-option error naming it.
  await assert.rejects(den.run("1", { signal: "no" }), (e) => e.code === "bad-option" && e.option === "signal");
  await den.close();
  // Every abort listener went with its run.
  assert.equal(m.liveCounts().listeners, listenersBefore);
});

test("list(path) gives the file at path or the files under that folder; a bad path is a PathError", { timeout: 120000 }, async () => {
  const den = await m.openDen({ name: "listing", runtime: { start() {}, run: () => ({}), close() {} } });
  for (const p of ["/drop/in.csv", "/work/a.txt", "/work/a/b.txt", "/work/a/c/d.txt", "/work/ab.txt"]) await den.writeFile(p, p);
  const paths = async (...args) => (await den.list(...args)).map((f) => f.path);
  assert.deepEqual(await paths(), ["/drop/in.csv", "/work/a.txt", "/work/a/b.txt", "/work/a/c/d.txt", "/work/ab.txt"]);
  assert.deepEqual(await paths("/work/a"), ["/work/a/b.txt", "/work/a/c/d.txt"]);
  assert.deepEqual(await paths("/work//a/./"), ["/work/a/b.txt", "/work/a/c/d.txt"]);
  assert.deepEqual(await paths("/work/a.txt"), ["/work/a.txt"]);
  assert.deepEqual(await paths("/out"), []);
  assert.deepEqual(await paths(undefined), await paths());
  const [f] = await den.list("/drop");
  assert.deepEqual(Object.keys(f).sort(), ["mtime", "path", "sha256", "size"]);
  await assert.rejects(den.list("/etc"), (e) => e instanceof m.PathError && e.rule === "root");
  await assert.rejects(den.list("/work/../drop"), (e) => e instanceof m.PathError);
  await assert.rejects(den.list(5), (e) => e.code === "bad-option" && e.option === "path");
  await den.close();
});

test("vars reach the run as a fresh copy of JSON data; names and values that cannot be are bad-option errors", { timeout: 120000 }, async () => {
  const seen = [];
  const den = await m.openDen({ name: "vars", runtime: { start() {}, close() {}, run: (r) => { seen.push(r.vars); return { result: "ok" }; } } });
  const rows = [{ region: "north", amount: 10 }];
  const when = new Date(0);
  await den.run("x", { vars: { rows, n: 3, s: "é", none: null, when, skip: undefined } });
  await den.run("x");
  assert.deepEqual(seen[0], { rows, n: 3, s: "é", none: null, when: "1970-01-01T00:00:00.000Z" });
  assert.notEqual(seen[0].rows, rows); // a copy, as JSON made it
  assert.equal(seen[1], null);
  const bad = (why) => (e) => e.code === "bad-option" && e.option === "vars" && why.test(e.message);
  const cyclic = {};
  cyclic.self = cyclic;
  for (const [vars, why] of [
    [[1, 2], /object of names/],
    ["rows", /object of names/],
    [{ n: 1n }, /JSON data/],
    [{ c: cyclic }, /JSON data/],
    [{ "a-b": 1 }, /ASCII identifier/],
    [{ "2x": 1 }, /ASCII identifier/],
    [{ __builtins__: {} }, /belong to the interpreter/],
    [{ toJSON: () => [1] }, /object of names/],
    [Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`v${i}`, i])), /more than 1000/],
    [{ big: "x".repeat(16 * 1024 * 1024) }, /at most 16777216 bytes/],
  ]) {
    await assert.rejects(den.run("x", { vars }), bad(why), JSON.stringify(why));
  }
  assert.equal(seen.length, 2, "no refused run reached the adapter");
  await den.close();
});

test("an adapter's hostile answers: a throwing getter refuses the answer; notes and error texts are bounded; close() ends a reset", { timeout: 120000 }, async () => {
  let reply;
  let resetting = false;
  const adapter = {
    start() {},
    close() {},
    run: () => reply,
    reset: () => {
      resetting = true;
      return new Promise(() => {});
    },
  };
  const den = await m.openDen({ name: "hostile", runtime: adapter });
  await den.writeFile("/work/keep.txt", "k");
  let r;
  for (const field of ["files", "stdout", "error"]) {
    reply = { stdout: "x", files: { "/work/new.txt": "n" } };
    Object.defineProperty(reply, field, { get() { throw new Error("boom"); } });
    r = await den.run("go");
    assert.equal(r.error.kind, "crashed", field);
    assert.equal(r.error.type, "ProtocolError");
    assert.match(r.error.message, new RegExp(`reading ${field} threw: Error: boom`));
    assert.deepEqual((await den.list()).map((f) => f.path), ["/work/keep.txt"]);
  }
  reply = { error: { kind: "python", type: "E", message: "m", get traceback() { throw new Error("tb"); } } };
  r = await den.run("go");
  assert.equal(r.error.type, "ProtocolError");
  assert.match(r.error.message, /error\.traceback/);
  // foxden's own notes (paths not kept) may pass the output cap by 1 KiB, no more: output
  // that fills the cap cannot hide them, and 100 of them cannot flood it.
  reply = { stdout: "0123456789", files: { "/etc/passwd": "x", "/work/../y": "y", "/work/ok.txt": "ok" } };
  r = await den.run("go", { maxOutputBytes: 10 });
  assert.equal(r.stdout, "0123456789");
  assert.match(r.stderr, /^foxden: "\/etc\/passwd" was not kept.*\nfoxden: "\/work\/\.\.\/y" was not kept.*\n$/s);
  assert.equal(r.truncated, false);
  assert.deepEqual(r.files.created, ["/work/ok.txt"]);
  reply = { stdout: "0123456789", files: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`/bad/${i}`, "x"])) };
  r = await den.run("go", { maxOutputBytes: 10 });
  assert.equal(Buffer.byteLength(r.stdout + r.stderr), 10 + 1024);
  assert.equal(r.truncated, true);
  // An error's message and traceback cut at the cap make the run truncated.
  reply = { error: { kind: "python", type: "E", message: "m".repeat(100), traceback: "t".repeat(100) } };
  r = await den.run("go", { maxOutputBytes: 10 });
  assert.equal(r.error.message, "m".repeat(10));
  assert.equal(r.error.traceback, "t".repeat(10));
  assert.equal(r.truncated, true);
  reply = { error: { kind: "python", type: "E", message: "short" } };
  assert.equal((await den.run("go", { maxOutputBytes: 10 })).truncated, false);
  // A reset that never settles ends when the den closes, not 60 s later.
  const resetting_ = den.reset();
  while (!resetting) await new Promise((res) => setTimeout(res, 5));
  const t0 = performance.now();
  await den.close();
  await assert.rejects(resetting_, (e) => e instanceof m.DenError && e.code === "closed");
  assert.ok(performance.now() - t0 < 1000);
  assert.deepEqual(process.getActiveResourcesInfo().filter((k) => k === "Timeout"), []);
});

test("changes apply in call order; a close before a run's changes are kept ends it DenClosed; using closes", { timeout: 120000 }, async () => {
  // A write queued behind a run goes first, however soon after the run's end the next is called
  // (the turn is handed on in call order: a call made as the run ended once slipped in first).
  let release;
  const gate = new Promise((r) => (release = r));
  const den = await m.openDen({ name: "order", runtime: { start() {}, close() {}, run: () => gate.then(() => ({})) } });
  const run = den.run("go");
  await new Promise((r) => setTimeout(r, 10));
  const first = den.writeFile("/work/x", "first");
  release();
  let second;
  await gate.then(() => {}).then(() => (second = den.writeFile("/work/x", "second")));
  await Promise.all([run, first, second]);
  assert.equal(await den.readText("/work/x"), "second");
  // Many calls queued at once, and more while they go: each applies in the order it was made.
  const order = [];
  const calls = [];
  for (let i = 0; i < 20; i++) {
    calls.push(den.writeFile("/work/n", String(i)).then(() => order.push(i)));
    if (i % 5 === 0) await Promise.resolve();
  }
  await Promise.all(calls);
  assert.deepEqual(order, [...Array(20).keys()]);
  assert.equal(await den.readText("/work/n"), "19");
  await den.close();

  // close() from onOutput while the answer is being read: the run's files are not kept, and the
  // run says so (it ended DenClosed), rather than succeeding with its changes dropped.
  const closing = await m.openDen({ name: "closing", runtime: { start() {}, close() {}, run: () => ({ stdout: "x\n", files: { "/work/a": "a" } }) } });
  const r = await closing.run("go", { onOutput: () => closing.close() });
  assert.equal(r.error?.type, "DenClosed");
  assert.match(r.stderr, /the den was closed/);
  assert.deepEqual(r.files.created, []);

  // den[Symbol.dispose]() (what `using` calls) and free() close the den: the name is free again
  // and the adapter is closed (they released the Rust object at once, name still taken).
  for (const how of ["dispose", "asyncDispose", "free"]) {
    let closed = 0;
    const d = await m.openDen({ name: "disposed", runtime: { start() {}, close: () => closed++, run: () => ({}) } });
    if (how === "dispose") d[Symbol.dispose]();
    else if (how === "asyncDispose") await d[Symbol.asyncDispose]();
    else d.free();
    await new Promise((res) => setTimeout(res, 20));
    assert.equal(closed, 1, how);
    assert.equal(d.closed, true, how);
    await assert.rejects(d.run("1"), (e) => e instanceof m.DenError && e.code === "closed");
    await (await m.openDen({ name: "disposed", runtime: { start() {}, close() {}, run: () => ({}) } })).close();
  }
});

test("detached buffers are told apart in Node.js 20 too (no ArrayBuffer.prototype.detached)", { timeout: 120000 }, async () => {
  const detached = (view = false) => {
    const b = new ArrayBuffer(8);
    const v = new Float32Array(b);
    structuredClone(b, { transfer: [b] });
    return view ? v : b;
  };
  const den = await m.openDen({ name: "detached", runtime: { start() {}, close() {}, run: () => ({}) } });
  for (const data of [detached(), detached(true)]) {
    await assert.rejects(den.writeFile("/work/gone.bin", data), (e) => e instanceof m.DenError && e.code === "bad-data" && /detached|transferred/.test(e.message));
  }
  await assert.rejects(den.restore(detached()), (e) => e instanceof m.SnapshotError && e.code === "truncated");
  assert.throws(() => m.decodeSnapshot(detached(true)), (e) => e instanceof m.SnapshotError && e.code === "truncated");
  assert.equal(Object.values(m.decodeSnapshot(m.encodeSnapshot({ "/drop/e.bin": detached() })))[0].length, 0);
  // An empty buffer that was never transferred is just empty.
  await den.writeFile("/work/empty.bin", new ArrayBuffer(0));
  assert.equal((await den.readFile("/work/empty.bin")).length, 0);
  await den.close();
});

test("Pyodide in a worker thread as the adapter: the quickstart, variables, timeouts, snapshots, forks", { timeout: 120000 }, async () => {
  const adapter = pyodideAdapter();
  const den = await m.openDen({ name: "notes", runtime: adapter });
  try {
    // The product sheet's quickstart, with this adapter instead of iframeRuntime().
    await den.writeFile("/drop/sales.csv", "region,amount\nnorth,10\nsouth,20\n");
    const run = await den.run(`
import csv
rows = list(csv.DictReader(open("/drop/sales.csv")))
total = sum(float(row["amount"]) for row in rows)
open("/out/total.txt", "w").write(f"{total}\\n")
total
`, { timeoutMs: 5000 });
    assert.equal(run.error, null, JSON.stringify(run.error));
    assert.equal(run.result, "30.0");
    assert.deepEqual(run.files.created, ["/out/total.txt"]);
    assert.equal((await den.sh("grep north /drop/sales.csv")).stdout, "north,10\n");
    assert.equal(await den.readText("/out/total.txt"), "30.0\n");
    // vars reach Python as JSON types, as in the browser's worker.
    const rv = await den.run("f'{label}: {sum(r[\"amount\"] for r in extra)}'", { vars: { label: "more", extra: [{ amount: 1.5 }, { amount: 2 }] } });
    assert.equal(rv.error, null, JSON.stringify(rv.error));
    assert.equal(rv.result, "'more: 3.5'");

    // Variables live on between runs; output (streamed as Python writes it), stdin and Python
    // errors come back.
    const chunks = [];
    const r2 = await den.run("print(input('name? '))\nimport time\ntime.sleep(1.5)\ntotal * 2", { stdin: "Ada\n", onOutput: (c) => chunks.push([c.text, performance.now()]) });
    const ended = performance.now();
    assert.equal(r2.result, "60.0");
    assert.equal(r2.stdout, "name? Ada\n");
    assert.equal(chunks.map(([t]) => t).join(""), "name? Ada\n");
    assert.ok(chunks[0][1] < ended - 500, "the output came while the run went on");
    const r3 = await den.run("import os\nos.remove('/drop/sales.csv')\n1/0");
    assert.equal(r3.error.kind, "python");
    assert.equal(r3.error.type, "ZeroDivisionError");
    assert.match(r3.error.traceback, /ZeroDivisionError/);
    assert.deepEqual(r3.files.deleted, ["/drop/sales.csv"]);

    // input() without stdin asks onInput (the thread waits; its clock stops meanwhile), and
    // foxden.display shows a MIME bundle: both reach the host through the adapter's request.
    const asked = [], shown = [];
    const r4 = await den.run("name = input('name? ')\nimport foxden\nfoxden.display({'text/plain': name, 'image/png': b'\\x89PNG'})\ntry:\n    input('more? ')\nexcept EOFError:\n    print('eof')\nname", {
      timeoutMs: 1000,
      onInput: ({ prompt }) => {
        asked.push(prompt);
        return prompt === "name? " ? new Promise((res) => setTimeout(() => res("Ada"), 1500)) : null;
      },
      onDisplay: (d) => shown.push(d.data),
    });
    assert.equal(r4.error, null, JSON.stringify(r4.error));
    assert.equal(r4.result, "'Ada'");
    assert.equal(r4.stdout, "name? Ada\nmore? eof\n");
    assert.deepEqual(asked, ["name? ", "more? "]);
    assert.deepEqual(shown.map((d) => [d["text/plain"], [...d["image/png"]]]), [["Ada", [0x89, 0x50, 0x4e, 0x47]]]);
    assert.deepEqual(r4.displays, shown);

    // A loop past timeoutMs: the adapter kills its thread; the files stay, the variables go.
    const hung = await den.run("while True: pass", { timeoutMs: 300 });
    assert.equal(hung.error.kind, "timeout");
    assert.equal((await den.run("'total' in globals()")).result, "False");
    // A run printing without end is cut at maxOutputBytes and stopped at its timeoutMs.
    const loud = await den.run("while True: print('x' * 1000)", { timeoutMs: 500, maxOutputBytes: 2000 });
    assert.equal(loud.error.kind, "timeout");
    assert.equal(loud.truncated, true);
    assert.equal(loud.stdout.length, 2000);
    assert.deepEqual((await den.list()).map((f) => f.path), ["/out/total.txt"]);

    // What the code does to the file system is an answer, not a lost thread: a removed root
    // (its files deleted), a link, a directory where a file was.
    const rm = await den.run("import shutil, os\nshutil.rmtree('/out')\nos.makedirs('/work/d')\nos.symlink('/work', '/work/loop')\n'ok'");
    assert.equal(rm.error, null, JSON.stringify(rm.error));
    assert.deepEqual(rm.files.deleted, ["/out/total.txt"]);
    await den.writeFile("/out/total.txt", "30.0\n");
    // stdin as the iframe runtime gives it: the text, then EOF.
    const eof = await den.run("import sys\n[sys.stdin.read(), sys.stdin.read()]", { stdin: "abc" });
    assert.equal(eof.result, "['abc', '']");

    // A snapshot opens elsewhere, and a fork gets its own interpreter and files.
    const snap = await den.snapshot();
    const fork = await den.fork({ name: "notes-fork" });
    try {
      await fork.run("open('/work/only-fork.txt', 'w').write('f')");
      assert.deepEqual((await fork.list()).map((f) => f.path), ["/out/total.txt", "/work/only-fork.txt"]);
      assert.deepEqual((await den.list()).map((f) => f.path), ["/out/total.txt"]);
    } finally {
      await fork.close();
    }
    const copy = await m.openDen({ name: "notes-copy", runtime: adapter, snapshot: snap });
    try {
      assert.equal((await copy.run("open('/out/total.txt').read()")).result, "'30.0\\n'");
      // Closed during a run that never ends: its thread goes, and no other boots.
      const spinning = copy.run("while True: pass");
      await new Promise((res) => setTimeout(res, 200));
      await copy.close();
      assert.equal((await spinning).error.kind, "crashed");
    } finally {
      await copy.close();
    }
  } finally {
    await den.close();
  }
  // Every thread of every den (the den, its fork, the copy, the ones after timeouts) has exited.
  const deadline = Date.now() + 10000;
  while (adapter.liveThreads() > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  assert.equal(adapter.liveThreads(), 0);
});
