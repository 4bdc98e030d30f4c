// JavaScript runs (issue 14 §1): den.run(code, { lang: "javascript" }) runs in the den's worker,
// on the den's files (the `fs` global), with console streaming, a result, persistence between
// runs, and the same timeout, output cap, write limits and run.files as Python; the network
// probe set run from JavaScript reaches no server; the host page never runs the inline code.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, BASE } from "../lib.mjs";
import { EXTERNAL, assertNoNetworkFromJs } from "../probes.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser));
  await openQuickDen(page, "js");
});
after(async () => ctx?.close());

const js = (code, opts) => page.evaluate((code, opts) => window.dens.js.run(code, { lang: "javascript", ...opts }), code, opts || {});

test(`${BROWSER}: files round trip with the host, run.files reports, console streams, result`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.js;
    await den.writeFile("/drop/x.csv", "a,b\n1,2\n3,4\n");
    const chunks = [];
    const run = await den.run(
      `const text = await fs.readFile("/drop/x.csv", "utf-8");
      const rows = text.trim().split("\\n").slice(1).map((l) => l.split(",").map(Number));
      console.log("rows:", rows.length, rows);
      console.error("to stderr");
      await fs.writeFile("/out/sums.csv", rows.map((r) => r[0] + r[1]).join("\\n") + "\\n");
      await fs.writeFile("work-relative.bin", new Uint8Array([1, 2, 3]));
      await fs.remove("/drop/x.csv");
      ({ listed: await fs.list("/out"), exists: await fs.exists("/drop/x.csv"), n: rows.length })`,
      { lang: "javascript", onOutput: (c) => chunks.push(c) },
    );
    const sums = await den.readFile("/out/sums.csv", "utf-8");
    const bin = Array.from(await den.readFile("/work/work-relative.bin"));
    const py = await den.run("open('/out/sums.csv').read()");
    return { run, chunks, sums, bin, py: py.result, list: (await den.list()).map((f) => f.path) };
  });
  assert.equal(r.run.error, null, JSON.stringify(r.run.error));
  assert.equal(r.run.stdout, "rows: 2 [[1, 2], [3, 4]]\n");
  assert.equal(r.run.stderr, "to stderr\n");
  assert.deepEqual(r.chunks.map((c) => c.stream), ["stdout", "stderr"]);
  assert.equal(r.run.result, '{ listed: ["sums.csv"], exists: false, n: 2 }');
  assert.deepEqual(r.run.files, { created: ["/out/sums.csv", "/work/work-relative.bin"], changed: [], deleted: ["/drop/x.csv"] });
  assert.equal(r.sums, "3\n7\n");
  assert.deepEqual(r.bin, [1, 2, 3]);
  assert.equal(r.py, "'3\\n7\\n'", "Python sees the file JavaScript wrote");
  assert.deepEqual(r.list, ["/out/sums.csv", "/work/work-relative.bin"]);
});

test(`${BROWSER}: results are formatted; declarations persist between runs (also with top-level await); reset clears them`, async () => {
  assert.equal((await js("1 + 1")).result, "2");
  assert.equal((await js("'a' + 'b'")).result, '"ab"');
  assert.equal((await js("let unused = 1")).result, null, "a declaration has no value");
  assert.equal((await js("[1, 'x', null, undefined, 2n, { a: { b: { c: { d: 1 } } } }, new Map([[1, 2]])]")).result, '[1, "x", null, undefined, 2n, { a: { b: [Object] } }, Map(1) {1 => 2}]');
  assert.equal((await js("const o = { self: null }; o.self = o; o")).result, "{ self: [Circular] }");
  // let, const, class, var, function and globalThis: all persist.
  const decl = await js("let a = 1; const b = 2; var c = 3; class K { v() { return 4 } } function f() { return 5 } globalThis.g = 6; const { d, e: [ee] } = { d: 7, e: [8] }");
  assert.equal(decl.error, null, JSON.stringify(decl.error));
  assert.equal((await js("[a, b, c, new K().v(), f(), g, d, ee]")).result, "[1, 2, 3, 4, 5, 6, 7, 8]");
  // Declaring again in a later run is fine (like a console).
  assert.equal((await js("let a = 10; a")).result, "10");
  // With top-level await: the last expression is the result, declarations persist too.
  const aw = await js("const later = await new Promise((r) => setTimeout(() => r(41), 10));\nfunction h() { return later + 1 }\nlater + 1");
  assert.equal(aw.error, null, JSON.stringify(aw.error));
  assert.equal(aw.result, "42");
  assert.equal((await js("[later, h()]")).result, "[41, 42]");
  // `await (…)`, `await(…)` and `await […]` also parse as a call of a function named await
  // or an index of it: they are top-level awaits all the same.
  assert.equal((await js("const v5 = await (Promise.resolve(5)); v5")).result, "5");
  assert.equal((await js("let r3 = await(Promise.resolve(3)); r3")).result, "3");
  assert.equal((await js("const [p1, p2] = await [1, 2]; p1 + p2")).result, "3");
  // `let x;` starts x afresh in every run, as a console does (a rerun cell does not keep it).
  assert.equal((await js("var rows = [5, 9]")).error, null);
  const cell = "let best;\nfor (const r of rows) if (!best || r > best) best = r;\nbest";
  assert.equal((await js(cell)).result, "9");
  assert.equal((await js("rows = [1, 2]")).error, null);
  assert.equal((await js(cell)).result, "2");
  // A `let` that a line break ended stays ended (the next line is not its initializer's call).
  assert.equal((await js("let res\n(() => { globalThis.ranIt = 1 })();\n[res, ranIt]")).result, "[undefined, 1]");
  // A top-level return gives the result.
  assert.equal((await js("if (a > 5) return 'big'; return 'small'")).result, '"big"');
  // Python and JavaScript share the worker's globals, not their variables' namespaces.
  assert.equal((await page.evaluate(() => window.dens.js.run("x = 5"))).error, null);
  assert.match((await js("typeof x")).result, /"undefined"/);
  const reset = await page.evaluate(() => window.dens.js.reset());
  assert.ok(reset.from === "snapshot" || reset.from === "scratch");
  const gone = await js("typeof a + ' ' + typeof K + ' ' + typeof later");
  assert.equal(gone.result, '"undefined undefined undefined"');
});

test(`${BROWSER}: code the preparation once misread runs as JavaScript means it (regex after a bare declaration or continue, methods named catch, await in a template, a hashbang)`, async () => {
  const cases = [
    // A regex starting the line after `let hits` (no `;`): not a division, and the template
    // after it stays text.
    ["let hits\n/`/.test('a`b') && (hits = 1)\nconst help = `\nlet y = 1 declares y\n`\nhelp", '"\\nlet y = 1 declares y\\n"', "help", '"\\nlet y = 1 declares y\\n"'],
    ["let n = 0\nfor (const l of ['', 'a`']) {\n  if (!l) continue\n  /`/.test(l) && n++\n}\nconst note = `ok`\nn", "1", "note", '"ok"'],
    ["class Task {\n  catch(f) {\n    if (!f) { return this }\n    /`/.test(f)\n    return 1\n  }\n}\nconst tip = `a`\nnew Task().catch('x')", "1", "tip", '"a"'],
    ["const p = Promise.resolve(5)\nconst s = `${await (p)}`\ns", '"5"', "s", '"5"'],
    ["#!/usr/bin/env node\nconst x = await Promise.resolve(7)\nx", "7", "x", "7"],
    ["const both = [async () => 1, await (Promise.resolve(2))]\nboth[1]", "2", "both.length", "2"],
  ];
  for (const [code, result, later, kept] of cases) {
    const r = await js(code);
    assert.equal(r.error, null, `${code}: ${JSON.stringify(r.error)}`);
    assert.equal(r.result, result, code);
    const k = await js(later);
    assert.equal(k.result, kept, `${code} then ${later}: ${JSON.stringify(k.error)}`);
  }
});

test(`${BROWSER}: vars become globals before the code runs, and persist like its own`, async () => {
  const r = await js("rows.reduce((s, r) => s + r.amount, 0) + n", { vars: { rows: [{ amount: 10 }, { amount: 20 }], n: 12 } });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "42");
  assert.equal((await js("typeof rows + ' ' + n")).result, '"object 12"');
  // A global the worker has on its prototype (self.name) is shadowed, as a top-level var would.
  assert.equal((await js("name", { vars: { name: "Bob" } })).result, '"Bob"');
  // A read-only global of the worker cannot be set: the run says so and does not run.
  const stuck = await js("globalThis.ran = true", { vars: { Infinity: 1 } });
  assert.equal(stuck.error.type, "TypeError");
  assert.match(stuck.error.message, /Infinity is a read-only global/);
  assert.equal((await js("typeof ran")).result, '"undefined"');
});

test(`${BROWSER}: errors have Python's shape: syntax errors, thrown errors and values, fs errors`, async () => {
  const syntax = await js("let x = ;");
  assert.equal(syntax.error?.kind, "javascript");
  assert.equal(syntax.error.type, "SyntaxError");
  assert.equal(syntax.result, null);
  const thrown = await js("console.log('before');\nfunction inner() { throw new RangeError('too far') }\ninner()");
  assert.equal(thrown.stdout, "before\n");
  assert.equal(thrown.error?.kind, "javascript");
  assert.equal(thrown.error.type, "RangeError");
  assert.equal(thrown.error.message, "too far");
  assert.match(thrown.error.traceback, /^RangeError: too far\n {2}at inner \(line 2, column \d+\)/);
  const value = await js("throw { code: 7 }");
  assert.deepEqual([value.error?.type, value.error?.message], ["Uncaught", "{ code: 7 }"]);
  const asyncThrow = await js("await null;\n\nnull.x");
  assert.equal(asyncThrow.error?.type, "TypeError");
  assert.match(asyncThrow.error.traceback, /line 3/, asyncThrow.error.traceback);
  const missing = await js("await fs.readFile('/drop/nope.txt')");
  assert.equal(missing.error?.type, "FsError");
  assert.match(missing.error.message, /fs\.readFile: \/drop\/nope\.txt: no such file or folder/);
  const outside = await js("await fs.writeFile('/etc/passwd', 'x')");
  assert.match(outside.error?.message, /not a den path \(the den's files are under \/drop, \/out and \/work\)/);
  const bad = await js("await fs.writeFile('/work/x', 42)");
  assert.equal(bad.error?.type, "TypeError");
  // A top-level declaration of a read-only global of the worker is refused, not silently ignored.
  const stuck = await js("let NaN = 1; NaN");
  assert.equal(stuck.error?.type, "SyntaxError", JSON.stringify(stuck));
  assert.match(stuck.error.message, /^NaN is a read-only global of the den's worker/);
  // An inherited global is shadowed, as in a browser.
  assert.equal((await js("let name = 'x'; name")).result, '"x"');
  // Bad options are refused before the run.
  const refused = await page.evaluate(async () => {
    const err = (p) => p.then(() => null, (e) => ({ code: e.code, option: e.option, message: e.message }));
    return {
      lang: await err(window.dens.js.run("1", { lang: "ruby" })),
      stdin: await err(window.dens.js.run("1", { lang: "javascript", stdin: "x" })),
      onInput: await err(window.dens.js.run("1", { lang: "javascript", onInput: () => "x" })),
    };
  });
  assert.deepEqual([refused.lang?.code, refused.lang?.option], ["bad-option", "lang"]);
  assert.match(refused.lang.message, /lang must be "python" or "javascript"/);
  assert.deepEqual([refused.stdin?.code, refused.stdin?.option], ["bad-option", "stdin"]);
  assert.deepEqual([refused.onInput?.code, refused.onInput?.option], ["bad-option", "onInput"]);
  // A huge message is cut at the output cap; the run is not treated as a broken reply.
  const huge = await js("throw new Error('x'.repeat(5000000))", { maxOutputBytes: 1000 });
  assert.deepEqual([huge.error?.kind, huge.error?.message.length, huge.restarted], ["javascript", 1000, false]);
  // The den keeps working.
  assert.equal((await js("'ok'")).result, '"ok"');
});

test(`${BROWSER}: the timeout kills the run: files written before it survive, variables are gone`, async () => {
  await js("var keep = 1; await fs.writeFile('/work/before.txt', 'kept')");
  const r = await js("await fs.writeFile('/work/during.txt', 'x'); while (true) {}", { timeoutMs: 1500 });
  assert.equal(r.error?.kind, "timeout");
  assert.equal(r.restarted, true);
  const after = await js("[typeof keep, await fs.readFile('/work/before.txt', 'utf-8')]");
  assert.equal(after.result, '["undefined", "kept"]');
  // A promise that never settles times out too.
  const hang = await js("await new Promise(() => {})", { timeoutMs: 1000 });
  assert.equal(hang.error?.kind, "timeout");
});

test(`${BROWSER}: the output cap, the memory cap on WebAssembly memory and the write limits apply to JavaScript runs`, async () => {
  // maxMemoryBytes refuses to grow a WebAssembly memory past the cap, as for Python's heap
  // (JavaScript objects are bounded by the browser only: README, "JavaScript").
  const grow = await js("const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); m.grow(65535)");
  assert.equal(grow.error?.type, "RangeError", JSON.stringify(grow));
  assert.match(grow.error.message, /memory cap of \d+ bytes \(maxMemoryBytes\) reached/);
  assert.equal(grow.restarted, false);
  const capped = await js("for (let i = 0; i < 10000; i++) console.log('line ' + i)", { maxOutputBytes: 1000 });
  assert.equal(capped.truncated, true);
  assert.ok(capped.stdout.length <= 1000 && capped.stdout.startsWith("line 0\nline 1\n"), capped.stdout.length);
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const den = await openDen({ name: "js-limits", runtime: iframeRuntime(), maxFileBytes: 1000, maxFiles: 2, maxWritesPerMinute: 3 });
    const out = {};
    out.big = await den.run("await fs.writeFile('/work/big.bin', new Uint8Array(1001)); await fs.writeFile('/work/small.txt', 's')", { lang: "javascript" });
    out.afterBig = (await den.list()).map((f) => f.path);
    out.many = await den.run("for (const n of ['a', 'b', 'c']) await fs.writeFile('/work/' + n, n)", { lang: "javascript" });
    out.afterMany = (await den.list()).map((f) => f.path);
    out.ok = await den.run("await fs.writeFile('/work/a', 'a'); await fs.writeFile('/work/b', 'b')", { lang: "javascript" });
    out.rate = await den.run("await fs.writeFile('/work/a', 'A'); await fs.writeFile('/work/b', 'B')", { lang: "javascript" });
    out.view = (await den.run("(await fs.list('/work')).join()", { lang: "javascript" })).result;
    await den.close();
    return out;
  });
  assert.equal(r.big.error?.kind, "storage", JSON.stringify(r.big));
  assert.match(r.big.error.message, /maxFileBytes/);
  assert.deepEqual(r.afterBig, []);
  assert.equal(r.many.error?.kind, "storage");
  assert.match(r.many.error.message, /maxFiles/);
  assert.deepEqual(r.afterMany, []);
  assert.equal(r.ok.error, null);
  assert.equal(r.rate.error?.kind, "storage");
  assert.match(r.rate.error.message, /maxWritesPerMinute/);
  assert.equal(r.view, '"a,b"');
});

test(`${BROWSER}: the network probe set run from JavaScript reaches no server`, async () => {
  await assertNoNetworkFromJs({
    page,
    runInPage: (code, timeoutMs) => js(code, { timeoutMs }),
    targets: { same: BASE, ext: EXTERNAL },
    label: BROWSER,
  });
});

test(`${BROWSER}: JavaScript runs in the den, never in the host page`, async () => {
  const r = await page.evaluate(async () => {
    window.hostMark = "host";
    const run = await window.dens.js.run("[typeof window, typeof document, typeof hostMark, self.origin, typeof fs]", { lang: "javascript" });
    return { result: run.result, hostMark: window.hostMark, hostFs: typeof window.fs };
  });
  assert.equal(r.result, '["undefined", "undefined", "undefined", "null", "object"]');
  assert.equal(r.hostFs, "undefined");
});

test(`${BROWSER}: <script type="text/x-foxden-javascript"> in the element runs in the den (autorun), not in the host page`, async () => {
  const p = await ctx.browser.newPage();
  const errs = [];
  p.on("pageerror", (e) => errs.push(String(e && e.message ? e.message : e)));
  await p.goto(`${BASE}/e2e/element-javascript.html`, { waitUntil: "load" });
  await p.waitForFunction(() => window.inlineRun !== undefined, { timeout: 60000 });
  const r = await p.evaluate(async () => ({
    run: window.inlineRun,
    hostRanInline: globalThis.ranIn !== undefined,
    hostRanPlain: globalThis.plainScriptRanInHost === true,
    file: await document.querySelector("foxden-den").readText("/out/from-inline.txt"),
  }));
  assert.equal(r.run.error, null, JSON.stringify(r.run.error));
  assert.equal(r.run.stdout, "inline ran in den\n");
  assert.equal(r.run.result, '"den"');
  assert.deepEqual(r.run.files.created, ["/out/from-inline.txt"]);
  assert.equal(r.file, "inline den");
  assert.equal(r.hostRanInline, false, "the host page did not run the den's inline JavaScript");
  // The reason for the type: a text/javascript child is run by the host page's parser.
  assert.equal(r.hostRanPlain, true);
  assert.deepEqual(errs, []);
  await p.close();
});

test(`${BROWSER}: a promise rejected with nothing to handle it during a run is the run's error output, not silence`, async () => {
  const r = await js("async function main() { await null; throw new Error('boom in main') }\nmain();\nawait new Promise((res) => setTimeout(res, 50));\n'after'");
  assert.equal(r.result, '"after"');
  assert.match(r.stderr, /^Uncaught \(in promise\) Error: boom in main\n/m, JSON.stringify(r));
  const py = await page.evaluate(() => window.dens.js.run("import js, asyncio\nfrom pyodide.ffi import create_once_callable\nasync def late():\n    raise ValueError('late one')\njs.setTimeout(create_once_callable(late), 0)\nawait asyncio.sleep(0.1)\n'done'"));
  assert.equal(py.result, "'done'");
  assert.match(py.stderr, /Uncaught \(in promise\) .*ValueError: late one/s, JSON.stringify(py));
  // One that gets its handler later in the run (awaited in a loop after a pause) is no error.
  const later = await js("const ps = [Promise.reject(new Error('handled later'))];\nawait new Promise((res) => setTimeout(res, 30));\nlet caught = 0;\nfor (const p of ps) { try { await p } catch { caught++ } }\ncaught");
  assert.equal(later.result, "1");
  assert.equal(later.stderr, "", JSON.stringify(later));
});
