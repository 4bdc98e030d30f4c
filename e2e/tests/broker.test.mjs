// Network brokered by the host (issue 14 §2): `openDen({ network })` lets Python's
// `await foxden.fetch(url, …)` reach listed URLs; the request is made by the host page after
// checking the allowlist, method, rate and size; every request, allowed or refused, is in
// `run.requests` and reported (`onRequest`, the `request` event); the den's CSP stays
// `connect-src 'none'`. Markers in the static server's and the logging proxy's logs tell what
// reached a server: the host's allowed requests must show up, refused ones never.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, BROWSER, BASE, COI_BASE, readLog, marker, sleep, logNewErrors } from "../lib.mjs";
import { EXTERNAL } from "../probes.mjs";

let ctx, page, errors;
const B = BROWSER;
const ALLOW = ["http://127.0.0.1:*/api/*"];

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
});
afterEach(logNewErrors(() => errors));
after(async () => ctx?.close());

/** Opens a den with these options (memory store, default runtime) as window.dens[name]. */
async function open(name, extra) {
  return page.evaluate(
    async (name, extra) => {
      const { openDen, iframeRuntime, memoryStore } = window.foxden;
      window.dens = window.dens || {};
      window.dens[name] = await openDen({ name, store: memoryStore(), runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/" }), ...extra });
      window.seen = window.seen || {};
      window.seen[name] = [];
      return window.dens[name].info;
    },
    name,
    extra,
  );
}

/** Runs code in a den; the result has `seen`: what onRequest reported during the run. */
async function run(name, code, opts = {}) {
  return page.evaluate(
    async (name, code, opts) => {
      const seen = [];
      const r = await window.dens[name].run(code, { timeoutMs: 30000, ...opts, onRequest: (c) => seen.push(c) });
      return { ...r, seen };
    },
    name,
    code,
    opts,
  );
}

async function close(name) {
  await page.evaluate((name) => window.dens[name].close(), name);
}

const fetchCode = (url, extra = "") => `
import foxden
try:
    r = await foxden.fetch(${JSON.stringify(url)}${extra})
    print("status", r.status, len(r.bytes()))
except foxden.FetchError as e:
    print("refused", e.reason, "|", e)
`;

test(`${B}: an allowed URL on the local server works (GET JSON, POST bytes), made by the host and reported`, async () => {
  await open("net-ok", { network: { allow: ALLOW, methods: ["GET", "POST"], perMinute: 20 } });
  const m = marker("ok");
  const r = await run(
    "net-ok",
    `
import foxden
r = await foxden.fetch("${BASE}/api/json?m=${m}")
print(r.status, r.ok, r.json(), r.headers.get("content-type"), r.headers.get("x-foxden-test"))
body = bytes(range(256)) * 3
e = await foxden.fetch("${BASE}/api/echo?m=${m}-post", method="post", headers={"Content-Type": "application/octet-stream", "X-Trace": "1"}, body=body)
print(e.status, e.bytes() == body, len(e.text()) > 0)
r
`,
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stdout, `200 True {'ok': True, 'method': 'GET', 'path': '/api/json'} application/json yes\n200 True True\n`);
  assert.match(r.result, /^<FetchResponse 200 http:\/\/127\.0\.0\.1:\d+\/api\/json\?m=fxprobe-ok-/);
  const u = `${BASE}/api/json?m=${m}`;
  assert.equal(r.requests.length, 2);
  assert.deepEqual(
    r.requests.map((q) => [q.url, q.method, q.status, q.refusedBecause, q.message, q.bytes]),
    [
      [u, "GET", 200, null, "", r.requests[0].bytes],
      [`${BASE}/api/echo?m=${m}-post`, "POST", 200, null, "", 768],
    ],
  );
  assert.ok(r.requests[0].bytes > 20 && r.requests.every((q) => q.durationMs >= 0));
  assert.deepEqual(
    r.seen.map((c) => [c.url, c.status]),
    r.requests.map((q) => [q.url, q.status]),
  );
  assert.ok(r.seen.every((c) => typeof c.runId === "number"));
  await sleep(300);
  const log = readLog("server");
  assert.ok(log.includes(`GET /api/json?m=${m} `), "the host's GET reached the server");
  assert.ok(log.includes(`POST /api/echo?m=${m}-post `), "the host's POST reached the server");
  await close("net-ok");
});

test(`${B}: urllib.request works on a den with network (JSPI): urlopen and build_opener wait for the host's answer; HTTP errors raise HTTPError, refusals URLError`, async () => {
  await open("net-urllib", { network: { allow: ALLOW, methods: ["GET", "POST"], perMinute: 30 } });
  const m = marker("urllib");
  const r = await run(
    "net-urllib",
    `
import array, io, json, urllib.request, urllib.error
with urllib.request.urlopen("${BASE}/api/json?m=${m}") as f:
    print(f.status, f.reason, f.headers["content-type"], f.getheader("x-foxden-test"), json.load(f))
req = urllib.request.Request("${BASE}/api/echo?m=${m}-post", data=b"hello", headers={"X-Trace": "1"}, method="POST")
print(urllib.request.build_opener().open(req).read())
# Bodies urllib sends chunked (a file, an iterable), and any bytes-like object.
for data in [io.BytesIO(b"from a file"), [b"chu", b"nks"], array.array("B", [1, 2, 3])]:
    print(urllib.request.urlopen(urllib.request.Request("${BASE}/api/echo?m=${m}-body", data=data)).read())
try:
    urllib.request.urlopen("${BASE}/api/nope?m=${m}-404")
except urllib.error.HTTPError as e:
    print("http", e.code, e.reason, e.read())
try:
    urllib.request.urlopen("https://example.com/?m=${m}-refused")
except urllib.error.URLError as e:
    print("url", e.reason.reason)
# urllib's default User-Agent is not sent (Firefox would, and need a CORS preflight); the code's own is.
urllib.request.urlopen("${BASE}/api/json?m=${m}-ua&logua=1").read()
urllib.request.urlopen(urllib.request.Request("${BASE}/api/json?m=${m}-ownua&logua=1", headers={"User-Agent": "mine/1"})).read()
kept = "yes"
`,
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(
    r.stdout,
    "200 OK application/json yes {'ok': True, 'method': 'GET', 'path': '/api/json'}\nb'hello'\nb'from a file'\nb'chunks'\nb'\\x01\\x02\\x03'\nhttp 404 Not Found b'no such endpoint'\nurl not-allowed\n",
  );
  assert.deepEqual(
    r.requests.map((q) => [q.method, q.status, q.refusedBecause]),
    [["GET", 200, null], ["POST", 200, null], ["POST", 200, null], ["POST", 200, null], ["POST", 200, null], ["GET", 404, null], ["GET", null, "not-allowed"], ["GET", 200, null], ["GET", 200, null]],
  );
  // The run's variables are kept as in any run; urllib keeps working in the next one.
  const again = await run("net-urllib", `import urllib.request\nkept, urllib.request.urlopen("${BASE}/api/json?m=${m}-2").status`);
  assert.equal(again.result, "('yes', 200)", JSON.stringify(again.error));
  await sleep(300);
  const log = readLog("server");
  assert.ok(log.includes(`GET /api/json?m=${m} `) && log.includes(`POST /api/echo?m=${m}-post `) && log.includes(`GET /api/json?m=${m}-2 `));
  assert.ok(!readLog("proxy").includes(`${m}-refused`), "the refused URL reached no server");
  const ua = readLog("server").split("\n").filter((l) => l.startsWith("user-agent of") && l.includes(m));
  assert.equal(ua.length, 2, ua.join("\n"));
  assert.ok(!ua.some((l) => l.includes("Python-urllib")), ua.join("\n"));
  // Chromium drops a User-Agent set by script; Firefox sends it.
  if (B === "firefox") assert.ok(ua.some((l) => l.includes(`${m}-ownua`) && l.endsWith(": mine/1")), ua.join("\n"));
  await close("net-urllib");
  // Without the network option, urlopen says how to allow it.
  await open("net-urllib-off", {});
  const off = await run("net-urllib-off", "import urllib.request, urllib.error\ntry:\n    urllib.request.urlopen('http://127.0.0.1:1/api/json')\nexcept urllib.error.URLError as e:\n    print(e.reason)");
  assert.match(off.stdout, /^this den has no network: the host page opens it with network: \{ allow: \[url patterns\] \}/);
  await close("net-urllib-off");
});

test(`${B}: stopping a run, or its timeout, while it waits for a request (or sleeps) raises KeyboardInterrupt where it waits: variables kept, no restart`, async () => {
  const m = marker("stop");
  // On this page (no isolation: JSPI only) and on a cross-origin isolated one (the interrupt
  // signal is set too; KeyboardInterrupt must still be raised once, where the code waits).
  const { page: coi } = await openPage(ctx.browser, "/e2e/index.html", COI_BASE);
  const check = (p, base, tag) =>
    p.evaluate(
      async (base, m) => {
        const { openDen, iframeRuntime, memoryStore } = window.foxden;
        const den = await openDen({ name: "net-stop", store: memoryStore(), runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/" }), network: { allow: ["http://127.0.0.1:*/api/*"], perMinute: 50 } });
        const interruptible = den.info.interruptible;
        await den.run("kept = 'yes'");
        const stopWhileWaiting = async (code) => {
          const running = den.run(code);
          // The request (5 s on the server) is made by then.
          await new Promise((res) => setTimeout(res, 1500));
          const t0 = performance.now();
          await den.stop();
          const r = await running;
          return { type: r.error && r.error.type, kind: r.error && r.error.kind, restarted: r.restarted, stdout: r.stdout, ms: performance.now() - t0 };
        };
        const sync = await stopWhileWaiting(`import urllib.request\ntry:\n    urllib.request.urlopen("${base}/api/slow?ms=5000&m=${m}-1")\nexcept KeyboardInterrupt:\n    print("interrupted")\n    raise`);
        const awaiting = await stopWhileWaiting(`import foxden\nr = await foxden.fetch("${base}/api/slow?ms=5000&m=${m}-2")`);
        // A run of a den with network is entered through JSPI: its time.sleep is stopped too,
        // a long one and a loop of short ones; and code with top-level await in urllib.
        const slept = await stopWhileWaiting("import time\ntime.sleep(30)");
        const naps = await stopWhileWaiting("import time\nwhile True:\n    time.sleep(0.05)");
        const asyncUrllib = await stopWhileWaiting(`import asyncio, urllib.request\nawait asyncio.sleep(0)\nurllib.request.urlopen("${base}/api/slow?ms=5000&m=${m}-4")`);
        // Busy code: the interrupt signal (isolated den, after the worker had its chance to
        // end a wait), else a restart.
        const busy = await stopWhileWaiting("while True: pass");
        // Interrupted busy code (isolated den) that asks for a request as it unwinds (the
        // worker's fetch(), posted at once): refused (interrupted), not made.
        const busyFetch = interruptible ? await stopWhileWaiting(`import js\ntry:\n    while True: pass\nexcept KeyboardInterrupt:\n    js.fetch("${base}/api/json?m=${m}-after")\n    raise`) : null;
        await den.run("kept = 'yes'");
        const timed = await den.run(`import foxden\nv = 7\nawait foxden.fetch("${base}/api/slow?ms=5000&m=${m}-3")`, { timeoutMs: 1500 });
        const after = (await den.run("kept, v")).result;
        await den.close();
        return { interruptible, sync, awaiting, slept, naps, asyncUrllib, busy, busyFetch, timed: { kind: timed.error && timed.error.kind, message: timed.error && timed.error.message, restarted: timed.restarted }, after };
      },
      base,
      m + tag,
    );
  for (const [p, base, tag, isolated] of [[page, BASE, "", false], [coi, COI_BASE, "-coi", true]]) {
    const r = await check(p, base, tag);
    assert.equal(r.interruptible, isolated);
    for (const [name, x, stdout] of [["urlopen", r.sync, "interrupted\n"], ["await foxden.fetch", r.awaiting, ""], ["time.sleep", r.slept, ""], ["time.sleep(0.05) loop", r.naps, ""], ["top-level await, then urlopen", r.asyncUrllib, ""]]) {
      assert.deepEqual({ ...x, ms: undefined }, { type: "KeyboardInterrupt", kind: "python", restarted: false, stdout, ms: undefined }, `${name}${tag}: ${JSON.stringify(x)}`);
      assert.ok(x.ms < 900, `${name}${tag}: the run ended ${x.ms} ms after stop()`);
    }
    const busy = isolated ? { type: "KeyboardInterrupt", restarted: false } : { type: "Stopped", restarted: true };
    assert.deepEqual({ type: r.busy.type, restarted: r.busy.restarted }, busy, `busy${tag}: ${JSON.stringify(r.busy)}`);
    if (isolated) {
      assert.equal(r.busyFetch.type, "KeyboardInterrupt", JSON.stringify(r.busyFetch));
      await sleep(500);
      assert.ok(!readLog("server").includes(`${m}${tag}-after`), "a request of a run being stopped was made");
    }
    assert.equal(r.timed.kind, "timeout", JSON.stringify(r.timed));
    assert.match(r.timed.message, /interrupted \(KeyboardInterrupt\); Python variables were kept/);
    assert.equal(r.timed.restarted, false, tag);
    assert.equal(r.after, "('yes', 7)", tag);
  }
  await coi.close();
});

test(`${B}: JavaScript runs have foxden.fetch too: made by the host under the same options, refusals are FetchErrors`, async () => {
  await open("net-js", { network: { allow: ALLOW, methods: ["GET", "POST"], perMinute: 20 } });
  const m = marker("js");
  const r = await run(
    "net-js",
    `
const r = await foxden.fetch("${BASE}/api/json?m=${m}");
console.log(r.status, r.ok, JSON.stringify(r.json()), r.headers["content-type"]);
const body = new Uint8Array([0, 1, 2, 255]);
const e = await foxden.fetch("${BASE}/api/echo?m=${m}-post", { method: "POST", headers: { "Content-Type": "application/octet-stream" }, body });
console.log(e.status, e.bytes().join(","));
const n = await foxden.fetch("${BASE}/api/json?m=${m}-null", null);
console.log(n.status);
// An empty body on a GET is no body (the browser would refuse the request).
const z = await foxden.fetch("${BASE}/api/json?m=${m}-empty", { body: "" });
console.log(z.status);
let bad;
try {
  await foxden.fetch("${BASE}/api/json?m=${m}-bad", "POST");
} catch (err) {
  bad = err.name;
}
console.log(bad);
let reason;
try {
  await foxden.fetch("${BASE}/den/${m}-outside");
} catch (err) {
  reason = [err.name, err.reason, err instanceof foxden.FetchError, err.message.startsWith("foxden.fetch refused (not-allowed)")];
}
reason
`,
    { lang: "javascript" },
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stdout, `200 true {"ok":true,"method":"GET","path":"/api/json"} application/json\n200 0,1,2,255\n200\n200\nTypeError\n`);
  assert.equal(r.result, '["FetchError", "not-allowed", true, true]');
  assert.deepEqual(
    r.requests.map((q) => [q.method, q.status, q.refusedBecause]),
    [["GET", 200, null], ["POST", 200, null], ["GET", 200, null], ["GET", 200, null], ["GET", null, "not-allowed"]],
  );
  await sleep(300);
  const log = readLog("server");
  assert.ok(log.includes(`GET /api/json?m=${m} `), "the host's GET reached the server");
  assert.ok(!log.includes(`${m}-outside`), "the refused request reached no server");
  await close("net-js");
});

test(`${B}: the host makes at most 6 requests of a run at once (to any servers); the rest wait their turn and are all answered`, async () => {
  await open("net-conc", { network: { allow: ALLOW, perMinute: 50 } });
  const m = marker("conc");
  const r = await run(
    "net-conc",
    `
// Two servers (the browser itself makes at most 6 at once to one of them).
const all = await Promise.all(Array.from({ length: 14 }, (_, i) => foxden.fetch((i % 2 ? "${COI_BASE}" : "${BASE}") + "/api/slow?ms=300&cors=1&g=${m}&m=${m}-" + i)));
JSON.stringify([all.every((a) => a.status === 200), Math.max(...all.map((a) => a.json().concurrent))])
`,
    { lang: "javascript", timeoutMs: 20000 },
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  const [ok, most] = JSON.parse(JSON.parse(r.result));
  assert.equal(ok, true);
  assert.ok(most <= 6, `at most 6 at once on the server, saw ${most}`);
  assert.ok(most >= 2, `requests still go in parallel, saw ${most}`);
  assert.equal(r.requests.length, 14);
  await close("net-conc");
});

test(`${B}: the request bodies a run holds under way in the host page are bounded (16 MiB): past it, requests are refused (rate) until some end`, async () => {
  await open("net-bodies", { network: { allow: ALLOW, methods: ["POST"], perMinute: 100 } });
  const m = marker("bodies");
  const r = await run(
    "net-bodies",
    `
const body = new Uint8Array(1 << 20);
const started = Array.from({ length: 24 }, (_, i) => foxden.fetch("${BASE}/api/slow?ms=400&m=${m}-" + i, { method: "POST", body }));
const all = await Promise.allSettled(started);
const refused = all.filter((a) => a.status === "rejected").map((a) => a.reason.reason);
// Once they ended, the room is back.
const after = await foxden.fetch("${BASE}/api/slow?ms=1&m=${m}-after", { method: "POST", body });
JSON.stringify([all.filter((a) => a.status === "fulfilled").length, [...new Set(refused)], refused.length, after.status, String(all.find((a) => a.status === "rejected")?.reason?.message)])
`,
    { lang: "javascript", timeoutMs: 20000 },
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  const [made, codes, refusedCount, after, message] = JSON.parse(JSON.parse(r.result));
  assert.equal(made, 16);
  assert.deepEqual(codes, ["rate"]);
  assert.equal(refusedCount, 8);
  assert.equal(after, 200);
  assert.match(message, /16 MiB of bodies at most: await some of them first/);
  await close("net-bodies");
});

test(`${B}: the worker's fetch() and Pyodide's pyfetch go through the same broker: allowed URLs answer as Responses, refused ones reach no server`, async () => {
  await open("net-web", { network: { allow: ALLOW, methods: ["GET", "POST"], perMinute: 30 } });
  const m = marker("web");
  const py = await run(
    "net-web",
    `
from pyodide.http import pyfetch
r = await pyfetch("${BASE}/api/json?m=${m}-py")
print(r.status, r.ok, await r.json())
e = await pyfetch("${BASE}/api/echo?m=${m}-py-post", method="POST", body="hello", headers={"Content-Type": "text/plain"})
print(e.status, await e.string())
try:
    await pyfetch("${BASE}/den/${m}-py-outside")
    print("fetched")
except Exception as err:
    print(type(err).__name__, "not-allowed" in str(err))
`,
  );
  assert.equal(py.error, null, JSON.stringify(py.error));
  assert.equal(py.stdout, `200 True {'ok': True, 'method': 'GET', 'path': '/api/json'}\n200 hello\nAbortError True\n`);
  const js = await run(
    "net-web",
    `
const r = await fetch("${BASE}/api/json?m=${m}-js");
console.log(r.status, r.ok, r.url.endsWith("${m}-js"), r.headers.get("content-type"), JSON.stringify(await r.json()));
const req = new Request("${BASE}/api/echo?m=${m}-js-post", { method: "POST", body: new Blob([new Uint8Array([1, 2, 3])]) });
const e = await fetch(req);
console.log(e.status, new Uint8Array(await e.arrayBuffer()).join(","));
let refused;
try {
  await fetch("${BASE}/den/${m}-js-outside");
} catch (err) {
  refused = [err.name, err.reason];
}
const c = new AbortController();
c.abort();
let aborted;
try {
  await fetch("${BASE}/api/json?m=${m}-js-aborted", { signal: c.signal });
} catch (err) {
  aborted = err.name;
}
[refused, aborted]
`,
    { lang: "javascript" },
  );
  assert.equal(js.error, null, JSON.stringify(js.error));
  assert.equal(js.stdout, `200 true true application/json {"ok":true,"method":"GET","path":"/api/json"}\n200 1,2,3\n`);
  assert.equal(js.result, '[["TypeError", "not-allowed"], "AbortError"]');
  assert.deepEqual(
    [...py.requests, ...js.requests].map((q) => [q.method, q.status, q.refusedBecause]),
    [["GET", 200, null], ["POST", 200, null], ["GET", null, "not-allowed"], ["GET", 200, null], ["POST", 200, null], ["GET", null, "not-allowed"]],
  );
  await sleep(300);
  const log = readLog("server");
  for (const ok of [`${m}-py `, `${m}-py-post `, `${m}-js `, `${m}-js-post `]) assert.ok(log.includes(`?m=${ok}`), `${ok} reached the server`);
  for (const no of ["py-outside", "js-outside", "js-aborted"]) assert.ok(!log.includes(`${m}-${no}`), `${no} reached no server`);
  await close("net-web");
});

test(`${B}: refused URLs and methods never reach a server; a clear FetchError names the reason`, async () => {
  await open("net-refuse", { network: { allow: ALLOW, perMinute: 100 } });
  const m = marker("refused");
  const host = BASE.replace("http://", "");
  const cases = [
    [`${EXTERNAL}/api/${m}-ext`, "not-allowed"],
    [`http://127.0.0.1.foxden-probe.example/api/${m}-suffix`, "not-allowed"],
    [`http://${host}@foxden-probe.example/api/${m}-userinfo`, "bad-url"],
    [`http://foxden-probe.example\\\\@${host}/api/${m}-backslash`, "bad-url"],
    [`${BASE}/api/..%2f..%2fden/${m}-dotdot`, "bad-url"],
    [`${BASE}/api/%2e%2e/den/${m}-dotdot2`, "bad-url"],
    [`${BASE}/den/${m}-outside`, "not-allowed"],
    [`https://${host}/api/${m}-https`, "not-allowed"],
    [`http://2130706433/api/${m}-numeric`, "bad-url"],
    [`ftp://127.0.0.1/api/${m}-ftp`, "bad-url"],
  ];
  const code = `
import foxden, json
out = []
for url, _ in json.loads(${JSON.stringify(JSON.stringify(cases))}):
    try:
        await foxden.fetch(url)
        out.append("FETCHED " + url)
    except foxden.FetchError as e:
        out.append(e.reason)
try:
    await foxden.fetch("${BASE}/api/json?m=${m}-delete", method="DELETE")
except foxden.FetchError as e:
    out.append(e.reason)
    print(e)
try:
    await foxden.fetch("${BASE}/api/json?m=${m}-cookie", headers={"Cookie": "a=b"})
except foxden.FetchError as e:
    out.append(e.reason)
print(json.dumps(out))
`;
  const r = await run("net-refuse", code);
  assert.equal(r.error, null, JSON.stringify(r.error));
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[0], /^foxden\.fetch refused \(method\): the method "DELETE" is not allowed \(network\.methods: GET\)$/);
  assert.deepEqual(JSON.parse(lines[1]), [...cases.map((c) => c[1]), "method", "bad-request"]);
  assert.equal(r.requests.length, cases.length + 2);
  assert.ok(r.requests.every((q) => q.status === null && q.refusedBecause && q.message), JSON.stringify(r.requests));
  assert.equal(r.requests[0].url, `${EXTERNAL}/api/${m}-ext`);
  assert.match(r.requests[0].message, /is not in the den's network allowlist/);
  // The host's own control request shows the proxy would have logged such a request.
  const control = marker("control");
  await page.evaluate((u) => fetch(u).catch(() => {}), `${EXTERNAL}/probe/${control}`);
  await sleep(800);
  assert.ok(readLog("proxy").includes(control), "the control request reached the proxy log");
  const leaked = (readLog("server") + readLog("proxy")).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], "refused requests reached a server");
  await close("net-refuse");
});

test(`${B}: the sixth request in a minute is refused (perMinute 5), and only five reach the server`, async () => {
  await open("net-rate", { network: { allow: ALLOW, perMinute: 5 } });
  const m = marker("rate");
  const r = await run(
    "net-rate",
    `
import foxden
for i in range(6):
    try:
        r = await foxden.fetch(f"${BASE}/api/json?m=${m}-{i}")
        print(i, r.status)
    except foxden.FetchError as e:
        print(i, e.reason, str(e))
`,
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  const lines = r.stdout.trim().split("\n");
  assert.deepEqual(lines.slice(0, 5), ["0 200", "1 200", "2 200", "3 200", "4 200"]);
  assert.match(lines[5], /^5 rate foxden\.fetch refused \(rate\): 5 requests were made in the last minute \(network\.perMinute\); the next one is possible in \d+\.\d s$/);
  assert.deepEqual(
    r.requests.map((q) => q.refusedBecause),
    [null, null, null, null, null, "rate"],
  );
  // The window is the den's, not the run's: the next run is refused too.
  const again = await run("net-rate", fetchCode(`${BASE}/api/json?m=${m}-next`));
  assert.match(again.stdout, /^refused rate /);
  await sleep(300);
  const hits = readLog("server").split("\n").filter((l) => l.includes(m));
  assert.equal(hits.length, 5, hits.join("\n"));
  await close("net-rate");
});

test(`${B}: a redirect (to a host not in the allowlist) is refused, and its target is never contacted`, async () => {
  await open("net-redirect", { network: { allow: ALLOW, perMinute: 50 } });
  const m = marker("redirect");
  const target = `${EXTERNAL}/api/${m}-target`;
  const same = `${BASE}/api/json?m=${m}-same`;
  const r = await run(
    "net-redirect",
    fetchCode(`${BASE}/api/redirect?to=${encodeURIComponent(target)}`) + fetchCode(`${BASE}/api/redirect?to=${encodeURIComponent(same)}`),
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 2);
  for (const l of lines) assert.match(l, /^refused redirect \| foxden\.fetch refused \(redirect\): http:\/\/127\.0\.0\.1:\d+\/api\/redirect\?to=\S+ answered with a redirect, which foxden does not follow/);
  assert.deepEqual(
    r.requests.map((q) => q.refusedBecause),
    ["redirect", "redirect"],
  );
  await sleep(800);
  const server = readLog("server");
  assert.ok(server.includes("/api/redirect?to="), "the redirecting request itself was made");
  assert.ok(!readLog("proxy").includes(`${m}-target`), "the redirect's target never reached the proxy");
  assert.ok(!server.includes(`GET /api/json?m=${m}-same`), "a redirect is not followed even to an allowed URL");
  await close("net-redirect");
});

test(`${B}: an answer over maxResponseBytes is cut with a clear error (announced or streamed); one at the cap is delivered`, async () => {
  await open("net-big", { network: { allow: ALLOW, methods: ["GET", "HEAD"], perMinute: 50, maxResponseBytes: 100000 } });
  const r = await run(
    "net-big",
    fetchCode(`${BASE}/api/big?n=100000`) + fetchCode(`${BASE}/api/big?n=100001`) + fetchCode(`${BASE}/api/stream?n=5000000`) +
      // A HEAD answer announcing more than the cap has no body: it is delivered.
      fetchCode(`${BASE}/api/big?n=100001`, `, method="HEAD"`),
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines[0], "status 200 100000");
  assert.match(lines[1], /^refused too-large \| foxden\.fetch refused \(too-large\): the answer is larger than network\.maxResponseBytes \(100000 bytes\): the server announced 100001 bytes; it was cut and not delivered$/);
  assert.match(lines[2], /^refused too-large \| .*network\.maxResponseBytes \(100000 bytes\): \d+ bytes read so far; it was cut and not delivered$/);
  assert.equal(lines[3], "status 200 0");
  assert.deepEqual(
    r.requests.map((q) => [q.status, q.refusedBecause, q.bytes]),
    [
      [200, null, 100000],
      [200, "too-large", 0],
      [200, "too-large", 0],
      [200, null, 0],
    ],
  );
  await close("net-big");
});

test(`${B}: a fetch or Headers wrapper the page installs after foxden loaded is not used for the den's requests`, async () => {
  await open("net-wrap", { network: { allow: ALLOW, perMinute: 20 } });
  const m = marker("wrap");
  await page.evaluate(() => {
    // What an auth interceptor or error reporter does: wrap fetch, add the page's token and
    // cookies, follow redirects.
    window.realFetch = window.fetch;
    window.realHeaders = window.Headers;
    window.wrapped = 0;
    window.fetch = (url, init = {}) => {
      window.wrapped++;
      return window.realFetch(url, { ...init, credentials: "include", redirect: "follow" });
    };
    window.Headers = class extends window.realHeaders {
      constructor(...a) {
        super(...a);
        window.wrapped++;
        this.set("Authorization", "Bearer page-token");
      }
    };
  });
  try {
    const r = await run("net-wrap", fetchCode(`${BASE}/api/json?m=${m}`));
    assert.equal(r.error, null, JSON.stringify(r.error));
    assert.equal(r.stdout.trim().split("\n")[0].split(" ")[0], "status");
    assert.equal(await page.evaluate(() => window.wrapped), 0);
  } finally {
    await page.evaluate(() => {
      window.fetch = window.realFetch;
      window.Headers = window.realHeaders;
    });
  }
  await close("net-wrap");
});

test(`${B}: a request still pending when the run times out is aborted and recorded as such`, async () => {
  await open("net-abort", { network: { allow: ALLOW, perMinute: 50 } });
  const m = marker("abort");
  const r = await run("net-abort", fetchCode(`${BASE}/api/slow?ms=6000&m=${m}`), { timeoutMs: 1500 });
  assert.equal(r.error?.kind, "timeout", JSON.stringify(r.error));
  assert.deepEqual(
    r.requests.map((q) => [q.method, q.status, q.refusedBecause]),
    [["GET", null, "aborted"]],
  );
  assert.match(r.requests[0].message, /the run ended before the answer came/);
  assert.deepEqual(
    r.seen.map((c) => c.refusedBecause),
    ["aborted"],
    "onRequest reports it before run() resolves",
  );
  // The den goes on: the next run fetches normally.
  const next = await run("net-abort", fetchCode(`${BASE}/api/json?m=${m}-next`));
  assert.equal(next.stdout.split(" ")[0], "status");
  await close("net-abort");
});

test(`${B}: without the network option foxden.fetch and the worker's fetch are refused (network-off); XHR stays blocked by the CSP, with network or without`, async () => {
  await open("net-off", {});
  const m = marker("off");
  const r = await run(
    "net-off",
    fetchCode(`${BASE}/api/json?m=${m}-broker`) +
      `
import js
try:
    await js.fetch("${BASE}/api/json?m=${m}-jsfetch")
    print("js.fetch WORKED")
except Exception as e:
    print("js.fetch refused", "network-off" in str(e))
try:
    x = js.XMLHttpRequest.new(); x.open("GET", "${BASE}/api/json?m=${m}-xhr", False); x.send()
    print("xhr WORKED", x.status)
except Exception as e:
    print("xhr blocked")
`,
  );
  assert.equal(r.error, null, JSON.stringify(r.error));
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[0], /^refused network-off \| foxden\.fetch refused \(network-off\): this den has no network: open it with openDen\(\{ network: \{ allow: \[\.\.\.\] \} \}\)/);
  assert.deepEqual(lines.slice(1), ["js.fetch refused True", "xhr blocked"]);
  assert.deepEqual(
    r.requests.map((q) => q.refusedBecause),
    ["network-off", "network-off"],
  );
  // A den with network keeps the CSP too: only the broker's requests get out.
  await open("net-csp", { network: { allow: ALLOW } });
  const r2 = await run("net-csp", `import js\ntry:\n    x = js.XMLHttpRequest.new(); x.open("GET", "${BASE}/api/json?m=${m}-csp", False); x.send()\n    print("WORKED")\nexcept Exception:\n    print("blocked")`);
  assert.equal(r2.stdout, "blocked\n");
  await sleep(500);
  const leaked = (readLog("server") + readLog("proxy")).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], "a request from the sandbox reached a server");
  await close("net-off");
  await close("net-csp");
});

test(`${B}: bad network options are refused with DenError bad-option naming the option`, async () => {
  const out = await page.evaluate(async () => {
    const { openDen, memoryStore } = window.foxden;
    const res = [];
    for (const network of [{ allow: [] }, { allow: ["api.example.com/*"] }, { allow: ["https://a.b"] }, { allow: ["http://a.b/*"], methods: ["CONNECT"] }, { allow: ["http://a.b/*"], perMinute: 0 }, { allow: ["http://a.b/*"], maxResponseBytes: -1 }, { allow: "http://a.b/*" }, "yes"]) {
      try {
        const d = await openDen({ name: "bad-net", store: memoryStore(), network });
        await d.close();
        res.push("opened");
      } catch (e) {
        res.push(`${e.name}:${e.code}:${e.option}`);
      }
    }
    return res;
  });
  assert.deepEqual(out, [
    "DenError:bad-option:network.allow",
    "DenError:bad-option:network.allow",
    "DenError:bad-option:network.allow",
    "DenError:bad-option:network.methods",
    "DenError:bad-option:perMinute",
    "DenError:bad-option:maxResponseBytes",
    "DenError:bad-option:network.allow",
    "DenError:bad-option:network",
  ]);
});

test(`${B}: <foxden-den network="…">: the attribute allows, the request event reports, bad attributes are refused`, async () => {
  const m = marker("el");
  const out = await page.evaluate(
    async (base, m) => {
      const el = window.makeElement({
        name: "net-el",
        network: "https://api.example.com/v1/*   http://127.0.0.1:*/api/*",
        "network-methods": "get, post",
        "network-per-minute": "7",
      });
      const events = [];
      el.addEventListener("request", (e) => events.push(e.detail));
      await el.ready;
      const props = [el.network, el.networkMethods, el.networkPerMinute, el.networkMaxResponseBytes];
      const r = await el.run(`import foxden\nr = await foxden.fetch("${base}/api/json?m=${m}", method="POST", body="hi")\nr.status`);
      const errs = [];
      const bad = document.createElement("foxden-den");
      bad.setAttribute("name", "net-bad");
      bad.setAttribute("network", "ftp://x/*");
      bad.addEventListener("error", (e) => errs.push(e.detail.attribute));
      document.body.append(bad);
      await bad.ready.catch(() => {});
      bad.remove();
      el.remove();
      return { props, result: r.result, requests: r.requests.map((q) => [q.method, q.status]), events: events.map((d) => [d.runId > 0, d.method, d.status, d.url]), errs };
    },
    BASE,
    m,
  );
  assert.deepEqual(out.props, ["https://api.example.com/v1/*   http://127.0.0.1:*/api/*", "get, post", 7, 1048576]);
  assert.equal(out.result, "200");
  assert.deepEqual(out.requests, [["POST", 200]]);
  assert.deepEqual(out.events, [[true, "POST", 200, `${BASE}/api/json?m=${m}`]]);
  assert.deepEqual(out.errs, ["network"]);
});

test(`${B}: a hostile den page cannot make the host fetch what the allowlist refuses, nor flood it`, async () => {
  const m = marker("hostile");
  const out = await page.evaluate(
    async (base, ext, m) => {
      const { openDen, iframeRuntime, memoryStore } = window.foxden;
      const den = await openDen({ name: "net-hostile", store: memoryStore(), network: { allow: ["http://127.0.0.1:*/api/*"], perMinute: 3 }, runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html", pyodideUrl: "/pyodide/" }) });
      const seen = [];
      // The scenario forges fetch messages on the host's port and collects the host's answers.
      const r = await den.run(
        `
        const answers = [];
        port.addEventListener("message", (e) => { if (e.data && e.data.t === "fetch-reply") answers.push(e.data); });
        const f = (req, url, extra) => post({ t: "fetch", id: msg.id, req, url, method: "GET", headers: [], body: null, ...extra });
        f(1, "${ext}/api/${m}-ext");
        f(2, "http://127.0.0.1.evil.example/api/${m}-suffix");
        f(3, 42);
        f(4, "${base}/api/json?m=${m}-ok", { headers: { length: 5 } });
        f(5, "${base}/api/json?m=${m}-ok", { body: "not bytes" });
        f(6, "${base}/api/json?m=${m}-ok", { method: 42 });
        f(2000, "${base}/api/json?m=${m}-good");
        post({ t: "fetch", id: msg.id + 1, req: 7, url: "${base}/api/json?m=${m}-otherrun", method: "GET", headers: [], body: null });
        post({ t: "fetch", id: msg.id, req: -1, url: "${base}/api/json?m=${m}-badreq", method: "GET", headers: [], body: null });
        for (let i = 0; i < 1500; i++) f(100 + i, "${ext}/api/${m}-flood");
        const t0 = Date.now();
        while (answers.length < 1507 && Date.now() - t0 < 10000) await sleep(50);
        await sleep(300);
        const by = {};
        for (const a of answers) by[a.refused || a.status] = (by[a.refused || a.status] || 0) + 1;
        post(honest({ result: JSON.stringify({ n: answers.length, by, last: answers.find((a) => a.req === 2000)?.status ?? null }) }));`,
        { timeoutMs: 20000, onRequest: (c) => seen.push(c.refusedBecause) },
      );
      await den.close();
      return { result: r.result, error: r.error, requests: r.requests.length, seen: seen.length };
    },
    BASE,
    EXTERNAL,
    m,
  );
  assert.equal(out.error, null, JSON.stringify(out.error));
  const res = JSON.parse(out.result);
  // Every forged request with a valid number is answered; the other run's and the bad number are not.
  assert.equal(res.n, 1507, JSON.stringify(res));
  assert.equal(res.last, 200, "an honest request after the flood is made");
  assert.equal(res.by["not-allowed"] + res.by["rate"] + res.by["bad-url"] + res.by["bad-request"] + res.by["method"] + (res.by["200"] || 0), 1507, JSON.stringify(res.by));
  assert.ok(out.requests <= 1000, `records are capped: ${out.requests}`);
  assert.equal(out.seen, out.requests);
  await sleep(800);
  const leaked = (readLog("server") + readLog("proxy")).split("\n").filter((l) => l.includes(m) && !l.includes(`${m}-good`));
  assert.deepEqual(leaked, [], "a forged request reached a server");
  assert.ok(readLog("server").includes(`${m}-good`));
});

test(`${B}: a hostile den page's request body past 4 GiB is refused as too large, not counted as its length modulo 2^32`, async () => {
  const m = marker("hugebody");
  const out = await page.evaluate(
    async (base, m) => {
      const { openDen, iframeRuntime, memoryStore } = window.foxden;
      const den = await openDen({ name: "net-hugebody", store: memoryStore(), network: { allow: ["http://127.0.0.1:*/api/*"], methods: ["GET", "POST"] }, runtime: iframeRuntime({ denUrl: "/e2e/hostile-den.html", pyodideUrl: "/pyodide/" }) });
      // 2^32 + 8 bytes (8 modulo 2^32, under the 1 MiB cap) as a POST body, and 2^32 (0) as a GET
      // body. Chromium's postMessage refuses buffers this big ("not sent"); Firefox's carries them.
      const r = await den.run(
        `
        const answers = [];
        port.addEventListener("message", (e) => { if (e.data && e.data.t === "fetch-reply") answers.push(e.data); });
        const sent = [];
        for (const [req, method, size] of [[1, "POST", 2 ** 32 + 8], [2, "GET", 2 ** 32]]) {
          try {
            const body = new Uint8Array(size);
            post({ t: "fetch", id: msg.id, req, url: "${base}/api/json?m=${m}-" + req, method, headers: [], body }, [body.buffer]);
            sent.push(req);
          } catch (e) {}
        }
        const t0 = Date.now();
        while (answers.length < sent.length && Date.now() - t0 < 10000) await sleep(50);
        post(honest({ result: JSON.stringify({ sent, answers: answers.map((a) => [a.req, a.refused || a.status]) }) }));`,
        { timeoutMs: 20000 },
      );
      await den.close();
      return { result: r.result, error: r.error, requests: r.requests.map((q) => q.refusedBecause) };
    },
    BASE,
    m,
  );
  assert.equal(out.error, null, JSON.stringify(out.error));
  const res = JSON.parse(out.result);
  if (B === "firefox") assert.deepEqual(res.sent, [1, 2], "Firefox carries the buffers: the test must reach the host");
  assert.deepEqual(res.answers, res.sent.map((req) => [req, "bad-request"]), JSON.stringify(res));
  await sleep(500);
  const leaked = (readLog("server") + readLog("proxy")).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], "a refused request reached a server");
});
