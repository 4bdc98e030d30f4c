// Trusting the interpreter (issue 9 items 1-2, issue 15 item 6), with the real den page and
// Pyodide: `js` works the same in every interpreter a den uses and in bare Pyodide; code in the
// worker cannot forge the den page's control messages or poison the restart snapshot; JS work a
// run leaves behind (message loops, nested workers, postTask) is ended or detected.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, logNewErrors, sleep } from "../lib.mjs";

let ctx, page, errors;
const B = BROWSER;

// Global accessors and methods read from Python; each is reported as the kind of value it
// gives (Object.prototype.toString of a JS value, the Python type otherwise) or the error.
const PROBE = `
import js, json, pyodide_js
from pyodide.ffi import JsProxy
def _kind(v):
    # A JS number comes to Python as int when it is whole and float otherwise; both are "number".
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return "number"
    if isinstance(v, JsProxy):
        return "js:" + str(js.Object.prototype.toString.call(v))
    return type(v).__name__
def _from_import():
    from js import performance
    return performance.now()
_probes = {
    "self": lambda: js.self,
    "globalThis": lambda: js.globalThis,
    "navigator": lambda: js.navigator,
    "navigator.userAgent": lambda: js.navigator.userAgent,
    "navigator.hardwareConcurrency": lambda: js.navigator.hardwareConcurrency,
    "navigator.language": lambda: js.navigator.language,
    "performance": lambda: js.performance,
    "performance.now()": lambda: js.performance.now(),
    "performance.timeOrigin": lambda: js.performance.timeOrigin,
    "crypto": lambda: js.crypto,
    "crypto.randomUUID()": lambda: js.crypto.randomUUID(),
    "crypto.getRandomValues()": lambda: js.crypto.getRandomValues(js.Uint8Array.new(4)),
    "location": lambda: js.location,
    "location.href": lambda: js.location.href,
    "setTimeout": lambda: js.setTimeout,
    "clearTimeout": lambda: js.clearTimeout,
    "fonts": lambda: js.fonts,
    "importScripts": lambda: js.importScripts,
    "WorkerGlobalScope": lambda: js.WorkerGlobalScope,
    "isSecureContext": lambda: js.isSecureContext,
    "origin": lambda: js.origin,
    "TextEncoder().encode()": lambda: js.TextEncoder.new().encode("a"),
    "Date.now()": lambda: js.Date.now(),
    "from js import performance": _from_import,
    "pyodide_js.version": lambda: pyodide_js.version,
}
_out = {}
for _k, _f in _probes.items():
    try:
        _out[_k] = _kind(_f())
    except BaseException as _e:
        _out[_k] = "error:" + type(_e).__name__ + ": " + str(_e)[:120]
_res = json.dumps(_out, sort_keys=True)
print(_res)
_res
`;

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser, "/e2e/bare.html"));
  await openQuickDen(page, "trust");
});

afterEach(logNewErrors(() => errors));

after(async () => {
  await ctx?.close();
});

const run = (code, opts) => page.evaluate((code, opts) => window.dens.trust.run(code, opts), code, opts || {});
const table = async () => {
  const r = await run(PROBE);
  assert.equal(r.error, null, JSON.stringify(r.error));
  return JSON.parse(r.stdout);
};

/** Waits until reset() reports a worker restored from the snapshot (the maker runs after ready). */
async function resetFromSnapshot() {
  for (let i = 0; i < 40; i++) {
    const r = await page.evaluate(() => window.dens.trust.reset());
    if (r.from === "snapshot") return r;
    await sleep(500);
  }
  throw new Error("no worker came from the snapshot within 20 s");
}

test(`${B}: js works the same in the first interpreter, after reset (snapshot), after a timeout restart, and in bare Pyodide`, async () => {
  const first = await table();
  const bareRaw = await page.evaluate(async (code) => {
    await window.bareBoot();
    return window.bareRun(code);
  }, PROBE);
  const bare = JSON.parse(bareRaw);
  const reset = await resetFromSnapshot();
  assert.ok(reset.bootMs > 0);
  const restored = await table();
  const t = await run("while True: pass", { timeoutMs: 500 });
  assert.equal(t.error.kind, "timeout");
  assert.equal(t.restarted, true);
  const afterTimeout = await table();
  await page.evaluate(() => window.dens.trust.reset());
  const afterReset = await table();
  const names = Object.keys(bare);
  assert.ok(names.length >= 20, `${names.length} probes`);
  for (const name of names) {
    assert.doesNotMatch(String(first[name]), /^error/, `${name} in the first interpreter: ${first[name]}`);
    for (const [label, got] of [["first", first], ["restored", restored], ["afterTimeout", afterTimeout], ["afterReset", afterReset]]) {
      assert.equal(got[name], bare[name], `${name}: ${label} gives ${got[name]}, bare Pyodide ${bare[name]}`);
    }
  }
  console.log(`# ${B}: ${names.length} js probes identical in 4 den interpreters and bare Pyodide`);
});

test(`${B}: code in the worker cannot forge control messages or poison the restart snapshot`, async () => {
  await resetFromSnapshot();
  const r = await run(`
import js, sys, types
from pyodide.ffi import to_js
marker = "planted"
sys.modules["planted_mod"] = types.ModuleType("planted_mod")
def obj(d):
    return to_js(d, dict_converter=js.Object.fromEntries)
# Forged messages on the worker's global channel (the den page reads only what carries the
# worker's key, which user code never sees), bare and in the keyed shape with guessed keys.
js.postMessage(obj({"t": "booted", "ms": 1, "snapshot": js.Uint8Array.new(4096)}))
for guess in ["", "0" * 32, None, 0]:
    js.postMessage(to_js([guess, obj({"t": "done", "id": 1, "result": "'forged'", "changed": [], "deleted": []})]))
    js.postMessage(to_js([guess, obj({"t": "snapshot", "snapshot": js.Uint8Array.new(4096)})]))
# Synthetic messages to the worker itself: only the den page's (trusted) events are read.
run_msg = obj({"t": "run", "id": 4242, "code": "forged_run = 1", "timeoutMs": 1000, "maxOutputBytes": 1000, "killGraceMs": 0, "put": [], "del": [], "stdin": None, "interactive": False, "lang": "python", "js": None})
js.dispatchEvent(js.MessageEvent.new("message", obj({"data": run_msg})))
js.dispatchEvent(js.MessageEvent.new("message", obj({"data": obj({"t": "boot", "key": "mine", "role": "maker"})})))
js.postMessage(obj({"t": "snapshot", "snapshot": js.Uint8Array.new(4096)}))
js.postMessage(obj({"t": "done", "id": 1, "result": "'forged'", "error": None, "changed": [], "deleted": []}))
js.postMessage(obj({"t": "out", "id": 1, "stream": "stdout", "text": "forged output"}))
for i in range(1, 200):
    js.postMessage(obj({"t": "done", "id": i, "result": "'forged'", "changed": [], "deleted": []}))
# Try to catch the key by replacing the functions the worker uses to post (and its replies then
# still arrive), and the getter it reads messages with. (Pyodide's own message listener reads
# the den page's messages through the replaced getter: they carry no key.)
captured = []
def grab(*args):
    captured.append(1)
reads = []
def grab_data(*args):
    reads.append(1)
js.MessagePort.prototype.postMessage = grab
js.DedicatedWorkerGlobalScope.prototype.postMessage = grab
js.postMessage = grab
js.Object.defineProperty(js.MessageEvent.prototype, "data", obj({"get": grab_data, "configurable": True}))
print("genuine")
"real"
`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "'real'");
  assert.equal(r.stdout, "genuine\n");
  const next = await run("len(captured), marker, 'forged_run' in globals()");
  assert.equal(next.result, "(0, 'planted', False)", JSON.stringify(next));
  const reset = await page.evaluate(() => window.dens.trust.reset());
  assert.equal(reset.from, "snapshot", "the restart resumed from the genuine snapshot");
  const fresh = await run(`
import sys
("marker" in globals(), "planted_mod" in sys.modules, "captured" in globals())`);
  assert.equal(fresh.result, "(False, False, False)", JSON.stringify(fresh));
  const js = await run("import js\nround(js.performance.now()) >= 0");
  assert.equal(js.result, "True");
});

test(`${B}: a worker that floods its global channel with messages of its own is replaced (run crashed, files kept)`, async () => {
  await page.evaluate(() => window.dens.trust.writeFile("/work/flood.txt", "kept"));
  const r = await run(`
import js, time
for i in range(20000):
    js.postMessage(i)
time.sleep(5)
"not reached"`);
  assert.equal(r.error && r.error.kind, "crashed", JSON.stringify(r));
  assert.match(r.error.message, /js\.postMessage/);
  assert.equal(r.restarted, true);
  const next = await run("open('/work/flood.txt').read()");
  assert.equal(next.result, "'kept'", JSON.stringify(next));
});

test(`${B}: a flood that starts after the run replied (a microtask) replaces the worker between runs; the next run says so and the den's files reach the new worker`, async () => {
  await page.evaluate(() => window.dens.trust.writeFile("/work/late.txt", "still here"));
  const r = await run(`
import js
from pyodide.ffi import create_once_callable
def flood(*args):
    for i in range(20000):
        js.postMessage(i)
js.Promise.resolve(0).then(create_once_callable(flood))
"replied"`);
  assert.equal(r.result, "'replied'", JSON.stringify(r));
  await sleep(2000); // the den page reads the 20000 messages (about 0.4 s at most) and restarts the worker
  const next = await run("1 + 1");
  assert.equal(next.error && next.error.kind, "crashed", JSON.stringify(next));
  assert.match(next.error.message, /not started: after the last run, the worker posted 10000 messages .*js\.postMessage/);
  assert.equal(next.restarted, true);
  // Before, this new worker got no files: the host thought the old one still held them.
  const after = await run("open('/work/late.txt').read()");
  assert.equal(after.result, "'still here'", JSON.stringify(after));
});

test(`${B}: JS work left by a run is ended or detected: message loops, nested workers, postTask`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const loop = await run(`
import js
from pyodide.ffi import create_proxy
ticks = [0]
mc = js.MessageChannel.new()
def on(e):
    ticks[0] += 1
    mc.port2.postMessage(1)
mc.port1.onmessage = create_proxy(on)
mc.port2.postMessage(1)
import asyncio
await asyncio.sleep(0.2)  # the loop ticks while the run lasts
ticks[0]
`);
  assert.equal(loop.error, null, JSON.stringify(loop.error));
  assert.ok(Number(loop.result) > 0, `the loop ticked during its run: ${loop.result}`);
  assert.equal(loop.restarted, false, "a message loop is ended, not left for a restart");
  await sleep(300);
  const a = await run("ticks[0]");
  await sleep(300);
  const b = await run("ticks[0]");
  assert.equal(a.error, null, JSON.stringify(a.error));
  assert.ok(Number(a.result) >= Number(loop.result), `variables kept: ${a.result}`);
  assert.equal(a.result, b.result, "the message loop ended with its run");
  assert.equal(b.restarted, false, "variables kept");

  const makeNested = `
import js
from pyodide.ffi import create_proxy, to_js
got = [0]
src = "setInterval(() => postMessage(1), 5)"
w = js.Worker.new("data:text/javascript," + js.encodeURIComponent(src))
def on(e):
    got[0] += 1
w.onmessage = create_proxy(on)
`;
  let nested = await run(makeNested, { timeoutMs: 10000 });
  if (B === "firefox" && nested.error && nested.error.kind === "timeout") {
    // Once in about eight full Firefox suites (never when this file runs alone), Firefox's
    // Worker constructor inside the den's worker stalled until the run's timeout. The den did
    // its part (killed the run, kept the files, restarted the worker); what this test checks is
    // that a nested worker does not outlive its run, so it is reported and tried once more.
    console.log(`# ${B}: constructing a nested worker stalled until the run's timeout; trying once more`);
    nested = await run(makeNested, { timeoutMs: 10000 });
  }
  assert.equal(nested.error, null, JSON.stringify(nested.error));
  // While a run lasts, the nested worker works (its messages arrive) ...
  const during = await run("import time\nt0 = got[0]\ntime.sleep(0.3)\nw2 = js.Worker.new('data:text/javascript,' + js.encodeURIComponent(src))\nn = [0]\nw2.onmessage = create_proxy(lambda e: n.__setitem__(0, n[0] + 1))\nimport asyncio\nawait asyncio.sleep(0.3)\nn[0] > 0");
  assert.equal(during.result, "True", JSON.stringify(during));
  // ... and once it ends, the worker is gone: no more messages.
  await sleep(300);
  const n1 = await run("got[0], n[0]");
  await sleep(300);
  const n2 = await run("got[0], n[0]");
  assert.equal(n1.error, null, JSON.stringify(n1.error));
  assert.equal(n1.result, n2.result, "nested worker messages kept coming");

  const hasPostTask = await run("import js\nhasattr(js, 'scheduler') and hasattr(js.scheduler, 'postTask')");
  if (hasPostTask.result === "True") {
    const pt = await run(`
import js
from pyodide.ffi import create_proxy, to_js
js.scheduler.postTask(create_proxy(lambda: None), to_js({"delay": 60000}, dict_converter=js.Object.fromEntries))
`);
    assert.equal(pt.error, null, JSON.stringify(pt.error));
    assert.equal(pt.restarted, true, "a pending postTask task restarts the worker");
  } else {
    console.log(`# ${B}: no scheduler.postTask in this browser's workers`);
  }
});

test(`${B}: channels and nested workers are ended with their run even when the code replaced Array.prototype.push or the methods that close them`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  // The run hides its resources from the tracking's bookkeeping (Array.prototype.push, once)
  // and from their closing (MessagePort.prototype.close, BroadcastChannel.prototype.close,
  // Worker.prototype.terminate), which stay replaced.
  const make = `
const realPush = Array.prototype.push;
Array.prototype.push = function () { Array.prototype.push = realPush; return this.length; };
MessagePort.prototype.close = function () {};
BroadcastChannel.prototype.close = function () {};
Worker.prototype.terminate = function () {};
globalThis.ticks = 0;
globalThis.got = 0;
globalThis.casts = 0;
const mc = new MessageChannel();
mc.port1.onmessage = () => { globalThis.ticks++; mc.port2.postMessage(1); };
mc.port2.postMessage(1);
const b1 = new BroadcastChannel("strict-test");
const b2 = new BroadcastChannel("strict-test");
b2.onmessage = () => { globalThis.casts++; b1.postMessage(1); };
b1.postMessage(1);
const w = new Worker("data:text/javascript," + encodeURIComponent("setInterval(() => postMessage(1), 5)"));
w.onmessage = () => { globalThis.got++; };
await new Promise((r) => setTimeout(r, 300));
[globalThis.ticks > 0, globalThis.casts > 0, globalThis.got > 0]`;
  let made = await run(make, { lang: "javascript", timeoutMs: 10000 });
  if (B === "firefox" && made.error && made.error.kind === "timeout") {
    // The Firefox nested-worker stall (see the test above): reported and tried once more.
    console.log(`# ${B}: constructing a nested worker stalled until the run's timeout; trying once more`);
    made = await run(make, { lang: "javascript", timeoutMs: 10000 });
  }
  assert.equal(made.error, null, JSON.stringify(made.error));
  assert.equal(made.result, "[true, true, true]", "the loops and the worker worked while the run lasted");
  assert.equal(made.restarted, false);
  await sleep(300);
  const a = await run("[globalThis.ticks, globalThis.casts, globalThis.got]", { lang: "javascript" });
  await sleep(300);
  const b = await run("[globalThis.ticks, globalThis.casts, globalThis.got]", { lang: "javascript" });
  assert.equal(a.error, null, JSON.stringify(a.error));
  assert.equal(a.result, b.result, "a message loop or the nested worker outlived its run");
  await page.evaluate(() => window.dens.trust.reset());
});

test(`${B}: timers and tasks made through the prototypes (not the global's own methods) are detected too`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const via = async (code) => {
    const r = await run(`
import js
from pyodide.ffi import create_proxy
ticks = [0]
def tick(*_):
    ticks[0] += 1
    print("late tick")
${code}
`);
    assert.equal(r.error, null, JSON.stringify(r.error));
    return r;
  };
  // Found on whichever prototype holds them (WorkerGlobalScope's in Chromium); the own ones are ours.
  const find = "o = js.Object.getPrototypeOf(js.globalThis)\nwhile o is not None and not js.Object.hasOwn(o, NAME):\n    o = js.Object.getPrototypeOf(o)\n";
  for (const name of ["setInterval", "setTimeout"]) {
    const onProto = await run(`import js\nNAME = "${name}"\n${find}o is not None`);
    if (onProto.result !== "True") {
      console.log(`# ${B}: ${name} is on no prototype of the worker's global here`);
      continue;
    }
    // A timeout far past the run's grace period, or an interval: both outlive the run.
    const ms = name === "setTimeout" ? 60000 : 100;
    const r = await via(`NAME = "${name}"\n${find}getattr(o, NAME).call(js.globalThis, create_proxy(tick), ${ms})`);
    assert.equal(r.restarted, true, `a ${name} made through the prototype was not seen: ${JSON.stringify(r)}`);
    const next = await run("print('next run')");
    assert.doesNotMatch(next.stdout, /late tick/);
  }
  const hasPostTask = await run("import js\nhasattr(js, 'scheduler') and hasattr(js.scheduler, 'postTask')");
  if (hasPostTask.result === "True") {
    const r = await via(`from pyodide.ffi import to_js
proto = js.Object.getPrototypeOf(js.scheduler)
proto.postTask.call(js.scheduler, create_proxy(tick), to_js({"delay": 60000}, dict_converter=js.Object.fromEntries))`);
    assert.equal(r.restarted, true, "a postTask made through Scheduler.prototype was not seen");
  }
});

test(`${B}: an exception nothing caught during a run (a timer's, in JavaScript or from Python) is the run's stderr, not a crash`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  await run("kept = 5\nopen('/work/uncaught.txt', 'w').write('x')");
  const js = await run("setTimeout(() => { throw new Error('boom from a timer') }, 0);\nawait new Promise((r) => setTimeout(r, 50));\n'after'", { lang: "javascript" });
  assert.equal(js.error, null, JSON.stringify(js.error));
  assert.equal(js.result, '"after"');
  assert.match(js.stderr, /boom from a timer/);
  assert.equal(js.restarted, false);
  const py = await run("import js\nfrom pyodide.ffi import create_once_callable\njs.setTimeout(create_once_callable(lambda: 1 / 0), 0)\nopen('/work/uncaught2.txt', 'w').write('y')");
  assert.equal(py.error, null, JSON.stringify(py.error));
  assert.match(py.stderr, /ZeroDivisionError/);
  assert.equal(py.restarted, false);
  assert.deepEqual(py.files.created, ["/work/uncaught2.txt"]);
  const after = await run("kept");
  assert.equal(after.result, "5");
});

test(`${B}: a chain of asyncio callbacks (call_soon scheduling itself) left by a run is ended, like a timer`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const left = await run("import asyncio\nloop = asyncio.get_event_loop()\ndef tick():\n    print('tick')\n    loop.call_soon(tick)\ntick()\nkept = 3");
  assert.equal(left.error, null, JSON.stringify(left.error));
  const next = await run("import asyncio\nawait asyncio.sleep(0.2)\nprint('next')\nkept");
  assert.equal(next.error, null, JSON.stringify(next.error));
  assert.equal(next.stdout, "next\n");
  assert.equal(next.result, "3"); // ended, not restarted: variables kept
  // A callback scheduled for later within the run, and run in it, is no leftover.
  const fine = await run("import asyncio\nloop = asyncio.get_event_loop()\nfut = loop.create_future()\nloop.call_later(0.05, fut.set_result, 'done')\nawait fut");
  assert.equal(fine.result, "'done'", JSON.stringify(fine.error));
  assert.equal(fine.restarted, false);
});

test(`${B}: asyncio timeouts that did not fire (wait_for, call_later cancelled or left) are no leftover: variables kept`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const waited = await run("kept = 1\nimport asyncio\nloop = asyncio.get_event_loop()\nfut = loop.create_future()\nloop.call_soon(fut.set_result, 5)\nawait asyncio.wait_for(fut, 10)");
  assert.equal(waited.result, "5", JSON.stringify(waited.error));
  assert.equal(waited.restarted, false, "a wait_for whose timeout did not fire restarted the worker");
  const within = await run("import asyncio\nasync with asyncio.timeout(20):\n    await asyncio.sleep(0.01)\nkept += 1\nkept");
  assert.equal(within.result, "2");
  assert.equal(within.restarted, false);
  const left = await run("import asyncio\nasyncio.get_event_loop().call_later(0.3, print, 'late')\nkept += 1");
  assert.equal(left.restarted, false);
  const after = await run("import asyncio\nawait asyncio.sleep(0.5)\nkept");
  assert.equal(after.result, "3");
  assert.equal(after.stdout, "", "the callback left by the run was ended with it");
});

test(`${B}: a run killed by its timeout with its output at the cap says truncated`, async () => {
  const r = await run("while True: print('spam')", { timeoutMs: 1500, maxOutputBytes: 1000 });
  assert.equal(r.error?.kind, "timeout", JSON.stringify(r.error));
  assert.equal(r.truncated, true, JSON.stringify({ ...r, stdout: r.stdout.length }));
  assert.ok(r.stdout.length > 0 && r.stdout.length <= 1000, `${r.stdout.length} characters`);
});

test(`${B}: the run queue's callbacks are not handed to a then() that user code put on Promise.prototype`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const patch = await run("const orig = Promise.prototype.then;\nglobalThis.grabbed = [];\nPromise.prototype.then = function (...a) { globalThis.grabbed.push(...a.filter((f) => typeof f === 'function')); return orig.apply(this, a); };\n'patched'", { lang: "javascript" });
  assert.equal(patch.result, '"patched"', JSON.stringify(patch.error));
  const next = await run("globalThis.grabbed.map((f) => f.toString()).filter((s) => s.includes('run(m)') || s.includes('WorkerError')).length", { lang: "javascript" });
  assert.equal(next.error, null, JSON.stringify(next.error));
  assert.equal(next.result, "0");
  await page.evaluate(() => window.dens.trust.reset());
});

test(`${B}: the worker's own code is strict: a global that user code replaced never sees one of its functions as its caller (f.caller), so none can be called from user code`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  // Sloppy spies on globals the worker's code calls around a run. A spy's `caller` is its
  // caller only if that caller is sloppy code: a worker function there could be called again
  // (its run(), which posts a genuine done for the run's id, ending it early).
  const patch = await run(`
globalThis.callers = [];
const wrap = (obj, name) => {
  const orig = obj[name];
  obj[name] = function spy() {
    let c = null;
    try { c = spy.caller; } catch (e) {}
    if (typeof c === "function") globalThis.callers.push(name + ": " + String(c).slice(0, 60));
    return orig.apply(this, arguments);
  };
};
for (const [o, n] of [[performance, "now"], [Date, "now"], [JSON, "stringify"], [JSON, "parse"], [Object, "keys"], [Object, "assign"], [Math, "min"], [Math, "max"], [String, "fromCharCode"], [Array, "isArray"]]) wrap(o, n);
'patched'`, { lang: "javascript" });
  assert.equal(patch.result, '"patched"', JSON.stringify(patch.error));
  const py = await run("print('py')\nimport json\njson.dumps({'a': 1})");
  assert.equal(py.error, null, JSON.stringify(py.error));
  const js = await run("console.log('js'); await fs.writeFile('/out/strict.txt', 'x'); 1 + 1", { lang: "javascript" });
  assert.equal(js.error, null, JSON.stringify(js.error));
  const seen = await run("JSON.stringify(globalThis.callers)", { lang: "javascript" });
  assert.equal(seen.error, null, JSON.stringify(seen.error));
  assert.deepEqual(JSON.parse(JSON.parse(seen.result)), []);
  await page.evaluate(() => window.dens.trust.reset());
});

test(`${B}: Promise.prototype and Promise are frozen in the worker: a then, constructor or species of user code's never gets the worker's resolvers`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const patch = await run(`
globalThis.grabbed = 0;
globalThis.species = 0;
const tries = [];
const attempt = (what, f) => { try { f(); tries.push(what + " changed"); } catch (e) { tries.push(what + " " + e.name); } };
const then = Promise.prototype.then;
attempt("then", () => { "use strict"; Promise.prototype.then = function (a, b) { globalThis.grabbed++; return then.call(this, a, b); }; });
attempt("constructor", () => { "use strict"; Promise.prototype.constructor = function () {}; });
attempt("species", () => Object.defineProperty(Promise, Symbol.species, { get() { globalThis.species++; return Promise; } }));
[Object.isFrozen(Promise.prototype), Object.isFrozen(Promise), tries.join(", ")]`, { lang: "javascript" });
  assert.equal(patch.error, null, JSON.stringify(patch.error));
  assert.equal(patch.result, '[true, true, "then TypeError, constructor TypeError, species TypeError"]');
  // Runs of both languages (awaits, the run queue) go on as usual, and nothing was handed over.
  const py = await run("import asyncio\nawait asyncio.sleep(0.01)\n6 * 7");
  assert.equal(py.result, "42", JSON.stringify(py.error));
  const js = await run("await new Promise((r) => setTimeout(r, 10)); [globalThis.grabbed, globalThis.species]", { lang: "javascript" });
  assert.equal(js.result, "[0, 0]", JSON.stringify(js.error));
  await page.evaluate(() => window.dens.trust.reset());
});

test(`${B}: a message listener of user code's cannot change the run message the worker is still reading`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  // The listener runs after the worker's own (same event, same data object) and shrinks the
  // output cap of every later run it sees.
  const patch = await run(`
self.addEventListener("message", (e) => { const d = e.data; if (d && d.t === "run") { d.maxOutputBytes = 5; d.killGraceMs = 0; } });
'listening'`, { lang: "javascript" });
  assert.equal(patch.result, '"listening"', JSON.stringify(patch.error));
  // The runs wait for a timer: the listener runs after the worker's, once the run is under way.
  const long = await run("import asyncio\nawait asyncio.sleep(0.05)\n'x' * 50", { maxOutputBytes: 1000 });
  assert.equal(long.error, null, JSON.stringify(long.error));
  assert.equal(long.result, `'${"x".repeat(50)}'`);
  assert.equal(long.truncated, false);
  const js = await run("await new Promise((r) => setTimeout(r, 50)); 'y'.repeat(50)", { lang: "javascript", maxOutputBytes: 1000 });
  assert.equal(js.result, `"${"y".repeat(50)}"`, JSON.stringify(js.error));
  assert.equal(js.truncated, false);
  await page.evaluate(() => window.dens.trust.reset());
});

test(`${B}: the den page rules every run: timeouts kill, leftovers restart, each new worker gets the den's files`, async () => {
  const out = await page.evaluate(async () => {
    const den = window.dens.trust;
    await den.writeFile("/work/port.txt", "files survive");
    await den.run("survivor = 1");
    const spin = await den.run("while True: pass", { timeoutMs: 300 });
    // The next run goes to the new worker.
    const after = await den.run("open('/work/port.txt').read(), 'survivor' in globals()");
    await den.run("again = 2");
    // A timer left alive: the den page restarts the worker after the run's grace.
    const left = await den.run("from pyodide.code import run_js\nrun_js('setInterval(() => {}, 1000)')\n'left'");
    const next = await den.run("open('/work/port.txt').read(), 'again' in globals()");
    const reset = await den.reset();
    const fresh = await den.run("open('/work/port.txt').read(), 'again' in globals()");
    return { spin: [spin.error.kind, spin.restarted], after: after.result, left: [left.result, left.restarted], next: next.result, reset: reset.from, fresh: fresh.result };
  });
  assert.deepEqual(out.spin, ["timeout", true]);
  assert.equal(out.after, "('files survive', False)");
  assert.deepEqual(out.left, ["'left'", true]);
  assert.equal(out.next, "('files survive', False)");
  assert.equal(typeof out.reset, "string");
  assert.equal(out.fresh, "('files survive', False)");
});

test(`${B}: work left behind is seen even when the code hides it from the tracking (Python's handle set, Set.prototype.size, a frame's id)`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  // A call_soon chain whose handles the code removes from the worker's own tracking set.
  const hidden = await run(`
import asyncio, __main__
loop = asyncio.get_event_loop()
def tick():
    print("late tick")
    __main__._foxden_handles.discard(loop.call_soon(tick))
tick()
kept = 1`);
  assert.equal(hidden.error, null, JSON.stringify(hidden.error));
  assert.equal(hidden.restarted, true, "a hidden call_soon chain was not seen");
  const next = await run("import asyncio\nawait asyncio.sleep(0.2)\nprint('next')");
  assert.equal(next.stdout, "next\n");
  // A JavaScript run that makes Set.prototype.size say 0, then leaves an interval.
  const js = await run('Object.defineProperty(Set.prototype, "size", { get: () => 0, configurable: true });\nsetInterval(() => console.log("late"), 10);\n"left"', { lang: "javascript" });
  assert.equal(js.restarted, true, "an interval hidden by a patched Set.prototype.size was not seen");
  // An animation frame that untracks itself through clearTimeout of its own id.
  const hasRaf = await run("import js\nhasattr(js, 'requestAnimationFrame')");
  if (hasRaf.result === "True") {
    const raf = await run(`
import js
from pyodide.ffi import create_proxy
def f(t):
    i = js.requestAnimationFrame(cb)
    js.clearTimeout(i)
    js.clearTimeout("raf%d" % i)
cb = create_proxy(f)
f(0)`);
    assert.equal(raf.error, null, JSON.stringify(raf.error));
    assert.equal(raf.restarted, true, "a frame loop that clears its own id was not seen");
  } else {
    console.log(`# ${B}: no requestAnimationFrame in this browser's workers`);
  }
  // Clearing timer ids the code did not make (guessed) ends none of the worker's own waits.
  const guess = await run("import js, asyncio\nt = asyncio.ensure_future(asyncio.sleep(0.3))\nawait asyncio.sleep(0)\nfor i in range(1, 5000):\n    js.clearTimeout(i)\n    js.clearInterval(i)\nawait t\n'ok'", { timeoutMs: 5000 });
  assert.equal(guess.error, null, JSON.stringify(guess.error));
  assert.equal(guess.result, "'ok'");
  // An ordinary asyncio program leaves nothing behind: no restart.
  const fine = await run("import asyncio\nkept = 2\nawait asyncio.gather(asyncio.sleep(0.01), asyncio.sleep(0.02))\nkept");
  assert.equal(fine.restarted, false);
  assert.equal((await run("kept")).result, "2");
});

test(`${B}: a long result or error text is cut at the output cap and the run says truncated; its files are kept`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const long = await run("open('/work/long.txt', 'w').write('kept')\nlist(range(300_000))");
  assert.equal(long.error, null, JSON.stringify(long.error));
  assert.equal(long.truncated, true);
  assert.ok(long.result.startsWith("[0, 1, 2, ") && long.result.length <= 1 << 20, `${long.result.length}`);
  assert.deepEqual(long.files.created, ["/work/long.txt"]);
  assert.equal(long.restarted, false);
  const err = await run("open('/work/long2.txt', 'w').write('kept')\nraise ValueError('x' * 3_000_000)", { maxOutputBytes: 4096 });
  assert.equal(err.error?.type, "ValueError", JSON.stringify(err.error).slice(0, 200));
  assert.ok(err.error.message.length <= 4096 && err.error.traceback.length <= 4096);
  assert.equal(err.truncated, true);
  assert.deepEqual(err.files.created, ["/work/long2.txt"]);
  const js = await run('"y".repeat(3_000_000)', { lang: "javascript", maxOutputBytes: 1000 });
  assert.equal(js.result.length, 1000);
  assert.equal(js.truncated, true);
  const short = await run("'fine'");
  assert.equal(short.truncated, false);
});

test(`${B}: a thrown value that cannot describe itself is the run's error, with its output and files`, async () => {
  await page.evaluate(() => window.dens.trust.reset());
  const js = await run('console.log("a"); console.log("b");\nawait fs.writeFile("/out/thrown.txt", "1");\nthrow new Proxy({}, { getPrototypeOf() { throw 0 }, get() { throw 0 } });', { lang: "javascript" });
  assert.equal(js.error?.kind, "javascript", JSON.stringify(js.error));
  assert.equal(js.stdout, "a\nb\n");
  assert.deepEqual(js.files.created, ["/out/thrown.txt"]);
  const py = await run("open('/work/thrown.txt', 'w').write('1')\nclass E(Exception):\n    def __str__(self):\n        return 1 / 0\nprint('before')\nraise E()");
  assert.equal(py.error?.kind, "python", JSON.stringify(py.error));
  assert.equal(py.error.type, "E");
  assert.match(py.error.message, /str\(\) of the exception failed/);
  assert.equal(py.stdout, "before\n");
  assert.deepEqual(py.files.created, ["/work/thrown.txt"]);
});

test(`${B}: the display budget counts text as the host does (UTF-8 bytes): foxden.display raises where the host would drop`, async () => {
  const r = await run(`import foxden
shown, why = 0, None
try:
    for _ in range(3):
        foxden.display("é" * 4_000_000, mime="text/plain")
        shown += 1
except ValueError as e:
    why = str(e)
shown, why is not None`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "(2, True)");
  assert.equal(r.displays.length, 2);
  // What was not shown makes the run truncated (as the README says); a run within both caps is not.
  assert.equal(r.truncated, true);
  const many = await run(`import foxden
for i in range(1001):
    try:
        foxden.display(str(i), mime="text/plain")
    except ValueError:
        pass
print("after")`);
  assert.equal(many.displays.length, 1000);
  assert.equal(many.truncated, true);
  assert.equal(many.stdout, "after\n"); // output after a refused display is still kept
  const fine = await run(`import foxden
foxden.display("ok", mime="text/plain")`);
  assert.equal(fine.displays.length, 1);
  assert.equal(fine.truncated, false);
});
