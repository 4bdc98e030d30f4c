// No network, really: every probe run from inside the sandbox must fail AND leave no trace in
// the static server's log (same-origin URLs) or the logging proxy's log (everything else).
// The same URLs fetched by the host page itself are the positive control: they must show up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, BASE, readLog, marker, sleep } from "../lib.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser));
  await openQuickDen(page, "probe");
});
after(async () => ctx?.close());

const EXTERNAL = "http://foxden-probe.example";

function probeCode(m, base) {
  return `
import asyncio, js, json
from pyodide.ffi import to_js, create_proxy
results = {}
targets = {"same": ${JSON.stringify(base)}, "ext": ${JSON.stringify(EXTERNAL)}}

async def attempt(name, fn):
    try:
        r = fn()
        if asyncio.iscoroutine(r):
            r = await asyncio.wait_for(r, 3)
        elif hasattr(r, "then"):
            r = await asyncio.wait_for(r, 3)
        results[name] = "NO ERROR: " + str(r)[:80]
    except BaseException as e:
        results[name] = type(e).__name__ + ": " + str(e)[:120]

for where, base in targets.items():
    u = lambda kind: f"{base}/probe/${m}-{where}-{kind}"
    ws = u("ws").replace("http://", "ws://")
    await attempt(f"{where}:js.fetch", lambda: js.fetch(u("fetch")))
    def xhr_sync():
        x = js.XMLHttpRequest.new(); x.open("GET", u("xhr-sync"), False); x.send(); return x.status
    await attempt(f"{where}:xhr-sync", xhr_sync)
    def xhr_async():
        x = js.XMLHttpRequest.new(); x.open("GET", u("xhr-async"), True); x.send(); return "sent"
    await attempt(f"{where}:xhr-async", xhr_async)
    await attempt(f"{where}:websocket", lambda: js.WebSocket.new(ws))
    await attempt(f"{where}:eventsource", lambda: js.EventSource.new(u("eventsource")))
    await attempt(f"{where}:importScripts(instance)", lambda: js.importScripts(u("importscripts-i")))
    await attempt(f"{where}:importScripts(prototype)", lambda: js.WorkerGlobalScope.prototype.importScripts.call(js.self, u("importscripts-p")))
    await attempt(f"{where}:import()", lambda: __import__("pyodide.code").code.run_js(f"import('{u('import')}')"))
    await attempt(f"{where}:eval", lambda: js.eval(f"fetch('{u('eval')}')"))
    await attempt(f"{where}:new Function", lambda: js.Function.new(f"return fetch('{u('function')}')")())
    await attempt(f"{where}:nested Worker(url)", lambda: js.Worker.new(u("worker")))
    def blob_worker():
        src = f"fetch('{u('blobworker-fetch')}'); try {{ importScripts('{u('blobworker-import')}') }} catch (e) {{}}"
        b = js.Blob.new(to_js([src]), to_js({"type": "text/javascript"}, dict_converter=js.Object.fromEntries))
        return js.Worker.new(js.URL.createObjectURL(b))
    await attempt(f"{where}:nested blob Worker", blob_worker)
    def urllib_probe():
        import urllib.request
        return urllib.request.urlopen(u("urllib"), timeout=2).status
    await attempt(f"{where}:urllib", urllib_probe)
    def http_client_probe():
        import http.client, urllib.parse
        p = urllib.parse.urlparse(u("httpclient"))
        c = http.client.HTTPConnection(p.hostname, p.port or 80, timeout=2)
        c.request("GET", p.path)
        return c.getresponse().status
    await attempt(f"{where}:http.client", http_client_probe)
    import pyodide.http
    await attempt(f"{where}:pyfetch", lambda: pyodide.http.pyfetch(u("pyfetch")))
    await attempt(f"{where}:open_url", lambda: pyodide.http.open_url(u("openurl")))
    def socket_probe():
        import socket, urllib.parse
        p = urllib.parse.urlparse(u("socket"))
        s = socket.create_connection((p.hostname, p.port or 80), timeout=2)
        s.sendall(f"GET {p.path} HTTP/1.0\\r\\n\\r\\n".encode())
        return s.recv(10)
    await attempt(f"{where}:socket", socket_probe)

await asyncio.sleep(1.0)
print(json.dumps(results))
`;
}

test(`${BROWSER}: every network probe from the sandbox fails and reaches no server`, async () => {
  const m = marker("net");
  const r = await page.evaluate((code) => window.dens.probe.run(code, { timeoutMs: 60000 }), probeCode(m, BASE));
  assert.equal(r.error, null, JSON.stringify(r.error));
  const results = JSON.parse(r.stdout.trim().split("\n").pop());
  // Positive control: the host page itself reaches both logs with the same kind of URL.
  const control = marker("control");
  await page.evaluate(async (same, ext) => {
    await fetch(same).catch(() => {});
    await fetch(ext).catch(() => {});
  }, `${BASE}/probe/${control}-same`, `${EXTERNAL}/probe/${control}-ext`);
  await sleep(1500);
  const server = readLog("server");
  const proxy = readLog("proxy");
  assert.ok(server.includes(`${control}-same`), "control request reached the static server log");
  assert.ok(proxy.includes(`${control}-ext`), "control request reached the proxy log");
  const leaked = (server + proxy).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], `sandbox requests reached a server:\n${leaked.join("\n")}\nprobe outcomes: ${JSON.stringify(results, null, 1)}`);
  // Every probe must also have failed (or done nothing) from the sandbox's point of view.
  const names = Object.keys(results);
  assert.ok(names.length >= 30, `ran ${names.length} probes`);
  for (const [name, outcome] of Object.entries(results)) {
    // Constructing a WebSocket/Worker/XHR can "succeed" locally; what matters is the logs above.
    if (/websocket|Worker|xhr-async|eventsource|socket/.test(name)) continue;
    assert.doesNotMatch(outcome, /^NO ERROR/, `${name}: ${outcome}`);
  }
  console.log(`# ${BROWSER} probe outcomes:\n${names.map((n) => `#   ${n}: ${results[n]}`).join("\n")}`);
});
