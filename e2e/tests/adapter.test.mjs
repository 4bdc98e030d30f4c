// Runtime adapters (the product sheet: "runtime accepts an adapter with start(), run(request), and
// close()"): `openDen({ runtime: { start, run, close, reset? } })`. The host keeps the files,
// store, snapshots, forks, limits and events; the adapter runs the code. Here the adapters are
// the page's own test doubles that answer scripted replies: what is tested is the host's side,
// which must read every answer like a den page's (bounded, checked, typed errors).
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, BROWSER, logNewErrors } from "../lib.mjs";

let ctx, page, errors;
const B = BROWSER;

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
  // An adapter whose run() answers what the code (JSON) says: `reply` is the answer, `throw`
  // makes run() throw, `hang` never settles. It records every call.
  await page.evaluate(() => {
    window.makeAdapter = (extra = {}) => {
      const calls = [];
      const adapter = {
        calls,
        start() { calls.push(["start"]); return new Promise((r) => setTimeout(r, 5)); },
        run(request) {
          calls.push(["run", { ...request, files: Object.fromEntries(Object.entries(request.files).map(([p, b]) => [p, new TextDecoder().decode(b)])) }]);
          const spec = JSON.parse(request.code);
          if (spec.throw) throw new Error(spec.throw);
          if (spec.hang) return new Promise(() => {});
          // JSON has no bytes: { bytes: n } in `files` stands for a Uint8Array of n bytes.
          const files = spec.reply && spec.reply.files;
          for (const [p, v] of Object.entries(files || {})) if (v && typeof v === "object" && "bytes" in v) files[p] = new Uint8Array(v.bytes);
          return Promise.resolve(spec.reply);
        },
        close() { calls.push(["close"]); },
        ...extra,
      };
      return adapter;
    };
  });
});
afterEach(logNewErrors(() => errors));
after(async () => ctx?.close());

test(`${B}: an adapter den runs through the adapter: every file goes in, output, result and changed files come back and are kept`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, idbStore } = window.foxden;
    const adapter = window.makeAdapter();
    const den = await openDen({ name: "adapted", runtime: adapter, store: idbStore("fx-adapter") });
    await den.writeFile("/drop/in.csv", "a,b\n1,2\n");
    await den.writeFile("/work/old.txt", "old");
    const events = [];
    const chunks = [];
    const run = await den.run(JSON.stringify({ reply: {
      stdout: "hello\n", stderr: "warn\n", result: "42", error: null,
      files: { "/out/sums.csv": "a,3\n", "/work/bin.dat": { bytes: 3 }, "/work/old.txt": null, "/etc/passwd": "x", "/work/../x": "y" },
    } }), { onOutput: (c) => chunks.push(c), timeoutMs: 1234, stdin: "line\n" });
    const list = (await den.list()).map((f) => f.path);
    const sums = await den.readText("/out/sums.csv");
    const info = den.info;
    await den.close();
    // Reopened without the adapter's help: the run's changes were committed to IndexedDB.
    const again = await openDen({ name: "adapted", runtime: window.makeAdapter(), store: idbStore("fx-adapter") });
    const kept = (await again.list()).map((f) => f.path);
    await again.close();
    return { run: { ...run, files: run.files }, list, sums, info, chunks, calls: adapter.calls, kept, events };
  });
  const [start, [, request], close] = r.calls;
  assert.deepEqual(start, ["start"]);
  assert.deepEqual(close, ["close"]);
  assert.equal(request.timeoutMs, 1234);
  assert.equal(request.stdin, "line\n");
  assert.equal(request.lang, "python");
  assert.equal(request.maxOutputBytes, 1048576);
  assert.deepEqual(request.files, { "/drop/in.csv": "a,b\n1,2\n", "/work/old.txt": "old" });
  assert.equal(r.run.stdout, "hello\n");
  assert.match(r.run.stderr, /^warn\n/);
  assert.match(r.run.stderr, /"\/etc\/passwd" was not kept/);
  assert.match(r.run.stderr, /"\/work\/\.\.\/x" was not kept/);
  assert.equal(r.run.result, "42");
  assert.equal(r.run.error, null);
  assert.deepEqual(r.run.files, { created: ["/out/sums.csv", "/work/bin.dat"], changed: [], deleted: ["/work/old.txt"] });
  assert.deepEqual(r.list, ["/drop/in.csv", "/out/sums.csv", "/work/bin.dat"]);
  assert.equal(r.sums, "a,3\n");
  assert.deepEqual(r.chunks.map((c) => c.stream), ["stdout", "stderr"]);
  assert.equal(r.info.kind, "adapter");
  assert.deepEqual(r.kept, ["/drop/in.csv", "/out/sums.csv", "/work/bin.dat"]);
});

test(`${B}: an adapter's bad answers are refused or cut, never kept whole: wrong types, a throw, a file over the cap, output over the cap, no answer`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    const den = await openDen({ name: "adapted2", runtime: window.makeAdapter(), maxFileBytes: 100 });
    const run = (spec, opts) => den.run(JSON.stringify(spec), opts).then((x) => ({ error: x.error && { kind: x.error.kind, type: x.error.type, message: x.error.message }, stdout: x.stdout, truncated: x.truncated, result: x.result, files: x.files }));
    const out = {
      notObject: await run({ reply: 42 }),
      badKind: await run({ reply: { error: { kind: "pwned", type: "X", message: "m" }, files: { "/work/a.txt": "kept?" } } }),
      badFile: await run({ reply: { files: { "/work/a.txt": 7 } } }),
      threw: await run({ throw: "boom" }),
      tooBig: await run({ reply: { stdout: "ok", files: { "/work/small.txt": "s", "/work/big.bin": { bytes: 101 } } } }),
      loud: await run({ reply: { stdout: "x".repeat(5000), result: "r".repeat(5000) } }, { maxOutputBytes: 100 }),
      pyError: await run({ reply: { error: { kind: "python", type: "ValueError", message: "bad", traceback: "Traceback…" } } }),
    };
    const t0 = performance.now();
    out.hang = await run({ hang: true }, { timeoutMs: 200 });
    out.hangMs = performance.now() - t0;
    out.after = await run({ reply: { result: "'alive'" } });
    out.list = (await den.list()).map((f) => f.path);
    await den.close();
    return out;
  });
  assert.deepEqual([r.notObject.error.kind, r.notObject.error.type], ["crashed", "ProtocolError"]);
  assert.equal(r.badKind.error.type, "ProtocolError");
  assert.equal(r.badFile.error.type, "ProtocolError");
  assert.match(r.badFile.error.message, /files\["\/work\/a\.txt"\]/);
  assert.deepEqual([r.threw.error.kind, r.threw.error.type], ["crashed", "AdapterError"]);
  assert.match(r.threw.error.message, /boom/);
  assert.equal(r.tooBig.error.kind, "storage");
  assert.equal(r.tooBig.stdout, "ok");
  assert.deepEqual(r.tooBig.files, { created: [], changed: [], deleted: [] });
  assert.equal(r.loud.stdout.length, 100);
  assert.equal(r.loud.result.length, 100);
  assert.equal(r.loud.truncated, true);
  assert.deepEqual([r.pyError.error.kind, r.pyError.error.type, r.pyError.error.message], ["python", "ValueError", "bad"]);
  assert.equal(r.hang.error.kind, "timeout");
  assert.ok(r.hangMs >= 3000 && r.hangMs < 10000, `${r.hangMs}`);
  assert.equal(r.after.result, "'alive'");
  assert.deepEqual(r.list, []);
});

test(`${B}: adapter lifecycle: start failures, missing functions and iframe-only options are refused; reset; fork starts it again; close calls close`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const outcome = (p) => p.then(() => "opened", (e) => `${e.name} ${e.code || e.stage || ""} ${e.option || ""}`.trim());
    const out = {};
    out.rejects = await outcome(openDen({ name: "a1", runtime: window.makeAdapter({ start: () => Promise.reject(new Error("no backend")) }) }));
    out.throws = await outcome(openDen({ name: "a1", runtime: window.makeAdapter({ start: () => { throw new Error("no"); } }) }));
    out.noClose = await outcome(openDen({ name: "a1", runtime: { start() {}, run() {} } }));
    out.notAdapter = await outcome(openDen({ name: "a1", runtime: { kind: "other" } }));
    out.network = await outcome(openDen({ name: "a1", runtime: window.makeAdapter(), network: { allow: ["https://example.com/*"] } }));
    const noReset = await openDen({ name: "a1", runtime: window.makeAdapter() });
    out.noReset = await outcome(noReset.reset());
    await noReset.close();
    let resets = 0;
    const adapter = window.makeAdapter({ reset() { resets++; } });
    const den = await openDen({ name: "a2", runtime: adapter });
    out.reset = await den.reset();
    out.resets = resets;
    await den.writeFile("/work/f.txt", "forked");
    const fork = await den.fork({ name: "a3" });
    out.forkFiles = (await fork.list()).map((f) => f.path);
    out.forkRun = (await fork.run(JSON.stringify({ reply: { result: "'fork'" } }))).result;
    await fork.close();
    await den.close();
    out.calls = adapter.calls.map((c) => c[0]);
    // The iframe runtime still works beside adapter dens.
    const plain = await openDen({ name: "a4", runtime: iframeRuntime() });
    out.plain = (await plain.run("6 * 7")).result;
    out.plainInfo = plain.info.kind;
    await plain.close();
    return out;
  });
  assert.equal(r.rejects, "DenLoadError runtime");
  assert.equal(r.throws, "DenLoadError runtime");
  assert.equal(r.noClose, "DenError bad-option runtime");
  assert.equal(r.notAdapter, "DenError bad-option runtime");
  assert.equal(r.network, "DenError bad-option network");
  assert.equal(r.noReset, "DenError reset");
  assert.deepEqual(r.reset, { from: "adapter", bootMs: 0 });
  assert.equal(r.resets, 1);
  assert.deepEqual(r.forkFiles, ["/work/f.txt"]);
  assert.equal(r.forkRun, "'fork'");
  assert.deepEqual(r.calls, ["start", "start", "run", "close", "close"]);
  assert.equal(r.plain, "42");
  assert.equal(r.plainInfo, "iframe");
});

test(`${B}: no page errors`, () => {
  assert.deepEqual(errors, []);
});
