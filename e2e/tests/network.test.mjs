// No network, really: every probe run from inside the sandbox must fail AND leave no trace in
// the static server's log (same-origin URLs) or the logging proxy's log (everything else).
// The same URLs fetched by the host page itself are the positive control: they must show up.
import { test, before, after } from "node:test";
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
