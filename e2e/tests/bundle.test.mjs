// foxden bundled into a page with esbuild, as the product sheet's quickstart is meant to run
// ("in a bundled browser page"). esbuild does not copy the files a module names with
// new URL("…", import.meta.url), so the README says to copy foxden_wasm_bg.wasm (and, for
// <foxden-den controls>, editor.js) next to the bundle; without the wasm, the import fails with
// an error that says so. (webpack 5 and Vite emit both files themselves: checked by hand.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { build } from "esbuild";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { launch, BROWSER, BASE, waitForDeep } from "../lib.mjs";

const B = BROWSER;
const page = resolve(import.meta.dirname, "../pages/bundled");
const out = join(page, "dist");
const dist = process.env.FOXDEN_DIST || resolve(import.meta.dirname, "../../dist");
let ctx;

before(async () => {
  ctx = await launch();
  rmSync(out, { recursive: true, force: true });
  await build({
    entryPoints: [join(page, "app.js"), join(page, "element.js")],
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    outdir: out,
    // The package's name resolves to this build (package.json's exports point at dist/foxden.js).
    alias: { "foxden-sandbox": join(dist, "foxden.js") },
    logLevel: "error",
  });
});
after(async () => {
  await ctx?.close();
  rmSync(out, { recursive: true, force: true });
});

async function open(file = "index.html") {
  const p = await ctx.browser.newPage();
  const errs = [];
  p.on("pageerror", (e) => errs.push(String(e && e.message ? e.message : e)));
  await p.goto(`${BASE}/e2e/bundled/${file}`, { waitUntil: "load" });
  return { p, errs };
}

test(`${B}: the glue's dynamic import is marked for webpack and Vite to leave alone`, () => {
  const glue = readFileSync(join(dist, "foxden_wasm.js"), "utf8");
  assert.equal(glue.match(/import\(/g).length, 1);
  assert.match(glue, /import\(\/\* webpackIgnore: true \*\/ \/\* @vite-ignore \*\/ /);
});

test(`${B}: bundled without its wasm, the import fails saying what to copy`, async () => {
  const { p, errs } = await open();
  const deadline = Date.now() + 15000;
  while (!errs.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.equal(errs.length, 1, errs.join("\n"));
  assert.match(errs[0], /foxden: its WebAssembly module did not load from .*\/e2e\/bundled\/dist\/foxden_wasm_bg\.wasm/);
  assert.match(errs[0], /copy node_modules\/foxden-sandbox\/dist\/foxden_wasm_bg\.wasm next to the bundle/);
  await p.close();
});

test(`${B}: bundled with its wasm copied beside, the product sheet's quickstart runs`, async () => {
  copyFileSync(join(dist, "foxden_wasm_bg.wasm"), join(out, "foxden_wasm_bg.wasm"));
  const { p, errs } = await open();
  await p.waitForFunction(() => window.quickstart, { timeout: 90000 });
  const r = await p.evaluate(() => window.quickstart);
  assert.deepEqual(r, { result: "30.0", stdout: "north,10\n", isolation: "iframe-sandbox" });
  assert.deepEqual(errs, []);
  await p.close();
});

test(`${B}: bundled <foxden-den controls> loads its editor from beside the bundle and runs`, async () => {
  copyFileSync(join(dist, "foxden_wasm_bg.wasm"), join(out, "foxden_wasm_bg.wasm"));
  copyFileSync(join(dist, "editor.js"), join(out, "editor.js"));
  const { p, errs } = await open("element.html");
  const content = await waitForDeep(p, "#d >>> .cm-content", 30000);
  assert.match(await content.evaluate((e) => e.textContent), /print\(6 \* 7\)/);
  const stdout = await p.evaluate(async () => {
    const el = document.querySelector("#d");
    await el.ready;
    return (await el.run()).stdout;
  });
  assert.equal(stdout, "42\n");
  assert.deepEqual(errs, []);
  await p.close();
});
