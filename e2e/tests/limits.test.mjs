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
