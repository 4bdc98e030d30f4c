// The spine: element module -> den page -> worker -> Pyodide, in a real browser.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER } from "../lib.mjs";

let ctx, page, errors;

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
  const info = await openQuickDen(page, "notes");
  assert.equal(info.kind, "iframe");
  assert.equal(info.isolation, "iframe-sandbox");
  assert.ok(info.loadMs > 0 && info.loadMs < 60000, `loadMs ${info.loadMs}`);
});

after(async () => {
  await ctx?.close();
});

const run = (code, opts) =>
  page.evaluate((code, opts) => window.dens.notes.run(code, opts), code, opts || {});

test(`${BROWSER}: quickstart CSV sum gives "30.0"`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.notes;
    await den.writeFile("/drop/sales.csv", "region,amount\nnorth,10\nsouth,20\n");
    return den.run(
      `
import csv
rows = list(csv.DictReader(open("/drop/sales.csv")))
sum(float(row["amount"]) for row in rows)
`,
      { timeoutMs: 5000 },
    );
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "30.0");
});
