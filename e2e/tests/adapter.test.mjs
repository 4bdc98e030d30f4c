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
        start(d) { calls.push(["start", d.den]); return new Promise((r) => setTimeout(r, 5)); },
        run(request) {
          window.lastSignal = request.signal;
          calls.push(["run", { ...request, signal: request.signal instanceof AbortSignal, files: Object.fromEntries(Object.entries(request.files).map(([p, b]) => [p, new TextDecoder().decode(b)])) }]);
          const spec = JSON.parse(request.code);
          if (spec.throw) throw new Error(spec.throw);
          if (spec.hang) return new Promise(() => {});
          // JSON has no bytes: { bytes: n } in `files` stands for a Uint8Array of n bytes.
          const files = spec.reply && spec.reply.files;
          for (const [p, v] of Object.entries(files || {})) if (v && typeof v === "object" && "bytes" in v) files[p] = new Uint8Array(v.bytes);
          return Promise.resolve(spec.reply);
        },
        close(d) { calls.push(["close", d.den]); },
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
  assert.deepEqual(start, ["start", "adapted"]);
  assert.deepEqual(close, ["close", "adapted"]);
  assert.equal(request.den, "adapted");
  assert.equal(request.signal, true);
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
    const den = await openDen({ name: "adapted2", runtime: window.makeAdapter(), maxFileBytes: 100, maxDenBytes: 150 });
    const run = (spec, opts) => den.run(JSON.stringify(spec), opts).then((x) => ({ error: x.error && { kind: x.error.kind, type: x.error.type, message: x.error.message }, stdout: x.stdout, stderr: x.stderr, truncated: x.truncated, result: x.result, files: x.files }));
    const out = {
      notObject: await run({ reply: 42 }),
      badKind: await run({ reply: { error: { kind: "pwned", type: "X", message: "m" }, files: { "/work/a.txt": "kept?" } } }),
      badFile: await run({ reply: { files: { "/work/a.txt": 7 } } }),
      threw: await run({ throw: "boom" }),
      tooBig: await run({ reply: { stdout: "ok", files: { "/work/small.txt": "s", "/work/big.bin": { bytes: 101 } } } }),
      loud: await run({ reply: { stdout: "x".repeat(5000), result: "r".repeat(5000) } }, { maxOutputBytes: 100 }),
      pyError: await run({ reply: { error: { kind: "python", type: "ValueError", message: "bad", traceback: "Traceback…" } } }),
      longKey: await run({ reply: { files: { ["/work/" + "x".repeat(100000)]: "y", "/work/ok.txt": "ok" } } }),
      overDen: await run({ reply: { files: { "/work/a.bin": { bytes: 90 }, "/work/b.bin": { bytes: 90 } } } }),
      bigString: await run({ reply: { files: { "/work/s.txt": "s".repeat(101) } } }),
    };
    // A reply whose files cannot be listed, and a run() that throws a huge error: answers.
    const hostile = await openDen({ name: "adapted3", runtime: window.makeAdapter({
      run: (req) => JSON.parse(req.code).proxy
        ? { files: new Proxy({}, { ownKeys() { throw new Error("no keys"); } }) }
        : Promise.reject(new Error("x".repeat(1e6))),
    }) });
    const proxied = await hostile.run(JSON.stringify({ proxy: true }));
    const huge = await hostile.run("{}");
    out.proxied = proxied.error && proxied.error.type;
    out.hugeLength = huge.error.message.length;
    out.stillWorks = (await hostile.list()).length;
    await hostile.close();
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
  assert.deepEqual(r.list, ["/work/ok.txt"]);
  assert.match(r.longKey.stderr, /its path is 100006 UTF-16 units long, longer than any path/);
  assert.equal(r.overDen.error.kind, "storage");
  assert.match(r.overDen.error.message, /maxDenBytes/);
  assert.equal(r.bigString.error.kind, "storage");
  assert.equal(r.proxied, "ProtocolError");
  assert.ok(r.hugeLength < 5000, `${r.hugeLength}`);
  assert.equal(r.stillWorks, 0);
});

test(`${B}: adapter lifecycle: start failures, missing functions and iframe-only options are refused; reset; fork starts it again; close calls close`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const outcome = (p) => p.then(() => "opened", (e) => `${e.name} ${e.code || e.stage || ""} ${e.option || ""}`.trim());
    const out = {};
    const failing = window.makeAdapter({ start: () => Promise.reject(new Error("no backend")) });
    out.rejects = await outcome(openDen({ name: "a1", runtime: failing }));
    out.failedCalls = failing.calls;
    // close() during a run: the run ends at once, and its signal tells the adapter to stop.
    const busy = await openDen({ name: "a5", runtime: window.makeAdapter() });
    const t0 = performance.now();
    const pending = busy.run(JSON.stringify({ hang: true }), { timeoutMs: 60000 });
    await new Promise((r) => setTimeout(r, 50));
    await busy.close();
    const ended = await pending;
    out.closedRun = { type: ended.error.type, ms: performance.now() - t0, aborted: window.lastSignal.aborted };
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
  assert.deepEqual(r.failedCalls, [["close", "a1"]]);
  assert.equal(r.closedRun.type, "DenClosed");
  assert.ok(r.closedRun.ms < 2000, `${r.closedRun.ms}`);
  assert.equal(r.closedRun.aborted, true);
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

test(`${B}: an adapter streams output with request.output while it runs; the answer's text follows, all within the cap`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    let late;
    const typeErrors = [];
    const adapter = {
      start() {},
      close() {},
      async run(req) {
        req.output("stdout", "one\n");
        try { req.output("stdin", "x"); } catch (e) { typeErrors.push(e instanceof TypeError); }
        try { req.output("stdout", { toString: () => "x" }); } catch (e) { typeErrors.push(e instanceof TypeError); }
        await new Promise((res) => setTimeout(res, 300));
        req.output("stderr", "two ✓\n");
        late = req.output;
        return { stdout: "three\n", result: "3" };
      },
    };
    const den = await openDen({ name: "streamed", runtime: adapter });
    const chunks = [];
    const t0 = performance.now();
    const run = await den.run("go", { maxOutputBytes: 15, onOutput: (c) => chunks.push({ stream: c.stream, text: c.text, at: performance.now() - t0 }) });
    const took = performance.now() - t0;
    let lateThrew = false;
    try { late("stdout", "late"); } catch (e) { lateThrew = e instanceof TypeError && /the run has ended/.test(e.message); }
    await den.close();
    return { chunks, took, stdout: run.stdout, stderr: run.stderr, truncated: run.truncated, result: run.result, typeErrors, lateThrew };
  });
  assert.deepEqual(r.chunks.map((c) => [c.stream, c.text]), [["stdout", "one\n"], ["stderr", "two ✓\n"], ["stdout", "thr"]]);
  assert.ok(r.chunks[0].at < r.took - 200, `the first chunk came at ${r.chunks[0].at} ms, the run ended at ${r.took} ms`);
  assert.equal(r.stdout, "one\nthr");
  assert.equal(r.stderr, "two ✓\n");
  assert.equal(r.truncated, true);
  assert.equal(r.result, "3");
  assert.deepEqual(r.typeErrors, [true, true]);
  assert.equal(r.lateThrew, true);
});

test(`${B}: an adapter shows displays with request.display while it runs: checked like a den page's, in order with the output, in the result; bad bundles and the caps throw`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
    const thrown = [];
    const attempt = (req, bundle) => {
      try {
        req.display(bundle);
        thrown.push("shown");
      } catch (e) {
        thrown.push(`${e.constructor.name}: ${/display\(bundle\): /.test(e.message)}`);
      }
    };
    let late;
    const adapter = {
      start() {},
      close() {},
      async run(req) {
        if (req.code === "full") {
          // 16 MiB in all: the second image does not fit; then 1 000 displays at most.
          req.display({ "image/png": new Uint8Array(15 << 20) });
          attempt(req, { "image/png": new Uint8Array(2 << 20) });
          for (let i = 1; i < 1000; i++) req.display({ "text/plain": String(i) });
          attempt(req, { "text/plain": "1001" });
          return {};
        }
        req.output("stdout", "before\n");
        req.display({ "image/png": png, "text/plain": "<Figure>" });
        req.output("stdout", "between\n");
        // An ArrayBuffer is bytes too; SVG, HTML, Markdown, JSON and text are strings.
        req.display({ "image/jpeg": png.buffer.slice(0, 4), "image/svg+xml": "<svg/>", "text/html": "<b>hi</b>", "text/markdown": "*hi*", "application/json": "{}", "text/plain": "all" });
        for (const bad of [null, [], "text", { "text/x-evil": "x" }, { "image/png": "not bytes" }, { "text/plain": 42 }, {},
          Object.fromEntries(Array.from({ length: 17 }, (_, i) => [i ? `text/plain${i}` : "text/plain", "x"])),
          new Proxy({}, { ownKeys() { throw new Error("trap"); } }), { [Symbol("s")]: "x" }]) attempt(req, bad);
        late = req.display;
        return { stdout: "after\n", result: "1" };
      },
    };
    const den = await openDen({ name: "shows", runtime: adapter });
    const seen = [];
    const run = await den.run("go", {
      onOutput: (c) => seen.push(["output", c.text]),
      onDisplay: (d) => seen.push(["display", Object.keys(d.data).join(" "), d.runId]),
    });
    let lateThrew = false;
    try { late({ "text/plain": "late" }); } catch (e) { lateThrew = e instanceof TypeError && /the run has ended/.test(e.message); }
    const displays = run.displays.map((d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v instanceof Uint8Array ? [...v] : v])));
    const full = await den.run("full");
    await den.close();
    return { seen, displays, truncated: run.truncated, result: run.result, stdout: run.stdout, thrown, lateThrew,
      full: { count: full.displays.length, truncated: full.truncated, first: full.displays[0]["image/png"].length, plain: full.displays[0]["text/plain"] } };
  });
  assert.deepEqual(r.seen.map((s) => s.slice(0, 2)), [
    ["output", "before\n"],
    ["display", "image/png text/plain"],
    ["output", "between\n"],
    ["display", "image/jpeg image/svg+xml text/html text/markdown application/json text/plain"],
    ["output", "after\n"],
  ]);
  assert.deepEqual(r.displays, [
    { "image/png": [0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3], "text/plain": "<Figure>" },
    { "image/jpeg": [0x89, 0x50, 0x4e, 0x47], "image/svg+xml": "<svg/>", "text/html": "<b>hi</b>", "text/markdown": "*hi*", "application/json": "{}", "text/plain": "all" },
  ]);
  assert.equal(r.stdout, "before\nbetween\nafter\n");
  assert.equal(r.result, "1");
  assert.equal(r.truncated, false);
  // Ten bad bundles: TypeErrors naming display(bundle); then in "full", two RangeErrors.
  assert.deepEqual(r.thrown, [...Array(10).fill("TypeError: true"), "RangeError: true", "RangeError: true"]);
  assert.equal(r.lateThrew, true);
  // text/plain is always there, as in a den page's displays (an image's is its MIME type).
  assert.deepEqual(r.full, { count: 1000, truncated: true, first: 15 << 20, plain: "<image/png>" });
});

test(`${B}: an adapter reads input() with request.input: onInput answers; the wait does not count against the watchdog; EOF, failures, stdin and misuse`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    let late;
    const adapter = {
      start() {},
      close() {},
      async run(req) {
        const got = [];
        // input and display are not enumerable (a spread of the request leaves them out).
        if (req.code === "nobody") return { result: await req.input("x? ").then(String, (e) => `rejected: ${e.message}`) };
        if (req.code === "stdin") return { result: JSON.stringify([req.stdin, await req.input("x? "), Object.keys({ ...req }).filter((k) => k === "input" || k === "display")]) };
        got.push(await req.input("name? "));
        got.push(await req.input("more? "));
        try { await req.input("fail? "); } catch (e) { got.push(`rejected: ${e.message}`); }
        try { req.input(42); } catch (e) { got.push(e instanceof TypeError); }
        late = req.input;
        return { stdout: got.map(String).join("|") };
      },
    };
    const den = await openDen({ name: "asks", runtime: adapter });
    const prompts = [];
    const t0 = performance.now();
    const run = await den.run("go", {
      // The host gives an adapter timeoutMs + 3 s: the first answer comes after that.
      timeoutMs: 100,
      onInput: ({ prompt, runId }) => {
        prompts.push([prompt, typeof runId]);
        if (prompt === "name? ") return new Promise((res) => setTimeout(() => res("Ada"), 3500));
        if (prompt === "more? ") return null;
        throw new Error("no answer here");
      },
    });
    const took = performance.now() - t0;
    let lateThrew = false;
    try { late("x"); } catch (e) { lateThrew = e instanceof TypeError && /the run has ended/.test(e.message); }
    // With stdin the adapter reads it itself: input() is the end of input, onInput is not asked.
    const scripted = await den.run("stdin", { stdin: "given\n", onInput: () => { prompts.push("asked"); return "no"; } });
    // Nobody to answer (no onInput, no stdin): rejected with the iframe runtime's EOFError text.
    const nobody = await den.run("nobody");
    await den.close();
    return { stdout: run.stdout, error: run.error, took, prompts, lateThrew, scripted: scripted.result, nobody: nobody.result };
  });
  assert.equal(r.error, null);
  assert.ok(r.took > 3400, `took ${r.took} ms`);
  assert.equal(r.stdout, "Ada|null|rejected: onInput failed: Error: no answer here|true");
  assert.deepEqual(r.prompts, [["name? ", "number"], ["more? ", "number"], ["fail? ", "number"]]);
  assert.equal(r.lateThrew, true);
  assert.equal(r.scripted, JSON.stringify(["given\n", null, []]));
  assert.match(r.nobody, /^rejected: nobody answers input\(\) for this run: pass run\(code, \{ onInput \}\)/);
});

test(`${B}: an adapter's display of bytes past 4 GiB throws a RangeError (the length is not read modulo 2^32); the den goes on`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    let thrown = null;
    const adapter = {
      start() {},
      close() {},
      run(req) {
        if (req.code === "huge") {
          try {
            req.display({ "image/png": new Uint8Array(2 ** 32 + 8) });
            thrown = "shown";
          } catch (e) {
            thrown = `${e.constructor.name}: ${e.message}`;
          }
          req.display({ "text/plain": "after" });
        }
        return { result: `'${req.code}'` };
      },
    };
    const den = await openDen({ name: "huge-display", runtime: adapter });
    const limit = (p) => Promise.race([p, new Promise((res) => setTimeout(() => res("hung"), 20000))]);
    const huge = await limit(den.run("huge", { timeoutMs: 5000 }));
    const next = await limit(den.run("next", { timeoutMs: 5000 }));
    await den.close();
    return {
      thrown,
      huge: huge === "hung" ? "hung" : { result: huge.result, displays: huge.displays.map((d) => Object.keys(d).join("+")), truncated: huge.truncated },
      next: next === "hung" ? "hung" : next.result,
    };
  });
  assert.match(r.thrown, /^RangeError: display\(bundle\): not shown/);
  assert.deepEqual(r.huge, { result: "'huge'", displays: ["text/plain"], truncated: true });
  assert.equal(r.next, "'next'");
});

test(`${B}: an adapter's promise whose own then() throws or settles at once, a revoked Proxy display and a fake AbortSignal are errors, and the den goes on`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    const tick = (ms) => new Promise((res) => setTimeout(res, ms));
    const within = (p, ms = 5000) => Promise.race([p.then((v) => ({ v }), (e) => ({ e: `${e.name}: ${e.code || ""} ${e.message}` })), tick(ms).then(() => ({ pending: true }))]);
    const out = {};
    // run() answers a native promise with a then() of its own that throws, then one whose
    // then() resolves synchronously.
    let mode = "throws";
    const adapter = window.makeAdapter({
      run(request) {
        const p = new Promise(() => {});
        if (mode === "throws") p.then = () => { throw new Error("then threw"); };
        else if (mode === "sync") p.then = (res) => res({ stdout: "sync then\n" });
        else if (mode === "display") {
          const { proxy, revoke } = Proxy.revocable({}, {});
          revoke();
          try { request.display(proxy); } catch (e) { out.displayThrew = `${e.name}`; }
          return Promise.resolve({ stdout: "after display\n" });
        } else return Promise.resolve({ stdout: "plain\n" });
        return p;
      },
    });
    const den = await openDen({ name: "then-den", runtime: adapter });
    out.throws = await within(den.run("x", { timeoutMs: 500 }));
    out.write = await within(den.writeFile("/work/x.txt", "1"));
    mode = "sync";
    out.sync = await within(den.run("x", { timeoutMs: 500 }));
    mode = "display";
    out.display = await within(den.run("x"));
    mode = "plain";
    out.fakeSignal = await within(den.run("x", { signal: Object.create(AbortSignal.prototype) }));
    out.plain = await within(den.run("x"));
    await den.close();
    // start() answering such a promise: the opening fails, and the name is free again.
    const p = new Promise(() => {});
    p.then = () => { throw new Error("start's then threw"); };
    out.start = await within(openDen({ name: "then-start", runtime: window.makeAdapter({ start: () => p }) }));
    const again = await within(openDen({ name: "then-start", runtime: window.makeAdapter() }));
    out.again = again.v ? "opened" : again;
    if (again.v) await again.v.close();
    return out;
  });
  assert.equal(r.throws.v?.error?.kind, "crashed", JSON.stringify(r.throws));
  assert.match(r.throws.v.error.message, /then threw/);
  assert.deepEqual(r.write.v?.created, ["/work/x.txt"], JSON.stringify(r.write));
  assert.equal(r.sync.v?.stdout, "sync then\n", JSON.stringify(r.sync));
  assert.equal(r.displayThrew, "TypeError");
  assert.equal(r.display.v?.stdout, "after display\n", JSON.stringify(r.display));
  assert.match(r.fakeSignal.e ?? "", /^DenError: bad-option signal must be an AbortSignal/, JSON.stringify(r.fakeSignal));
  assert.equal(r.plain.v?.stdout, "plain\n");
  assert.match(r.start.e ?? "", /^DenLoadError: .*start's then threw/, JSON.stringify(r.start));
  assert.equal(r.again, "opened");
});

test(`${B}: an adapter that gives back files as the den has them changes nothing of theirs (no write, same mtime)`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen } = window.foxden;
    const den = await openDen({ name: "same-files", runtime: window.makeAdapter(), maxWritesPerMinute: 3 });
    await den.writeFile("/work/a.txt", "same");
    await den.writeFile("/work/c.txt", "also same");
    const before = (await den.list()).map((f) => [f.path, f.mtime]);
    await new Promise((res) => setTimeout(res, 20));
    const reply = { stdout: "", files: { "/work/a.txt": "same", "/work/c.txt": "also same", "/work/b.txt": "new" } };
    const run = await den.run(JSON.stringify({ reply }));
    const after = (await den.list()).map((f) => [f.path, f.mtime]);
    await den.close();
    return { files: run.files, error: run.error, before, after };
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(r.files, { created: ["/work/b.txt"], changed: [], deleted: [] });
  const mtimes = Object.fromEntries(r.after);
  for (const [p, m] of r.before) assert.equal(mtimes[p], m, `${p}'s mtime moved`);
});
