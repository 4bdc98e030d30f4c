// The network probe set, shared by the website and extension suites. Python code (and, in
// assertNoNetworkFromJs, JavaScript code: den.run(code, { lang: "javascript" })), run inside a
// den, tries every way out we know of against each target; the caller then checks that no
// server log holds the probes' marker (judge by markers: browsers have background traffic too),
// with a positive control proving the logs would have seen such requests.
import assert from "node:assert/strict";
import { readLog, marker, sleep } from "./lib.mjs";

export const EXTERNAL = "http://foxden-probe.example";

/**
 * Python source of the probe set. `targets` maps a name to a base URL. Targets listed in
 * `packagedOnly` are origins that hold packaged files only (an extension's own origin): the
 * probes that need a network host (WebSocket, sockets, Python HTTP clients) are skipped there.
 */
export function probeCode(m, targets, packagedOnly = [], only = null) {
  return `
import asyncio, js, json
from pyodide.ffi import to_js, create_proxy
results = {}
targets = json.loads(${JSON.stringify(JSON.stringify(targets))})
packaged_only = set(json.loads(${JSON.stringify(JSON.stringify(packagedOnly))}))
only = json.loads(${JSON.stringify(JSON.stringify(only))})

async def attempt(name, fn):
    try:
        r = fn()
        if asyncio.iscoroutine(r) or hasattr(r, "then"):
            r = await asyncio.wait_for(r, 3)
        results[name] = "NO ERROR: " + str(r)[:80]
    except BaseException as e:
        results[name] = type(e).__name__ + ": " + str(e)[:120]

async def nested(worker):
    # A nested worker's attempts count only if its code ran: it says so ("tried") once they are
    # made, or the browser refused to load it (an error event, e.g. a CSP without data:).
    done = asyncio.get_event_loop().create_future()
    def settle(kind):
        if not done.done():
            done.set_result(kind)
    worker.onmessage = create_proxy(lambda e: settle("ran"))
    worker.onerror = create_proxy(lambda e: settle("refused"))
    try:
        return await asyncio.wait_for(done, 2.5)
    except asyncio.TimeoutError:
        return "silent"

def probes_for(where, base):
    u = lambda kind: f"{base}/probe/${m}-{where}-{kind}"
    ws = u("ws").replace("http://", "ws://")
    p = []
    p.append(("js.fetch", lambda: js.fetch(u("fetch"))))
    def xhr_sync():
        x = js.XMLHttpRequest.new(); x.open("GET", u("xhr-sync"), False); x.send(); return x.status
    p.append(("xhr-sync", xhr_sync))
    def xhr_async():
        x = js.XMLHttpRequest.new(); x.open("GET", u("xhr-async"), True); x.send(); return "sent"
    p.append(("xhr-async", xhr_async))
    if where not in packaged_only:
        p.append(("websocket", lambda: js.WebSocket.new(ws)))
    p.append(("eventsource", lambda: js.EventSource.new(u("eventsource"))))
    p.append(("importScripts(instance)", lambda: js.importScripts(u("importscripts-i"))))
    p.append(("importScripts(prototype)", lambda: js.WorkerGlobalScope.prototype.importScripts.call(js.self, u("importscripts-p"))))
    p.append(("import()", lambda: __import__("pyodide.code").code.run_js(f"import('{u('import')}')")))
    p.append(("eval", lambda: js.eval(f"fetch('{u('eval')}')")))
    p.append(("new Function", lambda: js.Function.new(f"return fetch('{u('function')}')")()))
    p.append(("nested Worker(url)", lambda: js.Worker.new(u("worker"))))
    def worker_src(tag):
        # A nested worker runs JS of our choosing without our importScripts patch: it tries
        # fetch, importScripts, and the prototype's importScripts (which Chromium refuses to
        # call through Pyodide's proxies with "Illegal invocation"), then says it tried.
        return (f"fetch('{u(tag + '-fetch')}').catch(() => {{}});"
                f"try {{ importScripts('{u(tag + '-import')}') }} catch (e) {{}}"
                f"try {{ WorkerGlobalScope.prototype.importScripts.call(self, '{u(tag + '-proto')}') }} catch (e) {{}}"
                f"import('{u(tag + '-dynimport')}').catch(() => {{}});"
                "setTimeout(() => postMessage('tried'), 100);")
    def blob_worker():
        src = worker_src("blobworker")
        b = js.Blob.new(to_js([src]), to_js({"type": "text/javascript"}, dict_converter=js.Object.fromEntries))
        return nested(js.Worker.new(js.URL.createObjectURL(b)))
    p.append(("nested blob Worker", blob_worker))
    def data_worker():
        # The same from a data: URL, which the den's CSP allows for workers (the den starts its own
        # worker that way): it inherits the den's policy, so it can fetch nothing either.
        src = worker_src("dataworker")
        return nested(js.Worker.new("data:text/javascript," + js.encodeURIComponent(src)))
    p.append(("nested data: Worker", data_worker))
    if where in packaged_only:
        return p
    def urllib_probe():
        import urllib.request
        return urllib.request.urlopen(u("urllib"), timeout=2).status
    p.append(("urllib", urllib_probe))
    def http_client_probe():
        import http.client, urllib.parse
        q = urllib.parse.urlparse(u("httpclient"))
        c = http.client.HTTPConnection(q.hostname, q.port or 80, timeout=2)
        c.request("GET", q.path)
        return c.getresponse().status
    p.append(("http.client", http_client_probe))
    import pyodide.http
    p.append(("pyfetch", lambda: pyodide.http.pyfetch(u("pyfetch"))))
    p.append(("open_url", lambda: pyodide.http.open_url(u("openurl"))))
    def socket_probe():
        import socket, urllib.parse
        q = urllib.parse.urlparse(u("socket"))
        s = socket.create_connection((q.hostname, q.port or 80), timeout=2)
        s.sendall(f"GET {q.path} HTTP/1.0\\r\\n\\r\\n".encode())
        return s.recv(10)
    p.append(("socket", socket_probe))
    return p

probes = {f"{where}:{name}": fn for where, base in targets.items() for name, fn in probes_for(where, base)}
if only is None:
    print(json.dumps(sorted(probes)))
else:
    await attempt(only, probes[only])
    await asyncio.sleep(0.2)
    print(json.dumps(results))
`;
}

/**
 * After a probe set: the host page's own control requests must reach the static server's and
 * the proxy's logs (so the logs work), and no request carrying the probes' marker `m` may.
 */
async function assertNoMarkerLogged(page, targets, m, outcomes) {
  await sleep(1500);
  const control = marker("control");
  await page.evaluate(
    async (same, ext) => {
      await fetch(same).catch(() => {});
      await fetch(ext).catch(() => {});
    },
    `${targets.same}/probe/${control}-same`,
    `${EXTERNAL}/probe/${control}-ext`,
  );
  await sleep(500);
  const server = readLog("server");
  const proxy = readLog("proxy");
  assert.ok(server.includes(`${control}-same`), "the host's control request reached the static server log");
  assert.ok(proxy.includes(`${control}-ext`), "the host's control request reached the proxy log");
  const leaked = (server + proxy).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], `sandbox requests reached a server:\n${leaked.join("\n")}\n${outcomes}`);
}

/**
 * Runs the probe set in a den through `runInPage(code, timeoutMs)` (which returns the run result) and
 * asserts: no marker in the server or proxy log, the host's own control requests are in both
 * logs, and every probe failed (those that merely construct an object are judged by the logs).
 */
export async function assertNoNetwork({ page, runInPage, targets, packagedOnly = [], minProbes, label }) {
  const m = marker("net");
  const list = await runInPage(probeCode(m, targets, packagedOnly), 30000);
  assert.equal(list.error, null, JSON.stringify(list.error));
  // One run per probe, each with its own timeout: a probe that hangs (a synchronous request
  // the browser never answers) is reported as such and cannot hide the others.
  const results = {};
  // A nested blob: or data: worker's outcome that proves something: it ran its attempts, or the
  // browser refused to load it.
  const nestedWorker = /nested (blob|data:) Worker/;
  const heard = /^NO ERROR: (ran|refused)$/;
  const probe = async (name) => {
    const r = await runInPage(probeCode(m, targets, packagedOnly, name), 15000);
    if (r.error && r.error.kind === "timeout") results[name] = "HUNG (run timed out; worker restarted)";
    else if (r.error) results[name] = `run error: ${r.error.kind} ${r.error.message}`;
    else Object.assign(results, JSON.parse(r.stdout.trim().split("\n").pop()));
  };
  for (const name of JSON.parse(list.stdout.trim().split("\n").pop())) await probe(name);
  // Firefox's Worker constructor inside the den's worker has been seen to stall until the run's
  // timeout (about once in eight full suites; see trust.test.mjs): a nested worker that neither
  // ran nor was refused is tried once more, and said.
  for (const name of Object.keys(results).filter((n) => nestedWorker.test(n) && !heard.test(results[n]))) {
    console.log(`# ${label}: ${name}: ${results[name]}; trying once more`);
    await probe(name);
  }
  await assertNoMarkerLogged(page, targets, m, `probe outcomes: ${JSON.stringify(results, null, 1)}`);
  const names = Object.keys(results);
  assert.ok(names.length >= minProbes, `ran ${names.length} probes`);
  for (const [name, outcome] of Object.entries(results)) {
    // A nested blob: or data: worker either ran its attempts or was refused (else the logs
    // prove nothing); the logs then decide.
    if (nestedWorker.test(name)) {
      assert.match(outcome, heard, `${name}: ${outcome}`);
      continue;
    }
    // Constructing a WebSocket/Worker/XHR/EventSource can "succeed" locally; the logs decide.
    if (/websocket|Worker|xhr-async|eventsource|socket/.test(name)) continue;
    assert.doesNotMatch(outcome, /^NO ERROR/, `${name}: ${outcome}`);
  }
  console.log(`# ${label} probe outcomes:\n${names.map((n) => `#   ${n}: ${results[n]}`).join("\n")}`);
}

/**
 * The probe set again, as JavaScript run in the den (`runInPage(code, timeoutMs)` runs it with
 * lang "javascript" and returns the run result): every way out a script has, against each target.
 * Asserts what assertNoNetwork does: no marker in the server or proxy log (with the host's
 * control requests in both), and the requests themselves fail.
 */
export async function assertNoNetworkFromJs({ page, runInPage, targets, label }) {
  const m = marker("jsnet");
  const results = {};
  for (const [where, base] of Object.entries(targets)) {
    const u = (kind) => `${base}/probe/${m}-${where}-${kind}`;
    const ws = u("ws").replace("http://", "ws://");
    const nested = (tag) =>
      `fetch('${u(tag + "-fetch")}').catch(() => {}); try { importScripts('${u(tag + "-import")}') } catch (e) {} ` +
      `try { WorkerGlobalScope.prototype.importScripts.call(self, '${u(tag + "-proto")}') } catch (e) {} import('${u(tag + "-dynimport")}').catch(() => {}); ` +
      `setTimeout(() => postMessage('tried'), 100);`;
    // Whether the nested worker's code ran ("tried" once its attempts are made) or the browser
    // refused to load it: a worker that did neither would prove nothing.
    const heard = `await new Promise((r) => { w.onmessage = () => r('ran'); w.onerror = () => r('refused'); setTimeout(() => r('silent'), 3000); })`;
    const probes = {
      fetch: `await fetch('${u("fetch")}')`,
      "xhr-sync": `const x = new XMLHttpRequest(); x.open('GET', '${u("xhr-sync")}', false); x.send(); x.status`,
      "xhr-async": `const x = new XMLHttpRequest(); x.open('GET', '${u("xhr-async")}'); x.send(); await new Promise((r) => { x.onloadend = r; setTimeout(r, 2000) }); x.status`,
      websocket: `const w = new WebSocket('${ws}'); await new Promise((r) => { w.onerror = w.onopen = w.onclose = r; setTimeout(r, 2000) }); w.readyState`,
      eventsource: `const e = new EventSource('${u("eventsource")}'); await new Promise((r) => { e.onerror = e.onopen = r; setTimeout(r, 2000) }); const s = e.readyState; e.close(); s`,
      importScripts: `importScripts('${u("importscripts")}')`,
      "importScripts(prototype)": `WorkerGlobalScope.prototype.importScripts.call(self, '${u("importscripts-p")}')`,
      "import()": `await import('${u("import")}')`,
      "eval fetch": `await eval("fetch('${u("eval")}')")`,
      "new Function fetch": `await new Function("return fetch('${u("function")}')")()`,
      "Worker(url)": `const w = new Worker('${u("worker")}'); await new Promise((r) => { w.onerror = r; setTimeout(r, 1000) }); 'made'`,
      "Worker(url, module)": `const w = new Worker('${u("worker-module")}', { type: 'module' }); await new Promise((r) => { w.onerror = r; setTimeout(r, 1000) }); 'made'`,
      "blob Worker": `const w = new Worker(URL.createObjectURL(new Blob([${JSON.stringify(nested("blobworker"))}], { type: 'text/javascript' }))); ${heard}`,
      "data: Worker": `const w = new Worker('data:text/javascript,' + encodeURIComponent(${JSON.stringify(nested("dataworker"))})); ${heard}`,
      sendBeacon: `typeof navigator.sendBeacon === 'function' ? navigator.sendBeacon('${u("beacon")}', 'x') : 'absent'`,
      "Image / FontFace": `typeof Image === 'function' ? new Image().src = '${u("image")}' : await new FontFace('x', "url('${u("font")}')").load()`,
      "createImageBitmap(fetch)": `await createImageBitmap(await (await fetch('${u("bitmap")}')).blob())`,
      "SharedWorker": `typeof SharedWorker === 'function' ? new SharedWorker('${u("shared")}') : 'absent'`,
      "WebTransport": `typeof WebTransport === 'function' ? await new WebTransport('https://foxden-probe.example:4433/${m}-${where}-wt').ready : 'absent'`,
      "RTCPeerConnection": `typeof RTCPeerConnection === 'function' ? 'present' : 'absent'`,
      "caches": `typeof caches === 'object' ? await caches.open('x') : 'absent'`,
    };
    for (const [name, code] of Object.entries(probes)) {
      const outcome = async () => {
        const r = await runInPage(code, 10000);
        return r.error ? `${r.error.kind} ${r.error.type}: ${r.error.message.slice(0, 100)}` : `NO ERROR: ${r.result}`;
      };
      results[`${where}:${name}`] = await outcome();
      // The Firefox nested-worker stall (see assertNoNetwork): a nested worker that neither ran
      // nor was refused is tried once more, and said.
      if (/^(blob|data:) Worker$/.test(name) && !/^NO ERROR: "?(ran|refused)"?$/.test(results[`${where}:${name}`])) {
        console.log(`# ${label}: ${where}:${name}: ${results[`${where}:${name}`]}; trying once more`);
        results[`${where}:${name}`] = await outcome();
      }
    }
  }
  await assertNoMarkerLogged(page, targets, m, JSON.stringify(results, null, 1));
  // The requests themselves fail (constructors that merely make an object are judged by the logs).
  for (const name of ["fetch", "xhr-sync", "importScripts", "importScripts(prototype)", "import()", "eval fetch", "new Function fetch", "createImageBitmap(fetch)"]) {
    for (const where of Object.keys(targets)) assert.doesNotMatch(results[`${where}:${name}`], /^NO ERROR/, `${where}:${name}: ${results[`${where}:${name}`]}`);
  }
  for (const name of ["blob Worker", "data: Worker"]) {
    for (const where of Object.keys(targets)) assert.match(results[`${where}:${name}`], /^NO ERROR: "?(ran|refused)"?$/, `${where}:${name}: ${results[`${where}:${name}`]}`);
  }
  console.log(`# ${label} JavaScript probe outcomes:\n${Object.entries(results).map(([n, o]) => `#   ${n}: ${o}`).join("\n")}`);
}
