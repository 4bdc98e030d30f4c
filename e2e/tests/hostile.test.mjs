// The hostile-den suite (issue 9 item 4, issue 15): the host talks to a den page that is under
// the attacker's control (e2e/pages/hostile-den.html runs each run's "code" as a JavaScript
// scenario with the host's port). For every attack: the host rejects the reply with a clear
// error or ignores the message, stays responsive (an honest run right after works), and the
// store is byte-identical (SHA-256 of every file, computed in the page, before and after).
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, BROWSER, logNewErrors } from "../lib.mjs";

let ctx, page, errors;
const B = BROWSER;
const MAX_DEN_BYTES = 1 << 20;
const dialogs = [];

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  await page.evaluate(async (maxDenBytes) => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    const den = await openDen({
      name: "hostile",
      store: memoryStore(),
      maxDenBytes,
      runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html", pyodideUrl: "/pyodide/" }),
    });
    await den.writeFile("/drop/a.csv", "x,y\n1,2\n");
    await den.writeFile("/work/b.bin", new Uint8Array([0, 1, 2, 255, 254]));
    await den.writeFile("/out/c.txt", "kept");
    window.den = den;
    // SHA-256 of every file, from the bytes the host returns.
    window.digest = async () => {
      const parts = [];
      for (const f of await den.list()) {
        const bytes = await den.readFile(f.path);
        const h = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
        parts.push(`${f.path}:${Array.from(h, (b) => b.toString(16).padStart(2, "0")).join("")}`);
      }
      return parts.join("\n");
    };
    window.baseline = await window.digest();
  }, MAX_DEN_BYTES);
});

afterEach(logNewErrors(() => errors));

after(async () => {
  await ctx?.close();
});

/** Runs a scenario; then checks the store and that an honest run works. */
async function attack(code, opts = {}) {
  const out = await page.evaluate(
    async (code, opts) => {
      const t0 = performance.now();
      const r = await window.den.run(code, { timeoutMs: 2000, ...opts });
      const ms = performance.now() - t0;
      const same = (await window.digest()) === window.baseline;
      const next = await window.den.run(`post(honest({ result: "'alive'" }))`, { timeoutMs: 5000 });
      return { r, ms, same, next: next.result, nextError: next.error, iframes: document.querySelectorAll("iframe[data-foxden-den]").length, href: location.href };
    },
    code,
    opts,
  );
  assert.equal(out.same, true, "the store must be byte-identical");
  assert.equal(out.next, "'alive'", `the host must stay responsive: ${JSON.stringify(out.nextError)}`);
  assert.equal(out.iframes, 1, "exactly one den iframe");
  assert.match(out.href, /\/e2e\/index\.html$/);
  return out.r;
}

const refused = (r, pattern) => {
  assert.equal(r.error?.kind, "crashed", JSON.stringify(r));
  assert.equal(r.error.type, "ProtocolError");
  if (pattern) assert.match(r.error.message, pattern);
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.equal(r.restarted, true);
};

const notKept = (r) => {
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.match(r.stderr, /was not kept|was ignored/);
};

// --- paths ---
test(`${B}: hostile done: a traversal path is not kept`, async () => {
  notKept(await attack(`post(honest({ changed: [{ path: "/drop/../etc/x", data: new Uint8Array([1]) }] }))`));
});
test(`${B}: hostile done: a path outside /drop, /out, /work is not kept`, async () => {
  notKept(await attack(`post(honest({ changed: [{ path: "/etc/passwd", data: new Uint8Array([1]) }] }))`));
});
test(`${B}: hostile done: a relative path is not kept`, async () => {
  notKept(await attack(`post(honest({ changed: [{ path: "work/x", data: new Uint8Array([1]) }] }))`));
});
test(`${B}: hostile done: thousands of long invalid paths are noted twenty by name, shortly, then counted`, async () => {
  // Once a note per path, each holding the path twice in full: 20 000 such paths made a
  // gigabyte of notes and stopped the host's module.
  const r = await attack(
    `const p = "/work/" + "\\u200b".repeat(4090);
    post(honest({ changed: Array.from({ length: 2500 }, () => ({ path: p, data: new Uint8Array([1]) })), deleted: new Array(2500).fill(p) }));`,
    { timeoutMs: 20000 },
  );
  notKept(r);
  assert.match(r.stderr, /foxden: 4980 more invalid paths were not kept/);
  assert.equal(r.stderr.match(/was (not kept|ignored): invalid path \(too-long\)/g).length, 20);
  assert.ok(r.stderr.length < 20000, `${r.stderr.length} characters of notes`);
});
test(`${B}: hostile done: paths of more than 24 Mi UTF-16 units in all refuse the reply before they are copied`, async () => {
  refused(
    await attack(`const p = "/work/" + "\\u200b".repeat(4090);
    post(honest({ deleted: new Array(10000).fill(p) }));`, { timeoutMs: 20000 }),
    /24 Mi UTF-16 units in all/,
  );
});
test(`${B}: hostile done: a file over maxFileBytes refuses the changes before anything is copied`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    // The size of the host module's memory (it only grows): wasm-bindgen's init, called again,
    // resolves the module's exports.
    const exports = await (await import("/foxden_wasm.js")).default();
    const wasmBytes = () => exports.memory.buffer.byteLength;
    const den = await openDen({ name: "big-file", store: memoryStore(), maxFileBytes: 1000, maxDenBytes: 512 << 20, readOnlyPaths: ["/work/ro"], runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html", pyodideUrl: "/pyodide/" }) });
    const before = wasmBytes();
    const r = await den.run(
      `const a = new Uint8Array(200 << 20); a[5] = 1;
      post(honest({ changed: [{ path: "/work/small.txt", data: new Uint8Array([1]) }, { path: "/work/big.bin", data: a }] }), [a.buffer]);`,
      { timeoutMs: 20000 },
    );
    const grew = wasmBytes() - before;
    const list = (await den.list()).map((f) => f.path);
    // A file over the cap that would not be kept anyway (read-only, or at an invalid path)
    // does not refuse the others.
    await den.writeFile("/work/ro/data.csv", "a,b");
    const ro = await den.run(
      `post(honest({ changed: [{ path: "/work/ro/data.csv", data: new Uint8Array(2000) }, { path: "/etc/big", data: new Uint8Array(2000) }, { path: "/work/ok.txt", data: new Uint8Array([1]) }] }));`,
      { timeoutMs: 20000 },
    );
    // An empty read-only file made too big to copy: its content is not taken to be empty (the
    // den's), so it is noted and shipped again before the next run.
    await den.writeFile("/work/ro/empty.txt", "");
    const empty = await den.run(`post(honest({ changed: [{ path: "/work/ro/empty.txt", data: new Uint8Array(2000) }] }));`, { timeoutMs: 20000 });
    const shipped = await den.run(`post(honest({ result: "'" + msg.put.map((f) => f.path + " " + f.data.length).join(",") + "'" }));`, { timeoutMs: 20000 });
    await den.close();
    // A file that is not copied does not count against the reply's bytes either (maxDenBytes).
    // (Nor one that would replace a folder holding a read-only path.)
    const capped = await openDen({ name: "big-file-cap", store: memoryStore(), maxFileBytes: 1000, maxDenBytes: 4000, readOnlyPaths: ["/work/ro/log"], runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html", pyodideUrl: "/pyodide/" }) });
    await capped.writeFile("/work/ro/log", "x");
    const c = await capped.run(`post(honest({ changed: [{ path: "/work/out.txt", data: new Uint8Array([1]) }, { path: "/work/ro/log", data: new Uint8Array(8000) }, { path: "/work/ro", data: new Uint8Array(8000) }] }));`, { timeoutMs: 20000 });
    await capped.close();
    return {
      error: r.error, files: r.files, grew, list, before, ro: { error: ro.error, files: ro.files, stderr: ro.stderr },
      empty: { error: empty.error, stderr: empty.stderr, files: empty.files }, shipped: shipped.result,
      capped: { error: c.error, files: c.files, stderr: c.stderr },
    };
  });
  assert.equal(out.empty.error, null, JSON.stringify(out.empty));
  assert.match(out.empty.stderr, /"\/work\/ro\/empty\.txt" was not kept: it is read-only/);
  assert.deepEqual(out.empty.files, { created: [], changed: [], deleted: [] });
  assert.equal(out.shipped, "'/work/ro/empty.txt 0'");
  assert.equal(out.capped.error, null, JSON.stringify(out.capped));
  assert.deepEqual(out.capped.files, { created: ["/work/out.txt"], changed: [], deleted: [] });
  assert.match(out.capped.stderr, /"\/work\/ro\/log" was not kept: it is read-only/);
  assert.match(out.capped.stderr, /"\/work\/ro" was not kept: read-only paths \(readOnlyPaths\) lie inside it/);
  assert.equal(out.ro.error, null, JSON.stringify(out.ro));
  assert.deepEqual(out.ro.files, { created: ["/work/ok.txt"], changed: [], deleted: [] });
  assert.match(out.ro.stderr, /"\/work\/ro\/data\.csv" was not kept: it is read-only/);
  assert.match(out.ro.stderr, /"\/etc\/big" was not kept: invalid path/);
  assert.equal(out.error?.kind, "storage", JSON.stringify(out.error));
  assert.match(out.error.message, /"\/work\/big\.bin" would hold 209715200 bytes, over the cap of 1000 bytes per file \(maxFileBytes\)/);
  assert.deepEqual(out.files, { created: [], changed: [], deleted: [] });
  assert.deepEqual(out.list, []);
  assert.ok(out.before > 0);
  assert.ok(out.grew < 64 << 20, `the host's memory grew by ${out.grew} bytes`);
});
test(`${B}: hostile done: notes on invalid paths cannot hide that the run's changes were not kept`, async () => {
  const r = await attack(
    `post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: "x".repeat(1000) }] });
    const changed = [{ path: "/work/b.bin/x", data: new Uint8Array([1]) }];
    for (let i = 0; i < 40; i++) changed.push({ path: "/etc/f" + i, data: new Uint8Array([1]) });
    post(honest({ error: { kind: "python", type: "E", message: "m", traceback: "" }, changed }));`,
    { maxOutputBytes: 1000 },
  );
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.match(r.stderr, /^foxden: the run's file changes were not kept: /m);
});
test(`${B}: hostile done: a traversal deletion is ignored`, async () => {
  notKept(await attack(`post(honest({ deleted: ["/drop/../work/b.bin"] }))`));
});
test(`${B}: hostile done: a path with NUL and control characters is not kept`, async () => {
  notKept(await attack(`post(honest({ changed: [{ path: "/work/a\\u0000b", data: new Uint8Array([1]) }, { path: "/work/\\u001b[31m", data: new Uint8Array([1]) }] }))`));
});
test(`${B}: hostile done: a 100 KB path is refused before it is copied`, async () => {
  refused(await attack(`post(honest({ changed: [{ path: "/work/" + "a".repeat(100000), data: new Uint8Array([1]) }] }))`), /path/);
});

// --- wrong types ---
test(`${B}: hostile done: data that only looks like bytes ({length: 2^32-1}) is refused`, async () => {
  refused(await attack(`post(honest({ changed: [{ path: "/work/x", data: { length: 0xFFFFFFFF } }] }))`), /Uint8Array/);
});
test(`${B}: hostile done: data null is refused`, async () => {
  refused(await attack(`post(honest({ changed: [{ path: "/work/x", data: null }] }))`), /Uint8Array/);
});
test(`${B}: hostile done: a number for a path is refused`, async () => {
  refused(await attack(`post(honest({ changed: [{ path: 42, data: new Uint8Array([1]) }] }))`), /path/);
});
test(`${B}: hostile done: changed as an object is refused`, async () => {
  refused(await attack(`post(honest({ changed: { length: 3 } }))`), /list/);
});
test(`${B}: hostile done: numbers in deleted are refused`, async () => {
  refused(await attack(`post(honest({ deleted: [1, 2, 3] }))`), /deleted/);
});
test(`${B}: hostile done: a number for result is refused`, async () => {
  refused(await attack(`post(honest({ result: 42 }))`), /result/);
});
test(`${B}: hostile done: an unknown error kind is refused`, async () => {
  refused(await attack(`post(honest({ error: { kind: "pwned", type: "X", message: "m", traceback: "" } }))`), /error\.kind/);
});
test(`${B}: hostile done: a string for error is refused`, async () => {
  refused(await attack(`post(honest({ error: "boom" }))`), /error/);
});
test(`${B}: hostile done: an object with getters arrives as plain data (getters run in the den, not the host)`, async () => {
  const r = await attack(`
    let calls = 0;
    const reply = honest({});
    Object.defineProperty(reply, "result", { enumerable: true, get() { calls++; return "'from a getter'"; } });
    post(reply);`);
  assert.equal(r.result, "'from a getter'");
  assert.equal(r.error, null);
});
test(`${B}: hostile done: a non-boolean truncated is refused`, async () => {
  refused(await attack(`post(honest({ truncated: "yes" }))`), /truncated/);
});
test(`${B}: hostile done: tooManyFiles that is not a whole number, or missing, is refused`, async () => {
  refused(await attack(`post(honest({ tooManyFiles: 1.5 }))`), /tooManyFiles/);
  refused(await attack(`post(honest({ tooManyFiles: undefined }))`), /tooManyFiles/);
});
test(`${B}: hostile done: tooManyFiles refuses every change the reply carries (storage error naming maxFiles)`, async () => {
  const r = await attack(`post(honest({ tooManyFiles: 12000, restarted: true, changed: [{ path: "/work/x", data: new Uint8Array([1]) }], deleted: ["/work/y"] }))`);
  assert.equal(r.error?.kind, "storage", JSON.stringify(r.error));
  assert.match(r.error.message, /12000 files.*maxFiles.*nothing was changed/);
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
});

// --- sizes and counts ---
test(`${B}: hostile done: a sparse Array(2^32-1) of changes is refused at once`, async () => {
  const r = await attack(`post(honest({ changed: new Array(2 ** 32 - 1) }))`);
  refused(r, /cap of 20000/);
});
test(`${B}: hostile done: list lengths whose sum wraps in 32 bits are refused at once`, async () => {
  // 2^32-1 + 1 is 0 in a wasm32 usize: the count must be taken in 64 bits.
  for (const lists of [
    `changed: new Array(2 ** 32 - 1), deleted: ["/work/x"]`,
    `changed: [{ path: "/work/x", data: new Uint8Array(1) }], deleted: new Array(2 ** 32 - 1)`,
  ]) {
    const r = await attack(`post(honest({ ${lists} }))`);
    refused(r, /cap of 20000/);
  }
});
test(`${B}: hostile done: 100 000 empty files are refused (file cap)`, async () => {
  const r = await attack(`
    const changed = [];
    for (let i = 0; i < 100000; i++) changed.push({ path: "/work/f" + i, data: new Uint8Array(0) });
    post(honest({ changed }));`, { timeoutMs: 10000 });
  refused(r, /cap of 20000/);
});
test(`${B}: hostile done: files beyond maxDenBytes are not copied and not kept (storage error)`, async () => {
  const before = await page.evaluate(() => window.foxden.liveCounts());
  const r = await attack(`
    const a = new Uint8Array(${MAX_DEN_BYTES});
    const b = new Uint8Array(${MAX_DEN_BYTES});
    post(honest({ changed: [{ path: "/work/a", data: a }, { path: "/work/b", data: b }] }), [a.buffer, b.buffer]);`);
  assert.equal(r.error.kind, "storage");
  assert.match(r.error.message, /maxDenBytes/);
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.deepEqual(await page.evaluate(() => window.foxden.liveCounts()), before);
});
test(`${B}: hostile done: files within the reply cap but over the den's cap are a storage error`, async () => {
  const r = await attack(`
    const a = new Uint8Array(${MAX_DEN_BYTES - 8});
    post(honest({ changed: [{ path: "/work/big", data: a }] }), [a.buffer]);`);
  assert.equal(r.error.kind, "storage");
  assert.match(r.error.message, /maxDenBytes/);
});
test(`${B}: hostile done: a 50 MB result and error text are clipped to maxOutputBytes`, async () => {
  const r = await attack(`const big = "x".repeat(50e6); post(honest({ result: big, error: { kind: "python", type: "E", message: big, traceback: big } }))`, { maxOutputBytes: 1000 });
  assert.equal(r.result.length, 1000);
  assert.equal(r.error.message.length, 1000);
  assert.equal(r.error.traceback.length, 1000);
  assert.equal(r.truncated, true);
});
test(`${B}: hostile out: a flood of output keeps the host bounded by maxOutputBytes`, async () => {
  const r = await attack(`
    const chunk = "y".repeat(100000);
    for (let i = 0; i < 1000; i++) post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: chunk }] });
    // 1024 parts of 100 kB each in one message: still the cap, across the parts.
    post({ t: "out", id: msg.id, parts: Array.from({ length: 1024 }, (_, i) => ({ stream: i % 2 ? "stderr" : "stdout", text: chunk })) });
    post(honest({}));`, { maxOutputBytes: 65536, timeoutMs: 20000 });
  assert.equal(r.stdout.length, 65536);
  assert.equal(r.stderr, "");
  assert.equal(r.truncated, true);
});
test(`${B}: hostile out: wrong streams, wrong types, malformed parts and other runs' ids are ignored`, async () => {
  const r = await attack(`
    post({ t: "out", id: msg.id, parts: [{ stream: "stdin", text: "no" }] });
    post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: 12345 }] });
    // One bad part drops its whole message, the good parts before it too.
    post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: "half" }, { stream: "stdout", text: null }] });
    post({ t: "out", id: msg.id, parts: [{ stream: "stderr", text: "half" }, null] });
    post({ t: "out", id: msg.id, parts: Array(1025).fill({ stream: "stdout", text: "x" }) });
    post({ t: "out", id: msg.id, parts: [] });
    post({ t: "out", id: msg.id, parts: { 0: { stream: "stdout", text: "not a list" }, length: 1 } });
    // The shape of protocol 8 is not read any more.
    post({ t: "out", id: msg.id, stream: "stdout", text: "old shape" });
    post({ t: "out", id: msg.id + 1, parts: [{ stream: "stdout", text: "future" }] });
    post({ t: "out", id: msg.id - 1, parts: [{ stream: "stdout", text: "stale" }] });
    post({ t: "out", id: String(msg.id), parts: [{ stream: "stdout", text: "string id" }] });
    post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: "o" }, { stream: "stderr", text: "e" }, { stream: "stdout", text: "k" }] });
    post(honest({}));`);
  assert.equal(r.stdout, "ok");
  assert.equal(r.stderr, "e");
});

test(`${B}: hostile display: unknown types, wrong data, other runs' ids and a flood past 16 MiB are dropped; the run is marked truncated`, async () => {
  const code = `
    const png = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);
    post({ t: "display", id: msg.id, bundle: [{ mime: "image/png", text: null, bytes: png }, { mime: "text/plain", text: "ok", bytes: null }] });
    post({ t: "display", id: msg.id, bundle: [{ mime: "application/javascript", text: "alert(1)", bytes: null }] });
    post({ t: "display", id: msg.id, bundle: [{ mime: "image/png", text: "not bytes", bytes: null }] });
    post({ t: "display", id: msg.id, bundle: "nope" });
    post({ t: "display", id: msg.id, bundle: [] });
    post({ t: "display", id: msg.id, bundle: Array(17).fill({ mime: "text/plain", text: "x", bytes: null }) });
    post({ t: "display", id: msg.id + 1, bundle: [{ mime: "text/plain", text: "future", bytes: null }] });
    const big = "z".repeat(4 * 1024 * 1024);
    for (let i = 0; i < 8; i++) post({ t: "display", id: msg.id, bundle: [{ mime: "text/html", text: big, bytes: null }] });
    post(honest({}));`;
  const r = await page.evaluate(async (code) => {
    let events = 0;
    const run = await window.den.run(code, { timeoutMs: 20000, onDisplay: () => events++ });
    const next = await window.den.run(`post(honest({ result: "'alive'" }))`, { timeoutMs: 5000 });
    return {
      kinds: run.displays.map((d) => Object.keys(d).join("+")),
      png: Array.from(run.displays[0]["image/png"]),
      sizes: run.displays.map((d) => (d["text/html"] || "").length),
      truncated: run.truncated,
      events,
      next: next.result,
    };
  }, code);
  assert.deepEqual(r.kinds, ["image/png+text/plain", "text/html", "text/html", "text/html"]);
  assert.deepEqual(r.png, [137, 80, 78, 71, 13, 10, 26, 10]);
  assert.deepEqual(r.sizes, [0, 4194304, 4194304, 4194304]);
  assert.equal(r.truncated, true);
  assert.equal(r.events, 4);
  assert.equal(r.next, "'alive'");
});

test(`${B}: hostile display: image bytes past 4 GiB are dropped (not read as their length modulo 2^32); the den goes on`, async () => {
  // Chromium's postMessage refuses a buffer this big ("not sent"); Firefox's carries it.
  const code = `
    let sent = "not sent";
    try {
      const huge = new Uint8Array(2 ** 32 + 8);
      post({ t: "display", id: msg.id, bundle: [{ mime: "image/png", text: null, bytes: huge }] }, [huge.buffer]);
      sent = "sent";
    } catch (e) {}
    post({ t: "display", id: msg.id, bundle: [{ mime: "text/plain", text: "after", bytes: null }] });
    post(honest({ result: JSON.stringify(sent) }));`;
  const r = await page.evaluate(async (code) => {
    const run = await window.den.run(code, { timeoutMs: 20000 });
    return { result: run.result, error: run.error, displays: run.displays.map((d) => Object.keys(d).join("+")), truncated: run.truncated };
  }, code);
  assert.equal(r.error, null, JSON.stringify(r.error));
  if (B === "firefox") assert.equal(r.result, '"sent"');
  assert.deepEqual(r.displays, ["text/plain"]);
  assert.equal(r.truncated, r.result === '"sent"');
  await attack(`post(honest({}))`);
});

test(`${B}: hostile input: a den page that ignores Stop while its run's input() waits is ended by the watchdog`, async () => {
  // The question is never answered (the page's onInput never settles), and the den page
  // ignores the stop: the clock, stopped while the question waits, must run again on Stop.
  const code = `
    post({ t: "started", id: msg.id });
    post({ t: "input", id: msg.id, prompt: "q" });`;
  const r = await page.evaluate(async (code) => {
    let asked = 0;
    const t0 = performance.now();
    const run = window.den.run(code, { timeoutMs: 1500, onInput: () => { asked++; return new Promise(() => {}); } });
    await new Promise((res) => setTimeout(res, 2500));
    const stopped = await window.den.stop();
    const r = await Promise.race([run, new Promise((res) => setTimeout(() => res("hung"), 20000))]);
    return { asked, stopped, kind: r === "hung" ? "hung" : r.error?.kind, ms: performance.now() - t0 };
  }, code);
  assert.equal(r.asked, 1);
  assert.equal(r.stopped, true);
  assert.equal(r.kind, "timeout", JSON.stringify(r));
  // The store is untouched and an honest run works.
  await attack(`post(honest({}))`);
});

test(`${B}: hostile input: one question at a time, for live runs only, prompts cut; a run nobody answers for gets an error reply`, async () => {
  // The scenario records the host's input-reply messages, then reports them as the result.
  const code = `
    const replies = [];
    const prev = port.onmessage;
    port.onmessage = (e) => { if (e.data && e.data.t === "input-reply") replies.push(e.data); else prev(e); };
    post({ t: "queued", id: msg.id });
    post({ t: "input", id: msg.id, prompt: "while queued" });
    post({ t: "started", id: msg.id });
    post({ t: "input", id: msg.id, prompt: "p1" });
    post({ t: "input", id: msg.id, prompt: "p2" });
    post({ t: "input", id: msg.id + 1, prompt: "future" });
    post({ t: "input", id: msg.id, prompt: 42 });
    await sleep(400);
    post({ t: "input", id: msg.id, prompt: "x".repeat(100000) });
    await sleep(400);
    port.onmessage = prev;
    const seen = replies.map((r) => (r.id === msg.id ? "" : "other:") + (r.text !== null ? "text:" + r.text : "error:" + r.error));
    post(honest({ result: JSON.stringify(seen.join("|")) }));`;
  const r = await page.evaluate(async (code) => {
    const prompts = [];
    const asked = await window.den.run(code, { timeoutMs: 5000, onInput: async (q) => { prompts.push(q.prompt.length); await new Promise((res) => setTimeout(res, 200)); return "ans"; } });
    const unasked = await window.den.run(code, { timeoutMs: 5000 });
    return { asked: asked.result, prompts, unasked: unasked.result };
  }, code);
  assert.deepEqual(r.prompts, [2, 4096]);
  assert.equal(r.asked, '"text:ans|text:ans"');
  assert.match(r.unasked, /^"error:nobody answers input\(\) for this run.*\|error:nobody answers/);
  // The store is untouched and an honest run works.
  await attack(`post(honest({}))`);
});

// --- ids and message kinds ---
test(`${B}: hostile done: replies for stale and future run ids are ignored`, async () => {
  const r = await attack(`
    post(honest({ id: msg.id - 1, result: "'stale'" }));
    post(honest({ id: msg.id + 1, result: "'future'" }));
    post(honest({ id: -1, result: "'negative'" }));
    post(honest({ id: 1.5, result: "'fraction'" }));
    post(honest({ result: "'real'" }));`);
  assert.equal(r.result, "'real'");
});
test(`${B}: hostile: forged hello, ready, load-error, reset-done and unknown kinds are ignored mid-run`, async () => {
  const r = await attack(`
    post({ t: "hello", protocol: 999 });
    post({ t: "ready", bootMs: 0, denMs: 0, interruptible: true });
    post({ t: "load-error", stage: "isolation", message: "forged" });
    post({ t: "reset-done", id: msg.id });
    post({ t: "booted", snapshot: new Uint8Array(10) });
    post({ t: ["done"], id: msg.id });
    post({ t: "done".repeat(1000), id: msg.id });
    post(null); post(42); post("done");
    post(honest({ result: "'real'" }));`);
  assert.equal(r.result, "'real'");
  const info = await page.evaluate(() => window.den.info);
  assert.equal(info.interruptible, false);
});
test(`${B}: hostile: extra ports sent to the host are ignored`, async () => {
  const counts = () => page.evaluate(() => window.foxden.liveCounts());
  const before = await counts();
  // Each port is sent away with a message; what is then posted on its other end must go
  // nowhere: the host reads no port, and takes no second connection.
  const r = await attack(`
    const mc = new MessageChannel();
    post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: "p" }] }, [mc.port1]);
    const mc2 = new MessageChannel();
    window.parent.postMessage({ foxden: "connect" }, "*", [mc2.port2]);
    mc.port2.postMessage({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: "via-out-port" }] });
    mc2.port1.postMessage({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: "via-connect-port" }] });
    await sleep(100);
    post(honest({ result: "'real'" }));`);
  assert.equal(r.result, "'real'");
  assert.equal(r.stdout, "p");
  assert.deepEqual(await counts(), before, "no connection or listener added");
});

test(`${B}: hostile: a den page that ignores a run is replaced by the host's watchdog (timeout, files kept)`, async () => {
  const r = await attack(`post({ t: "started", id: msg.id }); await new Promise(() => {});`, { timeoutMs: 500 });
  assert.equal(r.error.kind, "timeout");
  assert.match(r.error.message, /did not answer within 3500 ms \(timeoutMs 500 \+ 3000 ms\)/);
  assert.equal(r.restarted, true);
});
test(`${B}: hostile: a den page that floods the host and never answers is replaced too`, async () => {
  const t0 = Date.now();
  const r = await attack(`
    post({ t: "started", id: msg.id });
    for (;;) {
      for (let i = 0; i < 200; i++) post({ t: "out", id: msg.id + 7, parts: [{ stream: "stdout", text: "z".repeat(1000) }] });
      await sleep(0);
    }`, { timeoutMs: 500 });
  assert.equal(r.error.kind, "timeout");
  assert.match(r.error.message, /did not answer within 3500 ms \(timeoutMs 500 \+ 3000 ms\)/);
  assert.equal(r.restarted, true);
  assert.ok(Date.now() - t0 < 30000, `${Date.now() - t0} ms`);
});
test(`${B}: hostile: a queued run that never starts is bounded by the boot deadline, and queued counts once`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    // loadTimeoutMs 1000: a queued run must say started within 1 s + the host's 3 s grace.
    const d = await openDen({ name: "queued", store: memoryStore(), runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html", loadTimeoutMs: 1000 }) });
    let t = performance.now();
    const never = await d.run(`post({ t: "queued", id: msg.id }); await new Promise(() => {});`, { timeoutMs: 60000 });
    const neverMs = performance.now() - t;
    // A second queued (after started) does not stop the clock: the run times out on it.
    t = performance.now();
    const again = await d.run(`post({ t: "queued", id: msg.id }); post({ t: "started", id: msg.id }); await sleep(50); post({ t: "queued", id: msg.id }); await new Promise(() => {});`, { timeoutMs: 300 });
    const againMs = performance.now() - t;
    const ok = await d.run(`post({ t: "queued", id: msg.id }); await sleep(100); post({ t: "started", id: msg.id }); post(honest({ result: "'late start'" }))`, { timeoutMs: 300 });
    await d.close();
    return { never: [never.error.kind, never.error.type, never.restarted], neverMs, again: [again.error.kind, again.restarted], againMs, ok: ok.result };
  });
  assert.deepEqual(out.never, ["crashed", "DenPageError", true]);
  assert.ok(out.neverMs > 3500 && out.neverMs < 15000, `never started: ${out.neverMs} ms`);
  assert.deepEqual(out.again, ["timeout", true]);
  assert.ok(out.againMs > 3000 && out.againMs < 15000, `queued twice: ${out.againMs} ms`);
  assert.equal(out.ok, "'late start'");
});
test(`${B}: hostile: a done before started is still bounded and accepted once`, async () => {
  const r = await attack(`post(honest({ result: "'one'" })); post(honest({ result: "'two'" }));`);
  assert.equal(r.result, "'one'");
});
test(`${B}: hostile: a reply that comes after close() is ignored`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore, liveCounts } = window.foxden;
    const before = liveCounts().connections;
    // IndexedDB, so that the store can be read again after the close.
    const open = () => openDen({ name: "late", store: idbStore("foxden-hostile-late"), runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html" }) });
    const d = await open();
    await d.writeFile("/work/k", "k");
    const p = d.run(`post({ t: "started", id: msg.id }); await sleep(300); post(honest({ result: "'late'", changed: [{ path: "/work/k", data: new Uint8Array([9]) }] }))`);
    await new Promise((res) => setTimeout(res, 100));
    await d.close();
    const r = await p;
    await new Promise((res) => setTimeout(res, 600));
    const after = liveCounts().connections;
    const iframes = document.querySelectorAll("iframe[data-foxden-den]").length;
    const again = await open();
    const k = await again.readText("/work/k");
    await again.close();
    return { r, after, before, iframes, k };
  });
  assert.equal(out.r.error.type, "DenClosed");
  assert.equal(out.after, out.before);
  assert.equal(out.iframes, 1);
  assert.equal(out.k, "k", "the late reply's change was not kept");
});

// --- what the sandbox flags forbid ---
test(`${B}: hostile: the den page cannot navigate the top window, open popups, download or show modals`, async () => {
  const pagesBefore = (await ctx.browser.pages()).length;
  const r = await attack(`
    const tried = [];
    try { window.top.location.href = "http://127.0.0.1:9/pwned"; tried.push("nav-ok"); } catch (e) { tried.push("nav-refused"); }
    try { const w = window.open("http://127.0.0.1:9/popup"); tried.push(w ? "popup-opened" : "popup-null"); } catch (e) { tried.push("popup-refused"); }
    try { alert("pwned"); confirm("pwned"); prompt("pwned"); tried.push("modals-returned"); } catch (e) { tried.push("modals-refused"); }
    try { const a = document.createElement("a"); a.href = URL.createObjectURL(new Blob(["x"])); a.download = "x.txt"; document.body.append(a); a.click(); tried.push("download-clicked"); } catch (e) { tried.push("download-refused"); }
    post(honest({ result: JSON.stringify(tried.join(",")) }));`);
  await new Promise((res) => setTimeout(res, 500));
  assert.doesNotMatch(r.result, /popup-opened/);
  assert.match(page.url(), /\/e2e\/index\.html$/, "the top window was not navigated");
  assert.deepEqual(dialogs, []);
  assert.equal((await ctx.browser.pages()).length, pagesBefore);
  const sandbox = await page.evaluate(() => document.querySelector("iframe[data-foxden-den]").getAttribute("sandbox"));
  assert.equal(sandbox, "allow-scripts");
});
test(`${B}: hostile: HTML in file names and output is shown by the controls UI as text only`, async () => {
  const out = await page.evaluate(async () => {
    window.pwned = 0;
    const el = document.createElement("foxden-den");
    el.setAttribute("name", "htmlnames");
    el.setAttribute("controls", "");
    el.setAttribute("den-url", "/e2e/hostile-den.html");
    el.textContent = "";
    document.body.append(el);
    await new Promise((res) => el.addEventListener("ready", res, { once: true }));
    const evil = "<img src=x onerror=window.pwned=1>";
    const r = await el.run(`
      post({ t: "out", id: msg.id, parts: [{ stream: "stdout", text: ${JSON.stringify("<img src=x onerror=window.pwned=2>")} }] });
      post(honest({ result: ${JSON.stringify(JSON.stringify("<img src=x onerror=window.pwned=3>"))}, changed: [{ path: "/out/" + ${JSON.stringify(evil)} + ".txt", data: new Uint8Array([1]) }] }));`);
    await new Promise((res) => setTimeout(res, 300));
    const imgs = el.shadowRoot ? el.shadowRoot.querySelectorAll("img").length : el.querySelectorAll("img").length;
    const text = (el.shadowRoot || el).textContent;
    el.remove();
    return { r, pwned: window.pwned, imgs, shows: text.includes("<img src=x onerror=window.pwned=2>"), showsName: text.includes(evil + ".txt") };
  });
  assert.equal(out.r.error, null, JSON.stringify(out.r.error));
  assert.deepEqual(out.r.files.created, ["/out/<img src=x onerror=window.pwned=1>.txt"]);
  assert.equal(out.pwned, 0);
  assert.equal(out.imgs, 0);
  assert.equal(out.shows, true, "the output is shown, as text");
  assert.equal(out.showsName, true, "the file name is shown, as text");
});

// --- lifecycle races and the den page's address (issue 15 items 7 and 9) ---
test(`${B}: close() while the host reopens a replaced den page leaves no den page behind`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore, liveCounts } = window.foxden;
    const before = liveCounts().connections;
    const d = await openDen({ name: "racing", store: memoryStore(), runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html" }) });
    // The den page ignores the run: the watchdog replaces it and opens a new one in the background.
    const r = await d.run(`post({ t: "started", id: msg.id }); await new Promise(() => {});`, { timeoutMs: 200 });
    await d.close(); // while the new den page is loading
    await new Promise((res) => setTimeout(res, 1500));
    let after;
    try {
      await d.run("post(honest({}))");
    } catch (e) {
      after = e.name + ":" + e.code;
    }
    return { kind: r.error.kind, before, now: liveCounts().connections, iframes: document.querySelectorAll("iframe[data-foxden-den]").length, after };
  });
  assert.equal(out.kind, "timeout");
  assert.equal(out.now, out.before, "no connection left behind");
  assert.equal(out.iframes, 1, "only the suite's own den page");
  assert.equal(out.after, "DenError:closed");
});
test(`${B}: close() ends a den page's reopening at once, and the call waiting behind it`, async () => {
  const key = `k-${B}-${Date.now()}`;
  const out = await page.evaluate(async (key) => {
    const { openDen, iframeRuntime, memoryStore, liveCounts } = window.foxden;
    const frames = () => document.querySelectorAll("iframe[data-foxden-den]").length;
    const [conns, iframes] = [liveCounts().connections, frames()];
    const d = await openDen({ name: "reopen-stalled", store: memoryStore(), runtime: iframeRuntime({ denUrl: `/stallable/${key}/e2e/hostile-den.html` }) });
    // From now on the den page's address answers only after 30 s.
    await fetch(`/api/stall?key=${key}`);
    // The den page ignores the run: the watchdog replaces it; the new one does not come.
    const r = await d.run(`post({ t: "started", id: msg.id }); await new Promise(() => {});`, { timeoutMs: 200 });
    const queued = d.run("post(honest({}))").then(() => "ran", (e) => `${e.name}:${e.code}`);
    await new Promise((res) => setTimeout(res, 300));
    const during = frames() - iframes;
    await d.close();
    const settled = await Promise.race([queued, new Promise((res) => setTimeout(() => res("still pending"), 3000))]);
    return { kind: r.error.kind, during, settled, iframes: frames() - iframes, conns: liveCounts().connections - conns };
  }, key);
  assert.equal(out.kind, "timeout");
  assert.equal(out.during, 1, "the reopening's den page is there while it loads");
  assert.equal(out.settled, "DenError:closed");
  assert.equal(out.iframes, 0, "no den page left behind");
  assert.equal(out.conns, 0, "no connection left behind");
});
test(`${B}: a den page reloaded in its iframe (its container moved) is replaced at once, for a run and for reset(), also one in flight`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    const box = document.createElement("div");
    document.body.append(box);
    const d = await openDen({ name: "moved", store: memoryStore(), runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/", container: box }) });
    const a = (await d.run("6 * 7")).result;
    // Moving the container reloads its iframe: the den page there was never connected.
    const move = async () => {
      const frame = box.querySelector("iframe");
      const reloaded = new Promise((res) => frame.addEventListener("load", res, { once: true }));
      document.body.append(box);
      await reloaded;
    };
    await move();
    let t0 = performance.now();
    const r = await d.run("1 + 1", { timeoutMs: 20000 });
    const runMs = performance.now() - t0;
    const b = (await d.run("6 * 7")).result;
    await move();
    t0 = performance.now();
    const reset = await Promise.race([d.reset().then((x) => x.from, (e) => `${e.name}:${e.code}:${e.message}`), new Promise((res) => setTimeout(() => res("still pending"), 20000))]);
    const resetMs = performance.now() - t0;
    const c = (await d.run("6 * 7")).result;
    // The container moves while a reset is in flight: the reset goes on in a fresh den page.
    const inFlight = d.reset().then((x) => x.from, (e) => `${e.name}:${e.code}:${e.message}`);
    await move();
    const during = await Promise.race([inFlight, new Promise((res) => setTimeout(() => res("still pending"), 20000))]);
    const e = (await d.run("6 * 7")).result;
    await d.close();
    box.remove();
    return { a, error: r.error, result: r.result, runMs, b, reset, resetMs, c, during, e };
  });
  assert.match(out.during, /^(snapshot|scratch)$/);
  assert.equal(out.e, "42");
  assert.equal(out.a, "42");
  // The run goes to a fresh den page (the reloaded one was never connected) instead of
  // waiting for its timeout there.
  assert.equal(out.error, null, JSON.stringify(out.error));
  assert.equal(out.result, "2");
  assert.ok(out.runMs < 15000, `the run waited ${out.runMs} ms`);
  assert.equal(out.b, "42", "the next run runs in a fresh den page");
  assert.match(out.reset, /^(snapshot|scratch)$/);
  assert.ok(out.resetMs < 15000, `reset() took ${out.resetMs} ms`);
  assert.equal(out.c, "42");
});
test(`${B}: a den page refused at once (it redirects) is not held up by Pyodide's download`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    const t0 = performance.now();
    try {
      // Pyodide's files answer only after 8 s here.
      await openDen({ name: "redirected-slow", store: memoryStore(), runtime: iframeRuntime({ denUrl: "/redirect-to/den/den.html", pyodideUrl: "/api/slow/?ms=8000&f=", loadTimeoutMs: 30000 }) });
      return { opened: true };
    } catch (e) {
      return { error: `${e.name}:${e.stage}:${e.message}`, ms: performance.now() - t0 };
    }
  });
  assert.match(out.error, /^DenLoadError:den-page:.*redirects/);
  assert.ok(out.ms < 5000, `refused after ${out.ms} ms`);
});
test(`${B}: a denUrl that redirects is refused before the port is handed over`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    try {
      await openDen({ name: "redirected", store: memoryStore(), runtime: iframeRuntime({ denUrl: "/redirect-to/e2e/hostile-den.html" }) });
      return "opened";
    } catch (e) {
      return `${e.name}:${e.stage}:${e.message}`;
    }
  });
  assert.match(out, /^DenLoadError:den-page:.*redirects/);
});
test(`${B}: a denUrl on another origin is checked for redirects in cors mode, and refused when it cannot be checked`, async () => {
  const other = process.env.FOXDEN_COI_BASE;
  const out = await page.evaluate(async (other) => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    const attempt = async (name, denUrl) => {
      try {
        const den = await openDen({ name, store: memoryStore(), runtime: iframeRuntime({ denUrl }) });
        const r = await den.run("6 * 7");
        await den.close();
        return `opened:${r.result}`;
      } catch (e) {
        return `${e.name}:${e.stage}:${e.message}`;
      }
    };
    return {
      // The other origin's server allows the check: the den opens.
      allowed: await attempt("xo-allowed", `${other}/den/den.html?cors=1`),
      // It allows it, and redirects: refused (a no-cors probe could not have seen it).
      redirect: await attempt("xo-redirect", `${other}/redirect-to/den/den.html?cors=1`),
      // It does not allow it: refused, saying why, before the port is handed over.
      unchecked: await attempt("xo-unchecked", `${other}/den/den.html`),
    };
  }, other);
  assert.equal(out.allowed, "opened:42");
  assert.match(out.redirect, /^DenLoadError:den-page:.*redirects/);
  assert.match(out.unchecked, /^DenLoadError:den-page:cannot check that the den page .* does not redirect/);
});
