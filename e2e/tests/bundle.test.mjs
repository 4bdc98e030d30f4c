// foxden bundled into a page with esbuild and with Vite, as the product sheet's quickstart is
// meant to run ("in a bundled browser page"). esbuild does not copy the files a module names
// with new URL("…", import.meta.url), so the README says to copy foxden_wasm_bg.wasm (and, for
// <foxden-den controls>, editor.js) next to the bundle; without the wasm, the import fails with
// an error that says so. Vite and webpack 5 emit both themselves.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { build } from "esbuild";
import { build as viteBuild } from "vite";
import webpack from "webpack";
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { launch, BROWSER, BASE, waitForDeep, readLog } from "../lib.mjs";

const B = BROWSER;
const page = resolve(import.meta.dirname, "../pages/bundled");
const out = join(page, "dist");
const outApi = join(page, "dist-api");
const outVite = join(page, "dist-vite");
const outWebpack = join(page, "dist-webpack");
const dist = process.env.FOXDEN_DIST || resolve(import.meta.dirname, "../../dist");
let ctx;

before(async () => {
  ctx = await launch();
  // esbuild: the package's name resolves to this build (package.json's exports point at
  // dist/foxden.js, and "./api" at dist/api.js).
  const esbuild = async (entries, outdir, alias) => {
    rmSync(outdir, { recursive: true, force: true });
    await build({ entryPoints: entries.map((e) => join(page, e)), bundle: true, format: "esm", target: "es2022", minify: true, outdir, alias, logLevel: "error" });
  };
  await esbuild(["app.js", "element.js"], out, { "foxden-sandbox": join(dist, "foxden.js") });
  await esbuild(["api.js"], outApi, { "foxden-sandbox/api": join(dist, "api.js") });
  // Vite (Rolldown), as a user's project builds: the package's two entries resolve to this
  // build; nothing is copied by hand.
  rmSync(outVite, { recursive: true, force: true });
  await viteBuild({
    root: page,
    base: "/e2e/bundled/dist-vite/",
    configFile: false,
    logLevel: "error",
    resolve: {
      alias: [
        { find: /^foxden-sandbox\/api$/, replacement: join(dist, "api.js") },
        { find: /^foxden-sandbox$/, replacement: join(dist, "foxden.js") },
      ],
    },
    build: {
      outDir: outVite,
      emptyOutDir: true,
      target: "es2022",
      rollupOptions: { input: { api: join(page, "vite-api.html"), element: join(page, "vite-element.html") } },
    },
  });
  // webpack 5, production mode, the same two entry files (classic-script output: webpack runs
  // foxden's top-level await as an async module).
  const compiler = webpack({
    mode: "production",
    context: page,
    entry: { api: "./api.js", element: "./element.js" },
    output: { path: outWebpack, publicPath: "/e2e/bundled/dist-webpack/", filename: "[name].js", clean: true },
    resolve: { alias: { "foxden-sandbox/api$": join(dist, "api.js"), "foxden-sandbox$": join(dist, "foxden.js") } },
    target: "web",
    devtool: false,
    performance: { hints: false },
  });
  const stats = await new Promise((resolve, reject) => compiler.run((e, st) => (e ? reject(e) : resolve(st))));
  await new Promise((resolve) => compiler.close(resolve));
  assert.ok(!stats.hasErrors(), stats.toString("errors-only"));
});
after(async () => {
  await ctx?.close();
  rmSync(out, { recursive: true, force: true });
  rmSync(outApi, { recursive: true, force: true });
  rmSync(outVite, { recursive: true, force: true });
  rmSync(outWebpack, { recursive: true, force: true });
});

async function open(file = "index.html") {
  const p = await ctx.browser.newPage();
  const errs = [];
  p.on("pageerror", (e) => errs.push(String(e && e.message ? e.message : e)));
  await p.goto(`${BASE}/e2e/bundled/${file}`, { waitUntil: "load" });
  return { p, errs };
}

/** The element page: the editor (the controls' module, loaded on use) shows the code; Run prints. */
async function runsElement(p) {
  const content = await waitForDeep(p, "#d >>> .cm-content", 30000);
  assert.match(await content.evaluate((e) => e.textContent), /print\(6 \* 7\)/);
  const stdout = await p.evaluate(async () => {
    const el = document.querySelector("#d");
    await el.ready;
    return (await el.run()).stdout;
  });
  assert.equal(stdout, "42\n");
}

/** The foxden/api page (api.js): the quickstart's report, and no element defined. */
async function apiQuickstart(p, errs) {
  await p.waitForFunction(() => window.quickstart, { timeout: 90000 }).catch((e) => {
    throw new Error(`${e.message}; page errors: ${errs.join(" | ")}`);
  });
  const r = await p.evaluate(() => window.quickstart);
  assert.deepEqual(r, { result: "30.0", stdout: "north,10\n", direct: "2 /work/a\n", isolation: "iframe-sandbox", element: false });
}

test(`${B}: the glue's dynamic import is marked for webpack and Vite to leave alone`, () => {
  // A release build bundles the snippets into the glue; a dev build (--dev) keeps them beside.
  const snippets = join(dist, "snippets");
  const files = [join(dist, "foxden_wasm.js"), ...(existsSync(snippets) ? readdirSync(snippets, { recursive: true }).filter((f) => f.endsWith(".js")).map((f) => join(snippets, f)) : [])];
  const glue = files.map((f) => readFileSync(f, "utf8")).join("\n");
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
  await runsElement(p);
  assert.deepEqual(errs, []);
  await p.close();
});

test(`${B}: bundled foxden/api runs the quickstart from its own smaller wasm, defines no element and never fetches the element's module`, async () => {
  // The API module is the crate without its element: smaller than the element's, by the element.
  const [api, full] = ["foxden_api_bg.wasm", "foxden_wasm_bg.wasm"].map((f) => readFileSync(join(dist, f)).length);
  assert.ok(api < full * 0.9, `foxden_api_bg.wasm ${api} bytes vs foxden_wasm_bg.wasm ${full}`);
  copyFileSync(join(dist, "foxden_api_bg.wasm"), join(outApi, "foxden_api_bg.wasm"));
  const logged = readLog("server").length;
  const { p, errs } = await open("api.html");
  await apiQuickstart(p, errs);
  assert.deepEqual(errs, []);
  const requests = readLog("server").slice(logged);
  assert.match(requests, /GET \/e2e\/bundled\/dist-api\/foxden_api_bg\.wasm /);
  assert.doesNotMatch(requests, /foxden_wasm_bg\.wasm|editor\.js/);
  await p.close();
});

/**
 * The API page (the quickstart from foxden/api) and the element page (<foxden-den controls>) a
 * bundler built: each loads only its own wasm, as the bundler emitted it (`asset(name, ext)`:
 * the request's pattern), and the element its editor.
 */
async function checkBuilt(apiPage, elementPage, asset) {
  let logged = readLog("server").length;
  let { p, errs } = await open(apiPage);
  await apiQuickstart(p, errs);
  assert.deepEqual(errs, []);
  let requests = readLog("server").slice(logged);
  assert.match(requests, asset("foxden_api_bg", "wasm"));
  assert.doesNotMatch(requests, asset("foxden_wasm_bg", "wasm"));
  assert.doesNotMatch(requests, asset("editor", "js"));
  await p.close();

  logged = readLog("server").length;
  ({ p, errs } = await open(elementPage));
  await runsElement(p);
  assert.deepEqual(errs, []);
  requests = readLog("server").slice(logged);
  assert.match(requests, asset("foxden_wasm_bg", "wasm"));
  assert.match(requests, asset("editor", "js"));
  assert.doesNotMatch(requests, asset("foxden_api_bg", "wasm"));
  await p.close();
}

test(`${B}: built by Vite, foxden/api runs the quickstart from the wasm Vite emitted, and the element loads its emitted editor`, async () => {
  // Vite names what it emits from new URL("…", import.meta.url) <name>-<hash>.<ext> under assets/.
  await checkBuilt("dist-vite/vite-api.html", "dist-vite/vite-element.html", (name, ext) => new RegExp(`GET /e2e/bundled/dist-vite/assets/${name}-[\\w-]+\\.${ext} `));
});

test(`${B}: built by webpack 5, foxden/api runs the quickstart from the wasm webpack emitted, and the element loads its emitted editor`, async () => {
  // webpack names what it emits by content hash alone: each wasm is found by its bytes (copied
  // as they are); the editor is the one such script (webpack minifies it again).
  const emitted = readdirSync(outWebpack).filter((f) => /^[0-9a-f]+\.(wasm|js)$/.test(f));
  const copyOf = (file) => emitted.find((f) => readFileSync(join(outWebpack, f)).equals(readFileSync(join(dist, file))));
  const names = { foxden_api_bg: copyOf("foxden_api_bg.wasm"), foxden_wasm_bg: copyOf("foxden_wasm_bg.wasm"), editor: emitted.find((f) => f.endsWith(".js")) };
  assert.ok(names.foxden_api_bg && names.foxden_wasm_bg && names.editor, JSON.stringify(names));
  await checkBuilt("webpack-api.html", "webpack-element.html", (name) => new RegExp(`GET /e2e/bundled/dist-webpack/${names[name].replace(".", "\\.")} `));
});
