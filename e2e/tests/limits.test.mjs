// Limits that keep Python's state: on a cross-origin isolated host page (COOP + COEP) a timeout
// interrupts Python instead of killing the worker (without isolation the worker is killed: see
// the spine tests), and maxMemoryBytes turns memory exhaustion into a MemoryError.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, COI_BASE } from "../lib.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser, "/e2e/index.html", COI_BASE));
});
after(async () => ctx?.close());

test(`${BROWSER}: on a cross-origin isolated page a timeout interrupts Python and keeps variables`, async () => {
  assert.equal(await page.evaluate(() => window.crossOriginIsolated), true);
  const info = await openQuickDen(page, "coi");
  assert.equal(info.interruptible, true);
  const r = await page.evaluate(async () => {
    const den = window.dens.coi;
    await den.run("kept = 'still here'");
    const t0 = performance.now();
    const timed = await den.run("n = 0\nwhile True:\n    n += 1", { timeoutMs: 500 });
    const took = performance.now() - t0;
    const after = await den.run("kept, n > 0");
    return { timed, took, after };
  });
  assert.equal(r.timed.error.kind, "timeout");
  assert.equal(r.timed.restarted, false);
  assert.ok(r.took < 1400, `interrupt took ${r.took} ms`);
  assert.equal(r.after.result, "('still here', True)");
  // Code that swallows KeyboardInterrupt is still stopped: the worker is killed after the grace.
  const stubborn = await page.evaluate(() =>
    window.dens.coi.run("while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass", { timeoutMs: 300 }),
  );
  assert.equal(stubborn.error.kind, "timeout");
  assert.equal(stubborn.restarted, true);
  const fresh = await page.evaluate(() => window.dens.coi.run("'kept' in globals()"));
  assert.equal(fresh.result, "False");
});

test(`${BROWSER}: a timeout or Stop interrupts one long time.sleep within a slice of it: KeyboardInterrupt, variables kept`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.coi;
    await den.run("kept = 'here'");
    const t0 = performance.now();
    const timed = await den.run("import time\ntime.sleep(30)", { timeoutMs: 500 });
    const timedMs = performance.now() - t0;
    const running = den.run("import time\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('stopped')\n    raise");
    await new Promise((res) => setTimeout(res, 500));
    const t1 = performance.now();
    await den.stop();
    const stopped = await running;
    const stopMs = performance.now() - t1;
    const after = await den.run("kept");
    return { timed, timedMs, stopped, stopMs, after: after.result };
  });
  assert.equal(r.timed.error.kind, "timeout");
  assert.equal(r.timed.restarted, false);
  assert.ok(r.timedMs < 1400, `the timeout took ${r.timedMs} ms`);
  assert.doesNotMatch(r.timed.error.traceback, /<foxden>|_foxden/);
  assert.deepEqual([r.stopped.error.type, r.stopped.stdout, r.stopped.restarted], ["KeyboardInterrupt", "stopped\n", false]);
  assert.ok(r.stopMs < 900, `Stop took ${r.stopMs} ms`);
  assert.doesNotMatch(r.stopped.error.traceback, /<foxden>|_foxden/);
  assert.equal(r.after, "'here'");
});

test(`${BROWSER}: a timeout interrupts a loop of time.sleep (foxden's flushing wrapper) and its traceback shows the user's code only`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.coi;
    await den.run("kept = 'here'");
    const timed = await den.run("import time\nwhile True:\n    print('tick')\n    time.sleep(0.002)", { timeoutMs: 700, maxOutputBytes: 1 << 20 });
    const after = await den.run("kept");
    const direct = await den.run("import time\ntime.sleep('x')");
    return { timed, after, direct };
  });
  assert.equal(r.timed.error.kind, "timeout");
  assert.equal(r.timed.restarted, false);
  assert.match(r.timed.stdout, /^(tick\n)+$/);
  assert.match(r.timed.error.traceback, /<exec>/);
  assert.doesNotMatch(r.timed.error.traceback, /<foxden>|_foxden/);
  assert.equal(r.after.result, "'here'");
  // The builtin's own error, and a traceback without the wrapper.
  assert.equal(r.direct.error.type, "TypeError");
  assert.doesNotMatch(r.direct.error.traceback, /<foxden>|_foxden/);
});

test(`${BROWSER}: maxMemoryBytes caps the worker's memory: MemoryError, and the den keeps working`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, DenError } = window.foxden;
    let tooSmall = null;
    try {
      await openDen({ name: "tiny", runtime: iframeRuntime(), maxMemoryBytes: 1024 });
    } catch (e) {
      tooSmall = e instanceof DenError ? e.option : e.name;
    }
    const den = await openDen({ name: "capped-mem", runtime: iframeRuntime(), maxMemoryBytes: 256 * 1024 * 1024 });
    await den.run("keep = 'me'");
    const big = await den.run("blob = bytearray(400 * 1024 * 1024)");
    const after = await den.run("small = bytearray(10 * 1024 * 1024)\nkeep, len(small)");
    await den.close();
    return { tooSmall, big, after };
  });
  assert.equal(r.tooSmall, "maxMemoryBytes");
  assert.equal(r.big.error.kind, "python");
  assert.equal(r.big.error.type, "MemoryError");
  assert.equal(r.big.restarted, false);
  assert.equal(r.after.error, null, JSON.stringify(r.after.error));
  assert.equal(r.after.result, "('me', 10485760)");
});

test(`${BROWSER}: write limits (maxFileBytes, maxFiles, maxWritesPerMinute) hold for host writes, runs and restores; the store is unchanged`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, DenError, encodeSnapshot } = window.foxden;
    const err = async (p) => {
      try {
        await p;
        return null;
      } catch (e) {
        return { name: e.name, code: e instanceof DenError ? e.code : null, message: e.message };
      }
    };
    const out = {};
    // Bad values are refused, naming the option.
    out.badOption = await err(openDen({ name: "wl-bad", runtime: iframeRuntime(), maxFiles: 0 }));
    const den = await openDen({ name: "wl", runtime: iframeRuntime(), maxFileBytes: 1000, maxFiles: 3 });
    await den.writeFile("/work/a.txt", "a");
    out.hostBig = await err(den.writeFile("/work/big.bin", new Uint8Array(1001)));
    out.hostOk = await den.writeFile("/work/edge.bin", new Uint8Array(1000));
    // A run that writes a file over the cap: storage error naming the limit; nothing kept.
    out.runBig = await den.run("open('/work/run.bin','wb').write(b'x'*1001)\nopen('/work/small.txt','w').write('s')");
    out.afterRunBig = (await den.list()).map((f) => f.path);
    // A run over the file count.
    out.runMany = await den.run("for i in range(3):\n    open(f'/work/m{i}.txt','w').write('m')");
    out.afterRunMany = (await den.list()).map((f) => f.path);
    // The worker is back in step with the store: the refused files are gone from the next run's view.
    out.view = (await den.run("import os\nsorted(os.listdir('/work'))")).result;
    // A restore with a file over the cap changes nothing.
    out.restoreBig = await err(den.restore(encodeSnapshot({ "/work/r.bin": new Uint8Array(2000) })));
    out.afterRestore = (await den.list()).map((f) => f.path);
    await den.close();

    // Writes per minute: 3 allowed, the 4th refused (host), and a run that would go over.
    const rated = await openDen({ name: "wl-rate", runtime: iframeRuntime(), maxWritesPerMinute: 3 });
    await rated.writeFile("/work/1", "1");
    await rated.writeFile("/work/2", "2");
    out.rateRun = await rated.run("open('/work/3','w').write('3')\nopen('/work/4','w').write('4')");
    await rated.writeFile("/work/3", "3");
    out.rateHost = await err(rated.writeFile("/work/5", "5"));
    out.rateFiles = (await rated.list()).map((f) => f.path);
    await rated.close();
    return out;
  });
  assert.equal(r.badOption?.code, "bad-option");
  assert.match(r.badOption.message, /maxFiles must be a whole number from 1 to 10000/);
  assert.equal(r.hostBig?.code, "cap");
  assert.match(r.hostBig.message, /maxFileBytes/);
  assert.deepEqual(r.hostOk.created, ["/work/edge.bin"]);
  assert.equal(r.runBig.error?.kind, "storage", JSON.stringify(r.runBig));
  assert.match(r.runBig.error.message, /maxFileBytes/);
  assert.deepEqual(r.runBig.files, { created: [], changed: [], deleted: [] });
  assert.deepEqual(r.afterRunBig, ["/work/a.txt", "/work/edge.bin"]);
  assert.equal(r.runMany.error?.kind, "storage");
  assert.match(r.runMany.error.message, /maxFiles/);
  assert.deepEqual(r.afterRunMany, ["/work/a.txt", "/work/edge.bin"]);
  assert.equal(r.view, "['a.txt', 'edge.bin']");
  assert.equal(r.restoreBig?.code, "cap");
  assert.deepEqual(r.afterRestore, ["/work/a.txt", "/work/edge.bin"]);
  assert.equal(r.rateRun.error?.kind, "storage");
  assert.match(r.rateRun.error.message, /maxWritesPerMinute/);
  assert.equal(r.rateHost?.code, "cap");
  assert.match(r.rateHost.message, /maxWritesPerMinute/);
  assert.deepEqual(r.rateFiles, ["/work/1", "/work/2", "/work/3"]);
});

test(`${BROWSER}: on a cross-origin isolated page the Stop button interrupts Python and keeps variables; code that swallows the interrupt is restarted`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeElement({ name: "stopper", controls: "", readonly: "" });
    await el.ready;
    const root = el.shadowRoot;
    const stop = root.querySelector('[part~="stop-button"]');
    const status = () => root.querySelector('[part~="status"]').textContent;
    const stopWhile = async (code) => {
      const running = el.run(code);
      const t0 = Date.now();
      while (stop.disabled && Date.now() - t0 < 10000) await new Promise((res) => setTimeout(res, 20));
      await new Promise((res) => setTimeout(res, 300));
      stop.click();
      const res = await running;
      return { type: res.error && res.error.type, kind: res.error && res.error.kind, restarted: res.restarted, status: status() };
    };
    await el.run("kept = 'yes'");
    const soft = await stopWhile("n = 0\nwhile True:\n    n += 1");
    const after = (await el.run("kept, n > 0")).result;
    const hard = await stopWhile("while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass");
    const gone = (await el.run("'kept' in globals()")).result;
    el.remove();
    return { soft, after, hard, gone };
  });
  assert.deepEqual(r.soft, { type: "KeyboardInterrupt", kind: "python", restarted: false, status: "Stopped: Python was interrupted (KeyboardInterrupt); variables are kept" });
  assert.equal(r.after, "('yes', True)");
  assert.deepEqual(r.hard, { type: "Stopped", kind: "crashed", restarted: true, status: "Stopped: the interpreter was restarted, so Python variables were lost (files are kept)" });
  assert.equal(r.gone, "False");
});

test(`${BROWSER}: Stop holds when the interrupted code then asks for input(): the question is not asked, the run is stopped`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeElement({ name: "stop-ask", controls: "", readonly: "" });
    await el.ready;
    const asked = [];
    // A listener that takes every question (preventDefault) and never answers.
    el.addEventListener("input", (e) => {
      asked.push(e.detail && e.detail.prompt);
      e.preventDefault();
    });
    const stop = el.shadowRoot.querySelector('[part~="stop-button"]');
    const running = el.run("try:\n    while True: pass\nexcept KeyboardInterrupt:\n    input('again? ')");
    const t0 = Date.now();
    while (stop.disabled && Date.now() - t0 < 10000) await new Promise((res) => setTimeout(res, 20));
    await new Promise((res) => setTimeout(res, 300));
    stop.click();
    const res = await Promise.race([running, new Promise((res) => setTimeout(() => res("still running after 8 s"), 8000))]);
    el.remove();
    return { res: typeof res === "string" ? res : { type: res.error && res.error.type, restarted: res.restarted }, asked };
  });
  assert.deepEqual(r.res, { type: "Stopped", restarted: true });
  assert.deepEqual(r.asked, []);
});

test(`${BROWSER}: a snapshot in a SharedArrayBuffer that another thread keeps changing is copied before it is checked: what is accepted is what was hashed`, async () => {
  const r = await page.evaluate(async () => {
    const { encodeSnapshot, decodeSnapshot, openDen, iframeRuntime, SnapshotError } = window.foxden;
    // One 8 MiB file behind a marker, so that hashing it takes a while.
    const data = new Uint8Array(8 << 20).fill(0x55);
    data.set(new TextEncoder().encode("FOXMARK"), 0);
    const snap = encodeSnapshot({ "/work/x.bin": data });
    const sab = new SharedArrayBuffer(snap.length);
    const shared = new Uint8Array(sab);
    shared.set(snap);
    let at = -1;
    for (let i = 0; i < snap.length - 7 && at < 0; i++) {
      if (snap[i] === 0x46 && new TextDecoder().decode(snap.subarray(i, i + 7)) === "FOXMARK") at = i;
    }
    const victim = at + 5000;
    // A worker flips one byte of the file's data, without pause, while the page checks it.
    // It stops when told through `stop`, and says so.
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const src = "onmessage = (e) => { const u = new Uint8Array(e.data.sab); postMessage('go'); while (Atomics.load(e.data.stop, 0) === 0) u[e.data.i] ^= 1; u[e.data.i] = 0x55; postMessage('stopped'); };";
    const worker = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
    await new Promise((res) => { worker.onmessage = res; worker.postMessage({ sab, i: victim, stop }); });
    const seen = { accepted: 0, refused: 0, wrong: 0, other: [] };
    const den = await openDen({ name: "sab", runtime: iframeRuntime() });
    for (let k = 0; k < 12; k++) {
      try {
        const out = k % 2 ? decodeSnapshot(shared)["/work/x.bin"] : (await den.restore(shared), await den.readFile("/work/x.bin"));
        seen.accepted++;
        if (out[5000] !== 0x55 || out.length !== data.length) seen.wrong++;
      } catch (e) {
        if (e instanceof SnapshotError) seen.refused++;
        else seen.other.push(e.name + ": " + e.message);
      }
    }
    await new Promise((res) => { worker.onmessage = res; Atomics.store(stop, 0, 1); });
    worker.terminate();
    const calm = decodeSnapshot(shared)["/work/x.bin"][5000];
    await den.close();
    return { at, seen, calm, isolated: window.crossOriginIsolated };
  });
  assert.equal(r.isolated, true);
  assert.ok(r.at > 0, "marker found");
  assert.deepEqual(r.seen.other, []);
  assert.equal(r.seen.accepted + r.seen.refused, 12);
  // A copy taken while the byte is as hashed is accepted (about half of them): none at all
  // would mean inputs in shared memory are refused outright.
  assert.ok(r.seen.accepted >= 1, JSON.stringify(r.seen));
  assert.equal(r.seen.wrong, 0, `accepted data that differs from what was hashed: ${JSON.stringify(r.seen)}`);
  assert.equal(r.calm, 0x55);
});

test(`${BROWSER}: runShell and encodeSnapshot refuse bytes past 4 GiB with DenError bad-data (not a RangeError from a copy of the length modulo 2^32) and go on working`, async () => {
  const r = await page.evaluate(async () => {
    const { runShell, encodeSnapshot, DenError } = window.foxden;
    const err = (f) => {
      try {
        f();
        return "accepted";
      } catch (e) {
        return e instanceof DenError ? `${e.code}: ${e.message}` : `${e.name}: ${e.message}`;
      }
    };
    let big = new Uint8Array(2 ** 32 + 8);
    const out = {
      shell: err(() => runShell("cat /drop/big", { "/drop/a": "a", "/drop/big": big })),
      encode: err(() => encodeSnapshot({ "/drop/big": big })),
    };
    big = null;
    out.after = runShell("cat /drop/a", { "/drop/a": "fine" }).stdout;
    return out;
  });
  assert.match(r.shell, /^bad-data: \/drop\/big: 4294967304 bytes do not fit in the page's memory/);
  assert.match(r.encode, /^bad-data: \/drop\/big: 4294967304 bytes do not fit/);
  assert.equal(r.after, "fine");
});
