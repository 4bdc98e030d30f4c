// No network, really: every probe run from inside the sandbox must fail AND leave no trace in
// the static server's log (same-origin URLs) or the logging proxy's log (everything else).
// The same URLs fetched by the host page itself are the positive control: they must show up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { launch, openPage, openQuickDen, BROWSER, BASE } from "../lib.mjs";
import { assertNoNetwork, EXTERNAL } from "../probes.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser));
  await openQuickDen(page, "probe");
});
after(async () => ctx?.close());

test(`${BROWSER}: every network probe from the sandbox fails and reaches no server`, async () => {
  await assertNoNetwork({
    page,
    runInPage: (code, timeoutMs) => page.evaluate((code, timeoutMs) => window.dens.probe.run(code, { timeoutMs }), code, timeoutMs),
    targets: { same: BASE, ext: EXTERNAL },
    minProbes: 30,
    label: BROWSER,
  });
});

// The same probes from a den with packages installed (issue 12): the host fetched the wheels, the
// sandbox installed them from bytes, and still nothing in it reaches a server.
test(`${BROWSER}: with packages installed, every probe still fails and reaches no server`, async () => {
  const manifest = JSON.parse(readFileSync(join(process.env.FOXDEN_WHEELS, "manifest.json"), "utf8"));
  const packages = manifest.map((w) => ({ url: `/wheels/${w.file}`, sha256: w.sha256 }));
  const imported = await page.evaluate(async (packages) => {
    const { openDen, iframeRuntime, memoryStore } = window.foxden;
    window.dens.probePk = await openDen({ name: "probe-pk", store: memoryStore(), packages, runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/" }) });
    // Importing sympy compiles a lot of Python: a generous timeout on a busy machine.
    const r = await window.dens.probePk.run("import tabulate, sympy, mpmath, dateutil, six, bs4, soupsieve, yaml\n'ok'", { timeoutMs: 180000 });
    return r.result || JSON.stringify(r.error);
  }, packages);
  assert.equal(imported, "'ok'");
  await assertNoNetwork({
    page,
    runInPage: (code, timeoutMs) => page.evaluate((code, timeoutMs) => window.dens.probePk.run(code, { timeoutMs }), code, timeoutMs),
    targets: { same: BASE, ext: EXTERNAL },
    minProbes: 30,
    label: `${BROWSER} (with packages)`,
  });
});
