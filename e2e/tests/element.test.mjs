// The <foxden-den> element (issue 5), in real Chromium and Firefox ESR.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { launch, openPage, BROWSER, BASE, sleep, logNewErrors, waitForDeep } from "../lib.mjs";

const B = BROWSER;
let ctx, page, errors;

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser, "/e2e/element-lab.html"));
});

// Names the test after which each page error appeared.
afterEach(logNewErrors(() => errors));

after(async () => {
  await ctx?.close();
});

/** Opens a page that only waits for its own load (the pages below import foxden.js themselves). */
async function plainPage(path) {
  const p = await ctx.browser.newPage();
  const errs = [];
  p.on("pageerror", (e) => errs.push(String(e && e.message ? e.message : e)));
  await p.goto(BASE + path, { waitUntil: "load" });
  return { p, errs };
}

test(`${B}: a page with only the tag and a module script opens the den`, async () => {
  const { p, errs } = await plainPage("/e2e/element-basic.html");
  const r = await p.evaluate(async () => {
    await customElements.whenDefined("foxden-den");
    const el = document.querySelector("foxden-den");
    const info = await el.ready;
    const run = await el.run("import sys\nprint('hi')\nsys.version_info[:2]");
    // Importing a second copy of the module does not define the tag twice.
    const again = await import("/foxden.js?copy=2");
    const iframe = document.querySelector("iframe[data-foxden-den]");
    return {
      info,
      sameInfo: JSON.stringify(el.info) === JSON.stringify(info),
      stdout: run.stdout,
      result: run.result,
      defined: customElements.get("foxden-den") !== undefined,
      secondCopyIsStandalone: typeof again.openDen === "function",
      ctorName: el.constructor.name,
      props: { name: el.name, store: el.store, timeout: el.timeout, isolation: el.isolation, denUrl: el.denUrl, pyodideUrl: el.pyodideUrl },
      iframeHidden: iframe ? getComputedStyle(iframe).visibility : null,
    };
  });
  assert.equal(r.info.kind, "iframe");
  assert.equal(r.info.isolation, "iframe-sandbox");
  assert.ok(r.sameInfo);
  assert.equal(r.stdout, "hi\n");
  assert.equal(r.result, "(3, 14)");
  assert.ok(r.defined && r.secondCopyIsStandalone);
  assert.equal(r.ctorName, "FoxdenDenElement");
  assert.deepEqual(r.props, {
    name: "basic",
    store: "memory",
    timeout: 30000,
    isolation: "auto",
    denUrl: `${BASE}/den/den.html`,
    pyodideUrl: `${BASE}/pyodide/`,
  });
  assert.equal(r.iframeHidden, "hidden");
  assert.deepEqual(errs, []);
  await p.close();
});

/** Creates an element in the lab page and waits for it to be ready. */
const create = (name, attrs = {}, parent = "#a") =>
  page.evaluate(
    async (name, attrs, parent) => {
      const el = document.createElement("foxden-den");
      el.setAttribute("name", name);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      document.querySelector(parent).append(el);
      return el.ready;
    },
    name,
    attrs,
    parent,
  );

test(`${B}: a run gives run(start), output chunks, file-change, run(end) in order, then resolves`, async () => {
  await create("events");
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="events"]');
    // Inside another element's shadow root: the events must bubble out of it (composed).
    const wrapper = document.createElement("div");
    document.body.append(wrapper);
    const shadow = wrapper.attachShadow({ mode: "open" });
    shadow.append(el);
    const seen = [];
    const kinds = ["run", "output", "file-change", "ready", "progress", "error"];
    const record = (e) =>
      seen.push({
        type: e.type,
        custom: e instanceof CustomEvent,
        bubbles: e.bubbles,
        composed: e.composed,
        target: e.target === wrapper ? "wrapper" : e.target.tagName,
        detail: JSON.parse(JSON.stringify(e.detail)),
      });
    for (const k of kinds) document.addEventListener(k, record);
    const code = "import sys\nprint('a')\nprint('b', file=sys.stderr)\nopen('/out/e.txt', 'w').write('x')\n6 * 7";
    const res = await el.run(code);
    const atResolve = seen.length;
    await el.writeFile("/drop/w.txt", "w");
    await el.deleteFile("/drop/w.txt");
    const snap = await el.snapshot();
    await el.writeFile("/drop/later.txt", "later");
    await el.restore(snap);
    for (const k of kinds) document.removeEventListener(k, record);
    document.querySelector("#a").append(el);
    wrapper.remove();
    return { seen, atResolve, res, code };
  });
  const runEvents = r.seen.slice(0, r.atResolve);
  assert.deepEqual(
    runEvents.map((e) => e.type),
    ["run", "output", "output", "file-change", "run"],
  );
  for (const e of r.seen) {
    assert.ok(e.custom && e.bubbles && e.composed, `${e.type} is a bubbling, composed CustomEvent`);
    assert.equal(e.target, "wrapper", "retargeted to the shadow host outside");
  }
  const [start, out1, out2, fc, end] = runEvents.map((e) => e.detail);
  assert.deepEqual(start, { id: start.id, phase: "start", code: r.code });
  assert.ok(start.id >= 1);
  assert.deepEqual(out1, { runId: start.id, stream: "stdout", text: "a\n" });
  assert.deepEqual(out2, { runId: start.id, stream: "stderr", text: "b\n" });
  assert.deepEqual(fc, { source: "run", created: ["/out/e.txt"], changed: [], deleted: [] });
  assert.equal(end.id, start.id);
  assert.equal(end.phase, "end");
  assert.equal(end.code, r.code);
  assert.deepEqual(end.result, r.res);
  assert.equal(r.res.result, "42");
  assert.equal(r.res.stdout, "a\n");
  assert.equal(r.res.stderr, "b\n");
  const later = r.seen.slice(r.atResolve).map((e) => [e.type, e.detail.source, e.detail.created, e.detail.deleted]);
  assert.deepEqual(later, [
    ["file-change", "write", ["/drop/w.txt"], []],
    ["file-change", "delete", [], ["/drop/w.txt"]],
    ["file-change", "write", ["/drop/later.txt"], []],
    ["file-change", "restore", [], ["/drop/later.txt"]],
  ]);
});

test(`${B}: output events arrive while a slow print loop is still running`, async () => {
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="events"]');
    const chunks = [];
    const onOut = (e) => chunks.push({ text: e.detail.text, at: performance.now() });
    el.addEventListener("output", onOut);
    const t0 = performance.now();
    const res = await el.run("import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(0.25)");
    const end = performance.now();
    el.removeEventListener("output", onOut);
    return { chunks, t0, end, stdout: res.stdout };
  });
  assert.equal(r.chunks.map((c) => c.text).join(""), "0\n1\n2\n3\n");
  assert.equal(r.stdout, "0\n1\n2\n3\n");
  assert.ok(r.chunks.length >= 4, `chunks: ${r.chunks.length}`);
  // The first chunk came while Python was still sleeping through the other three.
  assert.ok(r.end - r.chunks[0].at > 500, `first chunk ${r.end - r.chunks[0].at} ms before the end`);
  assert.ok(r.chunks[3].at - r.chunks[0].at > 500, "chunks spread over the loop");
});

test(`${B}: methods resolve and reject like the library API`, async () => {
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="events"]');
    const { PathError, DenError } = window.foxden;
    const catchIt = async (p) => {
      try {
        await p;
        return null;
      } catch (e) {
        return { name: e.name, code: e.code ?? null, rule: e.rule ?? null, isPath: e instanceof PathError, isDen: e instanceof DenError };
      }
    };
    await el.writeFile("/drop/t.csv", "a,b\n1,2\n");
    return {
      text: await el.readText("/drop/t.csv"),
      bytes: Array.from(await el.readFile("/drop/t.csv")).length,
      list: (await el.list()).map((f) => f.path),
      sh: await el.sh("echo hi"),
      badPath: await catchIt(el.writeFile("/drop/../x", "y")),
      missing: await catchIt(el.readFile("/drop/none.txt")),
      // The element's timeout attribute is the default; a run's own timeoutMs wins.
      // (A timeout itself is the library's, tested by the spine suite.)
      timeoutDefault: await el.run("import time\ntime.sleep(0.01)\n'slept'", { timeoutMs: 5000 }).then((x) => x.result),
      afterTimeout: (await el.run("1 + 1")).result,
      reset: await el.run("keep = 1").then(() => el.reset()).then(() => el.run("keep")).then((x) => x.error.type),
      fork: await el.fork({ name: "events-fork" }).then(async (d) => {
        const t = await d.readText("/drop/t.csv");
        await d.close();
        return t;
      }),
    };
  });
  assert.equal(r.text, "a,b\n1,2\n");
  assert.equal(r.bytes, 8);
  assert.ok(r.list.includes("/drop/t.csv") && r.list.includes("/out/e.txt"));
  assert.equal(typeof r.sh.code, "number");
  assert.deepEqual(r.badPath, { name: "PathError", code: null, rule: "dotdot", isPath: true, isDen: false });
  assert.deepEqual(r.missing, { name: "DenError", code: "not-found", rule: null, isPath: false, isDen: true });
  assert.equal(r.timeoutDefault, "'slept'");
  assert.equal(r.afterTimeout, "2");
  assert.equal(r.reset, "NameError");
  assert.equal(r.fork, "a,b\n1,2\n");
});

test(`${B}: a run's signal and stop() on the element: aborted in a run listener, or while waiting for the den, the run does not go on`, async () => {
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="events"]');
    const out = {};
    // Aborted by a listener of its own start event: stopped as soon as it is posted (it never
    // sleeps to the end), and the element's list(path) sees the den's files.
    const c = new AbortController();
    el.addEventListener("run", (e) => e.detail.phase === "start" && c.abort(), { once: true });
    const a = await el.run("import time\ntime.sleep(3)\nopen('/out/slept.txt', 'w').write('z')\n'slept'", { signal: c.signal });
    out.listener = { type: a.error && a.error.type, result: a.result, restarted: a.restarted, early: /stopped before it started/.test(a.error && a.error.message) };
    out.slept = (await el.list("/out")).map((f) => f.path).includes("/out/slept.txt");
    // stop() called from the start listener does the same.
    el.addEventListener("run", (e) => e.detail.phase === "start" && el.stop().then((v) => (out.stopInListener = v)), { once: true });
    const b = await el.run("import time\ntime.sleep(3)\n'slept'");
    out.stopped = b.error && b.error.type;
    // Aborted while an earlier run holds the den: rejected at once, never run.
    const order = [];
    const first = el.run("import time\ntime.sleep(1)\n'first'").then((x) => (order.push("first"), x.result));
    const w = new AbortController();
    const second = el.run("never = 1", { signal: w.signal }).then(() => "ran", (e) => e.name).then((x) => (order.push("second"), x));
    setTimeout(() => w.abort(), 50);
    out.second = await second;
    out.first = await first;
    out.order = order;
    out.never = (await el.run("'never' in globals()")).result;
    return out;
  });
  assert.deepEqual(r, {
    listener: { type: "Stopped", result: null, restarted: false, early: true },
    slept: false,
    stopInListener: true,
    stopped: "Stopped",
    second: "AbortError",
    first: "'first'",
    order: ["second", "first"],
    never: "False",
  });
});

test(`${B}: the run event's start is cancelable: preventDefault() keeps the code from running, and keeps the variables`, async () => {
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="events"]');
    await el.run("kept_before_cancel = 7");
    const seen = [];
    const veto = (e) => {
      seen.push({ phase: e.detail.phase, cancelable: e.cancelable });
      if (e.detail.phase === "start" && /forbidden/.test(e.detail.code)) e.preventDefault();
    };
    el.addEventListener("run", veto);
    const t0 = performance.now();
    const res = await el.run("import time\nopen('/out/forbidden.txt', 'w').write('x')\ntime.sleep(3)\nkept_before_cancel = 0");
    const ms = performance.now() - t0;
    const after = await el.run("kept_before_cancel");
    el.removeEventListener("run", veto);
    return {
      seen,
      ms,
      type: res.error && res.error.type,
      kind: res.error && res.error.kind,
      early: /stopped before it started/.test(res.error && res.error.message),
      restarted: res.restarted,
      files: res.files,
      wrote: (await el.list("/out")).some((f) => f.path === "/out/forbidden.txt"),
      after: after.result,
    };
  });
  assert.deepEqual(r.seen, [
    { phase: "start", cancelable: true },
    { phase: "end", cancelable: false },
    { phase: "start", cancelable: true },
    { phase: "end", cancelable: false },
  ]);
  assert.equal(r.type, "Stopped");
  assert.equal(r.kind, "crashed");
  assert.ok(r.early, "the run says it was stopped before it started");
  assert.equal(r.restarted, false);
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.equal(r.wrote, false);
  assert.ok(r.ms < 2500, `it did not wait for the code: ${r.ms} ms`);
  assert.equal(r.after, "7", "the variables are kept");
});

test(`${B}: a bad attribute raises an error event naming it; fixing it makes the element usable`, async () => {
  const r = await page.evaluate(async () => {
    const errorsSeen = [];
    const el = document.createElement("foxden-den");
    el.addEventListener("error", (e) => {
      const x = e.detail.error;
      errorsSeen.push({ attribute: e.detail.attribute, name: x.name, code: x.code, option: x.option, isDen: x instanceof window.foxden.DenError, message: x.message });
    });
    el.setAttribute("name", "checked");
    el.setAttribute("timeout", "soon");
    document.querySelector("#a").append(el);
    const first = await el.ready.then(() => "resolved", (e) => `${e.name}:${e.option}`);
    el.timeout = 5000; // the property reflects to the attribute
    const info = await el.ready;
    const attrAfterFix = el.getAttribute("timeout");
    // On a live den, a bad value is reported and the den keeps running on its last good values.
    await el.run("v = 7");
    el.setAttribute("max-den-bytes", "-1");
    el.setAttribute("store", "disk");
    await new Promise((r) => setTimeout(r, 50));
    const stillRuns = (await el.run("v")).result;
    el.removeAttribute("store");
    el.setAttribute("max-den-bytes", "1000000");
    await new Promise((r) => setTimeout(r, 0));
    await el.ready;
    const afterRestart = (await el.run("1")).result;
    const badName = document.createElement("foxden-den");
    badName.addEventListener("error", (e) => errorsSeen.push({ attribute: e.detail.attribute, name: e.detail.error.name, option: e.detail.error.option }));
    badName.name = "no spaces allowed";
    document.querySelector("#a").append(badName);
    await badName.ready.catch(() => {});
    badName.remove();
    el.remove();
    return JSON.stringify({ errorsSeen, first, info, attrAfterFix, stillRuns, afterRestart });
  }).then(JSON.parse);
  assert.equal(r.first, "DenError:timeout");
  assert.equal(r.info.isolation, "iframe-sandbox");
  assert.equal(r.attrAfterFix, "5000");
  assert.equal(r.stillRuns, "7");
  assert.equal(r.afterRestart, "1");
  const named = r.errorsSeen.map((e) => e.attribute);
  assert.deepEqual(named, ["timeout", "store", "max-den-bytes", "name"]);
  const t = r.errorsSeen[0];
  assert.equal(t.name, "DenError");
  assert.equal(t.code, "bad-option");
  assert.equal(t.option, "timeout");
  assert.ok(t.isDen);
  assert.match(t.message, /timeout/);
  assert.equal(r.errorsSeen[3].option, "name");
});

test(`${B}: moving the element keeps its den and Python variables`, async () => {
  await create("mover");
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="mover"]');
    let readyEvents = 0;
    el.addEventListener("ready", () => readyEvents++);
    const loadMs = el.info.loadMs;
    await el.run("secret = 'kept'");
    const before = window.foxden.liveCounts().connections;
    document.querySelector("#b").append(el); // disconnect + connect in one task
    await new Promise((r) => setTimeout(r, 50));
    document.querySelector("#a").prepend(el);
    const res = await el.run("secret");
    return { result: res.result, readyEvents, sameLoad: el.info.loadMs === loadMs, before, after: window.foxden.liveCounts().connections, parent: el.parentElement.id };
  });
  assert.equal(r.result, "'kept'");
  assert.equal(r.readyEvents, 0);
  assert.ok(r.sameLoad);
  assert.equal(r.after, r.before);
  assert.equal(r.parent, "a");
});

test(`${B}: removing the element closes its den and frees the name`, async () => {
  const r = await page.evaluate(async () => {
    const el = document.querySelector('foxden-den[name="mover"]');
    const before = window.foxden.liveCounts().connections;
    el.remove();
    await new Promise((r) => setTimeout(r, 0));
    const after = window.foxden.liveCounts().connections;
    const err = await el.run("1").then(() => null, (e) => `${e.name}:${e.code}`);
    const { openDen } = window.foxden;
    const den = await openDen({ name: "mover" }); // would be DenError name-in-use if still held
    await den.close();
    return { before, after, err };
  });
  assert.equal(r.after, r.before - 1);
  assert.equal(r.err, "DenError:closed");
});

test(`${B}: close() from a run listener: the run is not started; it ends at once as closed`, async () => {
  const r = await page.evaluate(async () => {
    const el = document.createElement("foxden-den");
    el.setAttribute("name", "close-in-listener");
    document.body.append(el);
    await el.ready;
    const phases = [];
    el.addEventListener("run", (e) => {
      phases.push(e.detail.phase);
      if (e.detail.phase === "start") el.close();
    });
    const t0 = performance.now();
    const res = await el.run("open('/work/ran.txt', 'w').write('x')").then((x) => x, (e) => ({ rejected: `${e.name}:${e.code}` }));
    const runMs = performance.now() - t0;
    el.remove();
    const { openDen } = window.foxden;
    const den = await openDen({ name: "close-in-listener" }); // the name is free
    const files = (await den.list()).map((f) => f.path);
    await den.close();
    return { runMs, phases, kind: res.error && res.error.kind, type: res.error && res.error.type, created: res.files ? res.files.created : null, rejected: res.rejected ?? null, files };
  });
  // A closed element sends no more events: the run's end is its promise.
  assert.deepEqual(r.phases, ["start"]);
  assert.ok(r.runMs < 2000, `the run ended ${r.runMs} ms after close()`);
  assert.equal(r.rejected, null);
  assert.deepEqual([r.kind, r.type], ["crashed", "DenClosed"]);
  assert.deepEqual(r.created, []);
  assert.ok(!r.files.includes("/work/ran.txt"), JSON.stringify(r.files));
});

test(`${B}: an IndexedDB element whose opening is cancelled by a new attribute reopens (its Web Lock is waited for, not "locked")`, async () => {
  const r = await page.evaluate(async () => {
    const out = [];
    for (const wait of [0, 5, 20, 60, 150]) {
      const el = document.createElement("foxden-den");
      el.setAttribute("name", `cancel-open-${wait}`);
      el.setAttribute("store", "idb:foxden-e2e-cancel");
      const errors = [];
      el.addEventListener("error", (e) => errors.push(`${e.detail.error.name}:${e.detail.error.code}`));
      document.body.append(el);
      await new Promise((r) => setTimeout(r, wait));
      el.setAttribute("load-timeout", "60000"); // reopens: the opening under way is dropped
      await new Promise((r) => setTimeout(r, 0));
      const ready = await el.ready.then(() => "ready", (e) => `${e.name}:${e.code}`);
      const ran = ready === "ready" ? (await el.run("1 + 1")).result : null;
      el.remove();
      out.push({ wait, ready, ran, errors });
    }
    return out;
  });
  for (const x of r) {
    assert.equal(x.ready, "ready", JSON.stringify(x));
    assert.equal(x.ran, "2", JSON.stringify(x));
    assert.deepEqual(x.errors, [], JSON.stringify(x));
  }
});

test(`${B}: two live elements with one name: the second gets an error event`, async () => {
  await create("twin");
  const r = await page.evaluate(async () => {
    const second = document.createElement("foxden-den");
    second.name = "twin";
    const got = new Promise((res) => second.addEventListener("error", (e) => res({ name: e.detail.error.name, code: e.detail.error.code })));
    document.querySelector("#b").append(second);
    const err = await got;
    const ready = await second.ready.then(() => "ok", (e) => e.code);
    const first = document.querySelector('#a foxden-den[name="twin"]');
    const firstStillWorks = (await first.run("'one'")).result;
    second.remove();
    first.remove();
    return { err, ready, firstStillWorks };
  });
  assert.deepEqual(r.err, { name: "DenError", code: "name-in-use" });
  assert.equal(r.ready, "name-in-use");
  assert.equal(r.firstStillWorks, "'one'");
});

test(`${B}: the controls UI works with the keyboard alone`, async () => {
  const { p, errs } = await plainPage("/e2e/element-controls.html");
  await p.evaluate(async () => {
    await customElements.whenDefined("foxden-den");
    await document.querySelector("foxden-den").ready;
  });
  // The file input is keyboard-reachable; the file goes in through it.
  const input = await waitForDeep(p, "foxden-den >>> input[type=file]");
  const csv = fileURLToPath(new URL("../pages/element-sales.csv", import.meta.url));
  await input.uploadFile(csv);
  await p.waitForFunction(async () => (await document.querySelector("foxden-den").list()).some((f) => f.path === "/drop/element-sales.csv"));
  await p.evaluate(async () => {
    const el = document.querySelector("foxden-den");
    await el.writeFile("/drop/sales.csv", await el.readFile("/drop/element-sales.csv"));
  });
  // Tab from the link before the element: the Run button is the first stop inside it.
  await p.focus("#before");
  const stops = [];
  for (let i = 0; i < 6; i++) {
    await p.keyboard.press("Tab");
    stops.push(
      await p.evaluate(() => {
        const a = document.activeElement;
        const inner = a && a.shadowRoot ? a.shadowRoot.activeElement : null;
        return inner ? `${inner.tagName.toLowerCase()}:${inner.getAttribute("part")}` : a ? a.tagName.toLowerCase() : "none";
      }),
    );
    if (stops.at(-1) === "button:run-button") break;
  }
  assert.equal(stops.at(-1), "button:run-button", `focus went ${stops.join(" > ")}`);
  const runEnd = p.evaluate(
    () => new Promise((res) => document.querySelector("foxden-den").addEventListener("run", (e) => e.detail.phase === "end" && res(e.detail.result), { once: false })),
  );
  await p.keyboard.press("Enter");
  const res = await runEnd;
  assert.equal(res.error, null, JSON.stringify(res.error));
  assert.equal(res.stdout, "total 30.0\n");
  const ui = await p.evaluate(async () => {
    await new Promise((r) => setTimeout(r, 50));
    const root = document.querySelector("foxden-den").shadowRoot;
    const q = (part) => root.querySelector(`[part~="${part}"]`);
    const links = [...root.querySelectorAll('[part~="file-link"]')].map((a) => ({ text: a.textContent, href: a.href.slice(0, 5), download: a.download }));
    const link = [...root.querySelectorAll('[part~="file-link"]')].find((a) => a.textContent === "/out/total.txt");
    const fetched = link ? await (await fetch(link.href)).text() : null;
    return {
      output: q("output").textContent,
      status: q("status").textContent,
      progressHidden: q("progress").hidden,
      runDisabled: q("run-button").disabled,
      links,
      fetched,
      accent: getComputedStyle(q("run-button")).backgroundColor,
      outputRole: q("output").getAttribute("role"),
    };
  });
  assert.equal(ui.output, "total 30.0\n");
  assert.match(ui.status, /^Done in \d+ ms$/);
  assert.equal(ui.progressHidden, true);
  assert.equal(ui.runDisabled, false);
  assert.equal(ui.fetched, "30.0");
  assert.ok(ui.links.some((l) => l.text === "/out/total.txt" && l.href === "blob:" && l.download === "total.txt"), JSON.stringify(ui.links));
  assert.equal(ui.accent, "rgb(138, 43, 226)", "custom property --foxden-accent styles the button");
  assert.equal(ui.outputRole, "log");
  // Space on the focused button runs again.
  const again = p.evaluate(() => new Promise((res) => document.querySelector("foxden-den").addEventListener("run", (e) => e.detail.phase === "end" && res(e.detail.result.stdout))));
  await p.keyboard.press(" ");
  assert.equal(await again, "total 30.0\n");
  assert.deepEqual(errs, []);
  await p.close();
});

test(`${B}: the file list: names cannot pass for others, a change re-copies only its file, close() lets every blob go`, async () => {
  const { p, errs } = await plainPage("/e2e/element-controls.html");
  const r = await p.evaluate(async () => {
    await customElements.whenDefined("foxden-den");
    const el = document.querySelector("foxden-den");
    await el.ready;
    const root = el.shadowRoot;
    const links = () => Object.fromEntries([...root.querySelectorAll('[part~="file-link"]')].map((a) => [a.textContent, a.href]));
    const settle = () => new Promise((res) => setTimeout(res, 50));
    await el.writeFile("/work/evil\u202Etxt.exe", "MZ");
    await el.writeFile("/work/plain.txt", "one");
    await el.writeFile("/work/other.txt", "two");
    await settle();
    const first = links();
    await el.writeFile("/work/plain.txt", "changed");
    await settle();
    const second = links();
    const changedText = await (await fetch(second["/work/plain.txt"])).text();
    const gone = (url) => fetch(url).then(() => "fetched", () => "revoked");
    const oldContent = await gone(first["/work/plain.txt"]);
    await el.deleteFile("/work/evil\u202Etxt.exe");
    await settle();
    const deleted = await gone(first["/work/evil\\u202Etxt.exe"]);
    await el.close();
    const revoked = await gone(second["/work/other.txt"]);
    return { first, second, changedText, oldContent, deleted, revoked, after: links() };
  });
  assert.deepEqual(Object.keys(r.first).sort(), ["/work/evil\\u202Etxt.exe", "/work/other.txt", "/work/plain.txt"]);
  assert.equal(r.second["/work/other.txt"], r.first["/work/other.txt"], "an unchanged file keeps its blob");
  assert.equal(r.second["/work/evil\\u202Etxt.exe"], r.first["/work/evil\\u202Etxt.exe"]);
  assert.notEqual(r.second["/work/plain.txt"], r.first["/work/plain.txt"]);
  assert.equal(r.changedText, "changed");
  assert.equal(r.oldContent, "revoked", "a changed file's old blob is let go");
  assert.equal(r.deleted, "revoked", "a deleted file's blob is let go");
  assert.equal(r.revoked, "revoked");
  assert.deepEqual(r.after, {});
  assert.deepEqual(errs, []);
  await p.close();
});

test(`${B}: a Preact page drives the element through attributes, methods and events`, async () => {
  const dir = fileURLToPath(new URL("../pages/framework/", import.meta.url));
  await build({
    entryPoints: [dir + "app.jsx"],
    bundle: true,
    format: "esm",
    outfile: dir + "dist/app.js",
    jsx: "automatic",
    jsxImportSource: "preact",
    external: ["/foxden.js"],
    logLevel: "error",
  });
  const { p, errs } = await plainPage("/e2e/framework/index.html");
  await p.waitForFunction(() => document.querySelector("#log")?.dataset.state === "ready", { timeout: 60000 });
  await p.click("#run");
  await p.waitForFunction(() => document.querySelector("#log").dataset.state === "done", { timeout: 30000 });
  const r = await p.evaluate(() => ({
    lines: [...document.querySelectorAll("#log li")].map((li) => li.textContent),
    result: document.querySelector("#result").textContent,
    name: document.querySelector("foxden-den").getAttribute("name"),
    timeout: document.querySelector("foxden-den").getAttribute("timeout"),
  }));
  assert.deepEqual(r.lines, ["out: tick 0", "out: tick 1", "out: tick 2"]);
  assert.equal(r.result, "'done'");
  assert.equal(r.name, "preact-den");
  assert.equal(r.timeout, "9000");
  // The app renames the den through its state: the element reopens under the new name.
  await p.click("#rename");
  await p.waitForFunction(() => document.querySelector("#log").dataset.state === "ready" && document.querySelector("foxden-den").getAttribute("name") === "preact-den-2", { timeout: 60000 });
  await p.click("#unmount");
  await p.waitForFunction(() => !document.querySelector("foxden-den"));
  const counts = await p.evaluate(async () => {
    await new Promise((r) => setTimeout(r, 20));
    return window.foxdenCounts();
  });
  assert.deepEqual(counts, { listeners: 0, connections: 0 });
  assert.deepEqual(errs, []);
  await p.close();
});

test(`${B}: 200 create/remove cycles leave no live listeners or connections`, async () => {
  // Other tests opened pages over this one: a background tab's timers are throttled.
  await page.bringToFront();
  const r = await page.evaluate(async () => {
    const { liveCounts } = window.foxden;
    const base = liveCounts();
    // One macrotask, without timers (not throttled even in a background tab).
    const tick = () =>
      new Promise((r) => {
        const c = new MessageChannel();
        c.port1.onmessage = () => {
          c.port1.close();
          r();
        };
        c.port2.postMessage(0);
      });
    let peak = { listeners: 0, connections: 0 };
    const host = document.querySelector("#b");
    for (let i = 0; i < 200; i++) {
      const el = document.createElement("foxden-den");
      el.name = `cycle-${i % 3}`;
      el.controls = true;
      el.innerHTML = '<script type="text/x-python">print(1)<\/script>';
      host.append(el);
      await tick(); // the den starts loading: iframe, port, listeners
      const c = liveCounts();
      peak = { listeners: Math.max(peak.listeners, c.listeners), connections: Math.max(peak.connections, c.connections) };
      if (i % 2) host.firstElementChild.remove();
      else el.remove();
      await tick();
    }
    // A few full open/run/close cycles too.
    for (let i = 0; i < 3; i++) {
      const el = document.createElement("foxden-den");
      el.name = "cycle-full";
      el.controls = true;
      host.append(el);
      await el.ready;
      await el.run("x = 1");
      el.remove();
      await tick();
    }
    await tick();
    return { base, peak, end: liveCounts(), iframes: document.querySelectorAll("iframe[data-foxden-den]").length, left: host.children.length };
  });
  assert.ok(r.peak.listeners > r.base.listeners, `listeners were registered (peak ${r.peak.listeners})`);
  assert.ok(r.peak.connections > r.base.connections, "dens started loading");
  assert.deepEqual(r.end, r.base);
  assert.equal(r.left, 0);
  assert.equal(r.iframes, r.base.connections);
});

test(`${B}: review mends: SVG shown from data: URLs; ready after close(); setup after a refused run; Run not stuck; reopen during an IndexedDB write`, async () => {
  const r = await page.evaluate(async () => {
    const make = window.makeLab;
    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
    const out = {};
    // 1. An SVG display is an <img> from a data: URL (a blob: URL has this page's origin, and
    //    "open image in new tab" would run its scripts here); a PNG stays a blob: URL.
    const el = make({ name: "mend-ui", controls: "", readonly: "" }, [["setup", "def ready_():\n    return 'set up'"]]);
    await el.ready;
    await el.run(`import foxden
foxden.display('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>parent.owned = 1</script><rect width="4" height="4"/></svg>', mime='image/svg+xml')
foxden.display(b'\\x89PNG\\r\\n\\x1a\\n', mime='image/png')`);
    out.srcs = [...el.shadowRoot.querySelectorAll('[part~="display-image"]')].map((i) => i.getAttribute("src").split(":")[0]);
    // 2. Setup is claimed only by a run that ran: a refused run (bad option) leaves it to the next.
    out.refused = await el.run("ready_()", { timeoutMs: -1 }).then(() => "ran", (e) => e.name);
    out.setup = (await el.run("ready_()")).result;
    // 3. Controls removed during a run and put back after it: the Run button is not left busy.
    const running = el.run("import time\ntime.sleep(0.8)");
    await sleep(200);
    el.removeAttribute("controls");
    await running;
    el.setAttribute("controls", "");
    await sleep(50);
    const root = el.shadowRoot;
    out.runBusy = root.querySelector('[part~="run-button"]').getAttribute("aria-disabled");
    out.stopDisabled = root.querySelector('[part~="stop-button"]').disabled;
    el.remove();
    // 4. close() while loading, then a change that keeps the den closed: ready says closed.
    const c = make({ name: "mend-closed" });
    await sleep(50); // loading
    c.close();
    c.timeout = 5000;
    out.closedReady = await Promise.race([c.ready.then(() => "resolved", (e) => e.code), sleep(8000).then(() => "pending")]);
    c.remove();
    // 5. An IndexedDB element reopened (an option changed) while a write is in flight: the new
    //    den waits for the old one's lock, opens, and has the file.
    const d = make({ name: "mend-idb", store: "idb" });
    out.opened = await d.ready.then(() => "ready", (e) => `${e.code}: ${e.message}`);
    const write = d.writeFile("/work/big.bin", new Uint8Array(8 << 20).fill(3)).then(() => "written", (e) => `${e.code}`);
    await sleep(0);
    d.setAttribute("max-files", "100");
    await sleep(0); // the change is applied in a microtask: then `ready` is the new den's
    out.reopened = await Promise.race([d.ready.then(() => "ready", (e) => `${e.code}: ${e.message}`), sleep(20000).then(() => "pending")]);
    out.write = await write;
    out.files = out.reopened === "ready" ? (await d.list()).map((f) => f.path) : null;
    if (out.reopened === "ready") await d.deleteFile("/work/big.bin");
    d.remove();
    return out;
  });
  assert.deepEqual(r.srcs, ["data", "blob"]);
  assert.equal(r.refused, "DenError");
  assert.equal(r.setup, "'set up'");
  assert.equal(r.runBusy, "false");
  assert.equal(r.stopDisabled, true);
  assert.equal(r.closedReady, "closed");
  assert.equal(r.opened, "ready");
  assert.equal(r.reopened, "ready");
  assert.equal(r.write, "written");
  assert.deepEqual(r.files, ["/work/big.bin"]);
});

test(`${B}: a shared environment that failed to open: an old member leaving does not close the next one of that name`, async () => {
  const r = await page.evaluate(async () => {
    const make = (attrs) => {
      const el = document.createElement("foxden-den");
      for (const [k, v] of Object.entries({ "pyodide-url": "/pyodide/", ...attrs })) el.setAttribute(k, v);
      document.getElementById("b").append(el);
      return el;
    };
    const broken = { env: "mend-env", "den-url": "/missing/den.html", "load-timeout": "2000" };
    const a = make({ name: "mend-a", ...broken });
    const b = make({ name: "mend-b", ...broken });
    const failed = await Promise.all([a.ready, b.ready].map((p) => p.then(() => "ready", (e) => e.name)));
    // A tries again with a working den page (a new environment of the same name); B leaves.
    a.setAttribute("den-url", "/den/den.html");
    a.setAttribute("load-timeout", "60000");
    await new Promise((res) => setTimeout(res, 0));
    b.remove();
    const ready = await a.ready.then(() => "ready", (e) => `${e.code}: ${e.message}`);
    const run = await a.run("6 * 7").then((x) => x.result, (e) => `${e.code}: ${e.message}`);
    a.remove();
    return { failed, ready, run };
  });
  assert.deepEqual(r.failed, ["DenLoadError", "DenLoadError"]);
  assert.equal(r.ready, "ready");
  assert.equal(r.run, "42");
});

test(`${B}: review mends 2: setup reruns in a new interpreter; ready after close(); code set early; a move reports nothing again; Run ignores clicks during setup; a loading environment stops`, async () => {
  const r = await page.evaluate(async () => {
    const make = window.makeLab;
    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
    const out = {};
    // 1. Setup runs again in every new interpreter, even when the run was asked for before the
    //    reset (or the timeout) that made it had happened.
    const el = make({ name: "mend2-setup", controls: "", readonly: "" }, [["", "N += 1\nN"], ["setup", "N = 0"]]);
    await el.ready;
    out.first = (await el.run()).result;
    const reset = el.reset();
    out.afterReset = (await el.run()).result;
    await reset;
    el.run("while True: pass", { timeoutMs: 300 });
    out.afterTimeout = (await el.run()).result;
    out.sameInterpreter = (await el.run()).result;
    // 2. Run ignores clicks while its setup (hidden) runs: one run, one setup.
    await el.reset();
    const runs = [];
    const onRun = (e) => { if (e.detail.phase === "start") runs.push(e.detail.code); };
    el.addEventListener("run", onRun);
    const button = el.shadowRoot.querySelector('[part~="run-button"]');
    el.querySelector("script[setup]").textContent = "import time\ntime.sleep(0.5)\nN = 10";
    await el.reset();
    button.click();
    await sleep(100);
    button.click();
    button.click();
    await sleep(1500);
    el.removeEventListener("run", onRun);
    out.clickRuns = runs.length;
    out.afterClicks = (await el.run("N")).result;
    // 3. ready after close(): a new promise that rejects, not the old den's info.
    await el.ready;
    el.close();
    out.readyAfterClose = await el.ready.then(() => "resolved", (e) => e.code);
    el.remove();
    // 4. A `code` property set before the tag is upgraded is the code (an own property used to
    //    hide the accessor); the read-only view shows it.
    const pre = document.createElement("template");
    pre.innerHTML = '<foxden-den name="mend2-code" den-url="/den/den.html" pyodide-url="/pyodide/" controls readonly><script type="text/x-python">"from the script"</script></foxden-den>';
    const c = pre.content.firstElementChild;
    out.upgradedEarly = c instanceof customElements.get("foxden-den");
    c.code = "'from the property'";
    document.getElementById("a").append(c);
    await c.ready;
    out.codeRun = (await c.run()).result;
    out.codeShown = c.shadowRoot.querySelector('[part~="code"]').textContent;
    c.code = "'set later'";
    out.codeShownLater = c.shadowRoot.querySelector('[part~="code"]').textContent;
    c.remove();
    // 5. Moving an element with a bad attribute reports nothing again, and its ready stays
    //    rejected; fixing the attribute opens it.
    const errors = [];
    const bad = make({ name: "bad name!" });
    bad.addEventListener("error", (e) => errors.push(e.detail.error.code));
    await sleep(50);
    const seenBefore = errors.length;
    document.getElementById("b").append(bad);
    await sleep(50);
    bad.controls = true;
    await sleep(50);
    out.badEvents = [seenBefore, errors.length];
    out.badReady = await Promise.race([bad.ready.then(() => "resolved", (e) => e.code), sleep(2000).then(() => "pending")]);
    bad.setAttribute("name", "mend2-fixed");
    out.fixedReady = await bad.ready.then(() => "ready", (e) => e.code);
    bad.remove();
    // 6. The last element of a shared environment removed while it loads: the loading stops
    //    and the name is free at once (it was held until the whole load ended).
    const env = make({ env: "mend2-env" });
    await sleep(100);
    env.remove();
    await sleep(0);
    const t0 = performance.now();
    const d = await window.foxden.openDen({ name: "mend2-env", denUrl: "/den/den.html", pyodideUrl: "/pyodide/" }).then(
      (d) => d,
      (e) => e.code,
    );
    out.envName = typeof d === "string" ? d : "opened";
    out.envFreeMs = performance.now() - t0;
    if (typeof d !== "string") await d.close();
    return out;
  });
  assert.deepEqual([r.first, r.afterReset, r.afterTimeout, r.sameInterpreter], ["1", "1", "1", "2"]);
  assert.equal(r.clickRuns, 1, "one visible run for three clicks");
  assert.equal(r.afterClicks, "11");
  assert.equal(r.readyAfterClose, "closed");
  assert.equal(r.upgradedEarly, false, "the property was set before the upgrade");
  assert.equal(r.codeRun, "'from the property'");
  assert.equal(r.codeShown, "'from the property'");
  assert.equal(r.codeShownLater, "'set later'");
  assert.deepEqual(r.badEvents, [1, 1]);
  assert.equal(r.badReady, "bad-option");
  assert.equal(r.fixedReady, "ready");
  assert.equal(r.envName, "opened");
});

test(`${B}: a setup that leaves work running is not counted as done: the status says so, and the code does not run without it`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeLab({ name: "mend3-setup", controls: "", readonly: "" }, [
      ["", "READY"],
      ["setup", "from pyodide.code import run_js\nrun_js('setInterval(() => {}, 1000)')\nREADY = 'set up'"],
    ]);
    await el.ready;
    const runs = [];
    el.addEventListener("run", (e) => runs.push(e.detail.phase));
    const first = await el.run();
    const status = el.shadowRoot.querySelector('[part~="status"]').textContent;
    el.remove();
    return { restarted: first.restarted, status, runs, errorType: first.error?.type, errorMessage: first.error?.message };
  });
  assert.equal(r.restarted, true);
  // run() says the code did not run (not the setup's result as if it were the code's).
  assert.equal(r.errorType, "SetupError");
  assert.match(r.errorMessage, /did not run/);
  assert.match(r.status, /setup code left work running/);
  assert.deepEqual(r.runs, [], "the code did not run without its setup");
});

test(`${B}: review mends 3: a memory den keeps its files across failed or replaced openings; writeFile takes the bytes at the call; the documented lesson runs`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeLab({ name: "carry" });
    await el.ready;
    await el.writeFile("/work/keep.txt", "kept");
    const b = new Uint8Array([7, 8]);
    const early = el.writeFile("/work/b.bin", b);
    b.fill(0);
    await early;
    const settle = async () => { for (let i = 0; i < 100 && !(await Promise.race([el.ready.then(() => true, () => true), new Promise((r) => setTimeout(() => r(false), 50))])); i++); };
    // 1. An opening that fails (a den page that is not there), then the attribute back.
    el.setAttribute("load-timeout", "3000");
    el.setAttribute("den-url", "/missing/den.html");
    await settle();
    const failed = await el.ready.then(() => "opened", (e) => e.name);
    el.removeAttribute("load-timeout");
    el.setAttribute("den-url", "/den/den.html");
    await el.ready;
    const afterFail = (await el.list()).map((f) => f.path).sort();
    // 2. An opening replaced while it loads by another one.
    el.setAttribute("timeout", "7000");
    el.setAttribute("max-den-bytes", "1000000");
    await new Promise((r) => setTimeout(r, 0));
    el.setAttribute("max-den-bytes", "2000000");
    await el.ready;
    const afterReplace = (await el.list()).map((f) => f.path).sort();
    const bytes = Array.from(await el.readFile("/work/b.bin"));
    el.remove();
    // 3. docs/element.md's lesson: the comments on the script tags' lines, setup, check.
    const lesson = document.createElement("div");
    lesson.innerHTML = `<foxden-den env="doc-lesson" den-url="/den/den.html" pyodide-url="/pyodide/" controls>
  <script type="text/x-python" setup>   # hidden; runs once per interpreter, before the first run
    prices = [3.5, 12.0, 7.25]
    def euros(x): return f"{x:.2f} €"
  </script>
  <script type="text/x-python">          # the reader's code, in the editor
    total = sum(prices)
  </script>
  <script type="text/x-python" check>   # runs after the reader's code; passes when it raises nothing
    assert total == 22.75, f"total is {total}"
  </script>
</foxden-den>`;
    document.querySelector("#a").append(lesson);
    const cell = lesson.querySelector("foxden-den");
    const checked = new Promise((res) => cell.addEventListener("check", (e) => res(e.detail), { once: true }));
    await cell.ready;
    cell.shadowRoot.querySelector('[part~="run-button"]').click();
    const check = await Promise.race([checked, new Promise((res) => setTimeout(() => res("no check event"), 20000))]);
    lesson.remove();
    return { failed, afterFail, afterReplace, bytes, check: JSON.stringify(check) };
  });
  assert.equal(r.failed, "DenLoadError");
  assert.deepEqual(r.afterFail, ["/work/b.bin", "/work/keep.txt"]);
  assert.deepEqual(r.afterReplace, ["/work/b.bin", "/work/keep.txt"]);
  assert.deepEqual(r.bytes, [7, 8]);
  assert.match(r.check, /"passed":true/);
});

test(`${B}: every bad network attribute is reported, with or without network`, async () => {
  const r = await page.evaluate(async () => {
    const seen = async (attrs) => {
      const el = document.createElement("foxden-den");
      const names = [];
      el.addEventListener("error", (e) => names.push(e.detail.attribute));
      for (const [k, v] of Object.entries({ name: "netattrs", "den-url": "/den/den.html", "pyodide-url": "/pyodide/", ...attrs })) el.setAttribute(k, v);
      document.querySelector("#a").append(el);
      const ready = await el.ready.then(() => "opened", (e) => `${e.name}:${e.option}`);
      el.remove();
      return { names: names.sort(), ready };
    };
    return {
      without: await seen({ "network-per-minute": "often", "network-max-response-bytes": "-5", "network-methods": "FETCH" }),
      with: await seen({ network: "https://api.example.com/*", "network-per-minute": "often", "network-methods": "FETCH" }),
    };
  });
  assert.deepEqual(r.without.names, ["network-max-response-bytes", "network-methods", "network-per-minute"]);
  assert.deepEqual(r.with.names, ["network-methods", "network-per-minute"]);
  assert.match(r.without.ready, /^DenError:/);
});

test(`${B}: review mends 4: ready after an attribute change is the new den's; the edited code survives readonly and controls off; a never-connected element's error names it`, async () => {
  const r = await page.evaluate(async () => {
    const wait = (ms) => new Promise((res) => setTimeout(res, ms));
    const mk = (name, attrs = {}, code) => {
      const el = document.createElement("foxden-den");
      for (const [k, v] of Object.entries({ name, "den-url": "/den/den.html", "pyodide-url": "/pyodide/", ...attrs })) el.setAttribute(k, v);
      if (code !== undefined) {
        const sc = document.createElement("script");
        sc.type = "text/x-python";
        sc.textContent = code;
        el.append(sc);
      }
      document.querySelector("#a").append(el);
      return el;
    };
    // el.name = x; await el.ready: the new den's info (it was the old, resolved promise).
    const el = mk("mend4-a");
    const first = await el.ready;
    el.name = "mend4-b";
    const second = await el.ready;
    const renamed = { fresh: first !== second, live: el.info !== null, name: (await el.run("1")).result };
    // A change that keeps the den resolves the fresh ready with the same den.
    el.timeout = 20000;
    const kept = JSON.stringify(await el.ready) === JSON.stringify(second);
    // A method called in the same task as the change goes to the new den.
    el.name = "mend4-c";
    const sameTask = await el.run("import sys\n'ok'").then((x) => x.result, (e) => e.name);
    el.remove();
    // The edited code stays the code when the editor goes (readonly, controls off).
    const ed = mk("mend4-ed", { controls: "" }, "print('starter')");
    await ed.ready;
    for (let i = 0; i < 100 && !ed.shadowRoot.querySelector(".cm-content"); i++) await wait(100);
    ed.code = "print('answer')";
    ed.readonly = true;
    await wait(0);
    const afterReadonly = { code: ed.code, shown: ed.shadowRoot.querySelector("#code")?.textContent ?? "", run: (await ed.run()).stdout };
    ed.readonly = false;
    await wait(0);
    for (let i = 0; i < 100 && !ed.shadowRoot.querySelector(".cm-content"); i++) await wait(100);
    ed.code = "print('answer2')";
    ed.controls = false;
    await wait(0);
    const afterControlsOff = ed.code;
    ed.remove();
    // Text never edited is not kept: a page that changes the script child later is followed.
    const sw = mk("mend4-sw", { controls: "" }, "print('s1')");
    await sw.ready;
    for (let i = 0; i < 100 && !sw.shadowRoot.querySelector(".cm-content"); i++) await wait(100);
    sw.controls = false;
    await wait(0);
    sw.querySelector("script").textContent = "print('s2')";
    const followed = (await sw.run()).stdout;
    sw.remove();
    // An element never connected names itself in its error.
    const loose = document.createElement("foxden-den");
    loose.name = "hasname";
    const message = await loose.run("1").then(() => "ran", (e) => e.message);
    return { renamed, kept, sameTask, afterReadonly, afterControlsOff, followed, message };
  });
  assert.deepEqual(r.renamed, { fresh: true, live: true, name: "1" });
  assert.ok(r.kept);
  assert.equal(r.sameTask, "'ok'");
  assert.match(r.afterReadonly.code, /print\('answer'\)/);
  assert.match(r.afterReadonly.shown, /answer/);
  assert.equal(r.afterReadonly.run, "answer\n");
  assert.match(r.afterControlsOff, /print\('answer2'\)/);
  assert.equal(r.followed, "s2\n");
  assert.match(r.message, /name="hasname"/);
});

test(`${B}: loading="lazy" opens nothing until the element nears the viewport, a method or Run needs it`, async () => {
  await page.bringToFront();
  const r = await page.evaluate(async () => {
    const { liveCounts } = window.foxden;
    const base = liveCounts();
    const iframes = () => document.querySelectorAll("iframe[data-foxden-den]").length;
    const framesBefore = iframes();
    const settled = (p) => Promise.race([p.then(() => "resolved", (e) => `rejected: ${e.message}`), new Promise((r) => setTimeout(() => r("pending"), 0))]);
    // Each lazy element below a spacer of its own: far from the viewport and from each other.
    const spacers = [];
    const space = () => {
      const spacer = document.createElement("div");
      spacer.style.height = "5000px";
      document.body.append(spacer);
      spacers.push(spacer);
    };
    const make = (name, attrs = {}, code = null) => {
      const el = document.createElement("foxden-den");
      el.name = name;
      el.loading = "lazy";
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      if (code) el.innerHTML = `<script type="text/x-python">${code}<\/script>`;
      space();
      document.body.append(el);
      return el;
    };
    window.scrollTo(0, 0);
    const seen = make("lazy-seen");
    const used = make("lazy-used");
    const clicked = make("lazy-run", { controls: "" }, "print('clicked')");
    const gone = make("lazy-gone");
    const bad = make("lazy-bad");
    const badErrors = [];
    bad.addEventListener("error", (e) => badErrors.push({ attribute: e.detail.attribute, option: e.detail.error.option, message: e.detail.error.message }));
    bad.setAttribute("loading", "soon");
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = {
      iframes: iframes() - framesBefore,
      info: seen.info,
      ready: await settled(seen.ready),
      status: clicked.shadowRoot.querySelector("#status").textContent,
      runEnabled: !clicked.shadowRoot.querySelector("#run").disabled,
      loading: seen.loading,
      badReady: await bad.ready.then(() => "resolved", (e) => `${e.name}:${e.option}`),
    };
    // Removed while waiting: nothing was opened, and the viewport watch is gone.
    gone.remove();
    bad.remove();
    // Coming near the viewport opens the den.
    seen.scrollIntoView();
    const seenInfo = await seen.ready;
    const seenRun = (await seen.run("1 + 1")).result;
    window.scrollTo(0, 0);
    // A method call opens it, wherever it is.
    const usedRun = (await used.run("6 * 7")).result;
    const usedInfo = used.info && used.info.isolation;
    // The Run button opens it, then runs the element's code.
    const runEvent = new Promise((r) => clicked.addEventListener("run", (e) => e.detail.phase === "end" && r(e.detail.result.stdout)));
    clicked.shadowRoot.querySelector("#run").click();
    const clickedOut = await Promise.race([runEvent, new Promise((r) => setTimeout(() => r("no run event"), 60000))]);
    // Lazy elements of one shared environment open together when the first is needed: the
    // setup code of one that was never seen runs before the code of the one that is used.
    const lesson = [0, 1, 2].map((i) => {
      const el = document.createElement("foxden-den");
      el.setAttribute("env", "lazy-lesson");
      el.loading = "lazy";
      if (i === 0) el.innerHTML = '<script type="text/x-python" setup>from_setup = 41<\/script>';
      space();
      document.body.append(el);
      return el;
    });
    await new Promise((r) => setTimeout(r, 300));
    const lessonWaited = await settled(lesson[0].ready);
    const lessonRun = await lesson[2].run("from_setup + 1");
    const lessonAll = (await Promise.all(lesson.map((el) => el.ready))).length;
    // A lazy element of an environment that is open already joins at once (its setup code too).
    const late = document.createElement("foxden-den");
    late.setAttribute("env", "lazy-lesson");
    late.loading = "lazy";
    late.innerHTML = '<script type="text/x-python" setup>from_late = 1<\/script>';
    space();
    document.body.append(late);
    lesson.push(late);
    await late.ready;
    await lesson[0].reset();
    const lateRun = (await lesson[1].run("from_setup + from_late")).result;
    // autorun and a Run click while waiting: the code runs once.
    const once = make("lazy-once", { controls: "", autorun: "" }, "print('ran')");
    let runs = 0;
    const oneRun = new Promise((r) => once.addEventListener("run", (e) => e.detail.phase === "end" && (runs++, r())));
    await new Promise((r) => setTimeout(r, 100));
    once.shadowRoot.querySelector("#run").click();
    await oneRun;
    await new Promise((r) => setTimeout(r, 1500));
    // Closed while waiting, a method does not make it eager: it stays closed, and re-inserting
    // it waits again.
    const shut = make("lazy-shut");
    await new Promise((r) => setTimeout(r, 100));
    await shut.close();
    const shutRun = await shut.run("1").then(() => "ran", (e) => e.code);
    shut.remove();
    await new Promise((r) => setTimeout(r, 0)); // (in the same task it would be a move)
    document.body.append(shut);
    await new Promise((r) => setTimeout(r, 500));
    const shutAgain = { ready: await settled(shut.ready), iframes: iframes() - framesBefore };
    for (const el of [...lesson, once, shut]) el.remove();
    // Made eager while waiting: opens at once.
    const eager = make("lazy-eager");
    await new Promise((r) => setTimeout(r, 300));
    const eagerWaited = await settled(eager.ready);
    eager.loading = "eager";
    const eagerInfo = await eager.ready;
    for (const el of [seen, used, clicked, eager]) el.remove();
    for (const spacer of spacers) spacer.remove();
    await new Promise((r) => setTimeout(r, 50));
    return JSON.stringify({ waiting, badErrors, seenInfo, seenRun, usedRun, usedInfo, clickedOut, lessonWaited, lessonRun: lessonRun.result, lessonAll, lateRun, runs, shutRun, shutAgain, eagerWaited, eagerOpened: eagerInfo.isolation, base, end: liveCounts(), framesLeft: iframes() - framesBefore });
  }).then(JSON.parse);
  assert.deepEqual(r.waiting, {
    iframes: 0,
    info: null,
    ready: "pending",
    status: "Python loads when this is shown or run",
    runEnabled: true,
    loading: "lazy",
    badReady: "DenError:loading",
  });
  assert.equal(r.badErrors.length, 1, JSON.stringify(r.badErrors));
  assert.equal(r.badErrors[0].attribute, "loading");
  assert.match(r.badErrors[0].message, /"soon" is not a loading mode: use "eager" or "lazy"/);
  assert.equal(r.seenInfo.isolation, "iframe-sandbox");
  assert.equal(r.seenRun, "2");
  assert.equal(r.usedRun, "42");
  assert.equal(r.usedInfo, "iframe-sandbox");
  assert.equal(r.clickedOut, "clicked\n");
  assert.equal(r.lessonWaited, "pending");
  assert.equal(r.lessonRun, "42");
  assert.equal(r.lessonAll, 3);
  assert.equal(r.lateRun, "42");
  assert.equal(r.runs, 1, "autorun and the Run click ran the code once");
  assert.equal(r.shutRun, "closed");
  assert.equal(r.shutAgain.ready, "pending");
  assert.equal(r.eagerWaited, "pending");
  assert.equal(r.eagerOpened, "iframe-sandbox");
  assert.deepEqual(r.end, r.base, "no listener, observer or connection left");
  assert.equal(r.framesLeft, 0);
});

test(`${B}: the runtime property: the element runs on a runtime adapter of the page's; null goes back to the iframe runtime`, async () => {
  const r = await page.evaluate(async () => {
    const calls = [];
    const adapter = {
      start: ({ den }) => calls.push(`start ${den}`),
      close: ({ den }) => calls.push(`close ${den}`),
      run: (req) => {
        calls.push(`run ${req.code}`);
        req.output("stdout", "streamed\n");
        return { result: "'from the adapter'", files: { "/out/a.txt": "made" } };
      },
    };
    const el = document.createElement("foxden-den");
    el.name = "adapted";
    el.runtime = adapter;
    const same = el.runtime === adapter;
    const events = [];
    el.addEventListener("output", (e) => events.push(`output ${e.detail.text}`));
    el.addEventListener("file-change", (e) => events.push(`file-change ${e.detail.created}`));
    document.querySelector("#a").append(el);
    const info = await el.ready;
    const ran = await el.run("1 + 1");
    const file = await el.readText("/out/a.txt");
    let bad = [];
    for (const v of [{ run() {} }, window.foxden.iframeRuntime(), 5]) {
      try {
        el.runtime = v;
        bad.push("set");
      } catch (e) {
        bad.push(e.code ? `${e.name} ${e.code}` : e.name);
      }
    }
    // Packages need the iframe runtime: an error event names the attribute.
    const errors = [];
    el.addEventListener("error", (e) => errors.push(`${e.detail.attribute}: ${e.detail.error.message}`));
    el.setAttribute("packages", "/e2e/demo_pkg-1.0-py3-none-any.whl#sha256=" + "0".repeat(64));
    await new Promise((res) => setTimeout(res, 50));
    el.removeAttribute("packages");
    // The same adapter again, or away and back in one task: nothing reopens.
    el.runtime = adapter;
    el.runtime = null;
    el.runtime = adapter;
    await new Promise((res) => setTimeout(res, 50));
    await el.ready;
    // Back to the iframe runtime: a new den, on the den page, with the memory den's files.
    el.runtime = null;
    await new Promise((res) => setTimeout(res, 0));
    const back = await el.ready;
    const python = (await el.run("6 * 7")).result;
    const carried = (await el.run("open('/out/a.txt').read()")).result;
    el.remove();
    // Set before the element is upgraded (as before foxden.js defined the tag): an own property
    // that the element takes over when it connects.
    const early = document.implementation.createHTMLDocument("").createElement("foxden-den");
    early.setAttribute("name", "adapted-early");
    early.runtime = adapter;
    document.querySelector("#a").append(early);
    const earlyInfo = await early.ready;
    const earlyRan = (await early.run("x")).result;
    early.remove();
    return { same, kind: info.kind, result: ran.result, stdout: ran.stdout, file, events, bad, errors, backKind: back.kind, python, carried, calls, after: el.runtime, earlyKind: earlyInfo.kind, earlyRan };
  });
  assert.equal(r.same, true);
  assert.equal(r.kind, "adapter");
  assert.equal(r.result, "'from the adapter'");
  assert.equal(r.stdout, "streamed\n");
  assert.equal(r.file, "made");
  assert.deepEqual(r.events, ["output streamed\n", "file-change /out/a.txt"]);
  // An adapter without start() or close() is refused as openDen refuses it; what is no adapter
  // at all is a TypeError.
  assert.deepEqual(r.bad, ["DenError bad-option", "TypeError", "TypeError"]);
  assert.equal(r.errors.length, 1, JSON.stringify(r.errors));
  assert.match(r.errors[0], /^packages: <foxden-den> attribute packages: packages needs the iframe runtime/);
  assert.equal(r.backKind, "iframe");
  assert.equal(r.python, "42");
  assert.equal(r.carried, "'made'");
  assert.deepEqual(r.calls, ["start adapted", "run 1 + 1", "close adapted", "start adapted-early", "run x", "close adapted-early"]);
  assert.equal(r.after, null);
  assert.equal(r.earlyKind, "adapter");
  assert.equal(r.earlyRan, "'from the adapter'");
});

test(`${B}: the runtime property: an adapter that loses run() after it was set is reported, never replaced by the iframe runtime`, async () => {
  const r = await page.evaluate(async () => {
    const calls = [];
    const makeAdapter = () => ({
      start: ({ den }) => calls.push(`start ${den}`),
      close: ({ den }) => calls.push(`close ${den}`),
      run: (req) => {
        calls.push(`run ${req.code}`);
        return { result: "'adapted'" };
      },
    });
    const iframes = () => document.querySelectorAll("iframe[data-foxden-den]").length;
    const before = iframes();
    const outcome = async (p) => {
      try {
        return `resolved ${(await p).kind}`;
      } catch (e) {
        return `rejected ${e.name} ${e.code}`;
      }
    };
    // An open den keeps its last valid configuration (as for a bad attribute): the error is
    // reported, and the den goes on with the functions it was opened with.
    const adapter = makeAdapter();
    const el = document.createElement("foxden-den");
    el.name = "adapted-lost";
    el.runtime = adapter;
    const errors = [];
    el.addEventListener("error", (e) => errors.push(`${e.detail.error.name} ${e.detail.error.code}: ${e.detail.error.message}`));
    document.querySelector("#a").append(el);
    const first = (await el.ready).kind;
    delete adapter.run;
    el.setAttribute("timeout", "5000");
    await new Promise((res) => setTimeout(res, 50));
    const kept = await outcome(el.ready);
    const ran = (await el.run("1")).result;
    el.remove();
    // Not open yet: the element does not open at all, and its ready rejects.
    const adapter2 = makeAdapter();
    const el2 = document.createElement("foxden-den");
    el2.name = "adapted-lost-2";
    el2.runtime = adapter2;
    delete adapter2.run;
    const errors2 = [];
    el2.addEventListener("error", (e) => errors2.push(`${e.detail.error.name} ${e.detail.error.code}: ${e.detail.error.message}`));
    document.querySelector("#a").append(el2);
    const fresh = await outcome(el2.ready);
    await new Promise((res) => setTimeout(res, 50));
    const during = iframes();
    el2.remove();
    return { first, kept, ran, errors, fresh, errors2, calls, before, during };
  });
  assert.equal(r.first, "adapter");
  assert.equal(r.kept, "resolved adapter");
  assert.equal(r.ran, "'adapted'");
  assert.equal(r.errors.length, 1, JSON.stringify(r.errors));
  assert.match(r.errors[0], /^DenError bad-option: .*runtime adapter no longer has a run\(request\) function/);
  assert.equal(r.fresh, "rejected DenError bad-option");
  assert.equal(r.errors2.length, 1, JSON.stringify(r.errors2));
  assert.match(r.errors2[0], /runtime adapter no longer has a run\(request\) function/);
  // No iframe den was opened in either's place.
  assert.equal(r.during, r.before);
  assert.deepEqual(r.calls, ["start adapted-lost", "run 1", "close adapted-lost"]);
});

test(`${B}: max-memory-bytes and kill-grace set what openDen's maxMemoryBytes and killGraceMs set; bad values are reported`, async () => {
  const r = await page.evaluate(async () => {
    const make = (name, attrs) => {
      const el = document.createElement("foxden-den");
      el.setAttribute("name", name);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      document.querySelector("#a").append(el);
      return el;
    };
    const capped = make("capped-el", { "max-memory-bytes": String(256 * 1024 * 1024), "kill-grace": "2000" });
    const plain = make("plain-el", {});
    await Promise.all([capped.ready, plain.ready]);
    const props = [capped.maxMemoryBytes, capped.killGrace, plain.maxMemoryBytes, plain.killGrace];
    await capped.run("keep = 'me'");
    const big = await capped.run("blob = bytearray(400 * 1024 * 1024)");
    const after = await capped.run("small = bytearray(10 * 1024 * 1024)\nkeep, len(small)");
    const plainBig = await plain.run("blob = bytearray(400 * 1024 * 1024)\nlen(blob)");
    // A JS timer alive 600 ms after the run: within a 2 s grace, past the default 200 ms.
    const timer = "from pyodide.code import run_js\nrun_js('setTimeout(() => {}, 600)')";
    const graced = await capped.run(timer);
    const cut = await plain.run(timer);
    const errors = [];
    plain.addEventListener("error", (e) => errors.push(`${e.detail.attribute}: ${e.detail.error.message}`));
    plain.setAttribute("max-memory-bytes", "1024");
    plain.setAttribute("kill-grace", "-1");
    await new Promise((res) => setTimeout(res, 50));
    capped.remove();
    plain.remove();
    return { props, big, after, plainBig, graced: graced.restarted, cut: cut.restarted, errors };
  });
  assert.deepEqual(r.props, [256 * 1024 * 1024, 2000, 2 * 1024 * 1024 * 1024, 200]);
  assert.equal(r.big.error?.type, "MemoryError", JSON.stringify(r.big.error));
  assert.equal(r.big.restarted, false);
  assert.equal(r.after.result, "('me', 10485760)", JSON.stringify(r.after.error));
  assert.equal(r.plainBig.result, "419430400", JSON.stringify(r.plainBig.error));
  assert.equal(r.graced, false);
  assert.equal(r.cut, true);
  assert.equal(r.errors.length, 2, JSON.stringify(r.errors));
  assert.match(r.errors[0], /^max-memory-bytes: .*max-memory-bytes/);
  assert.match(r.errors[1], /^kill-grace: .*kill-grace/);
});

test(`${B}: review mends 5: code set by property keeps its editor; edits survive removal; dropped files wait for the den; the hidden check is a busy run Stop can end; a check after code that left work running says so; run() runs the code of its call`, async () => {
  const r = await page.evaluate(async () => {
    const make = window.makeLab;
    const out = {};
    const tick = (ms = 50) => new Promise((res) => setTimeout(res, ms));
    const until = async (f, ms = 30000) => {
      const t = performance.now();
      while (!f()) {
        if (performance.now() - t > ms) return false;
        await tick();
      }
      return true;
    };
    const part = (el, p) => el.shadowRoot.querySelector(`[part~="${p}"]`);
    // 1. Code from the `code` property (no script child): its editor stays when an attribute
    //    changes and when the element moves, and it is still the code.
    const a = make({ name: "m4-code", controls: "" });
    a.code = "x = 41\nx + 1";
    out.editorShown = await until(() => a.shadowRoot?.querySelector(".cm-content"));
    a.timeout = 10000;
    await tick();
    document.getElementById("b").append(a);
    await tick();
    out.codeAfter = a.code;
    out.editorAfter = !!a.shadowRoot?.querySelector(".cm-content");
    out.run1 = (await a.run()).result;
    a.remove();
    // 2. Edits in the editor of an element with a script child survive its removal.
    const e = make({ name: "m4-edit", controls: "" }, [["", "'starter'"]]);
    await until(() => e.shadowRoot?.querySelector(".cm-content"));
    e.code = "'edited'";
    e.remove();
    await tick();
    out.codeDetached = e.code;
    document.getElementById("a").append(e);
    await tick();
    await e.ready;
    out.runEdited = (await e.run()).result;
    e.remove();
    // 3. Files dropped while Python loads are written once the den is open.
    const f = make({ name: "m4-drop", controls: "" });
    const errs = [];
    f.addEventListener("error", (ev) => errs.push(ev.detail.error.code));
    await tick(0);
    const dt = new DataTransfer();
    dt.items.add(new File(["a,b\n"], "early.csv"));
    f.shadowRoot.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    await f.ready;
    let listed = [];
    for (let i = 0; i < 100 && !listed.includes("/drop/early.csv"); i++) {
      listed = (await f.list()).map((x) => x.path);
      await tick();
    }
    out.dropped = listed.includes("/drop/early.csv");
    out.dropErrors = errs;
    f.remove();
    // 4. The hidden check is part of the run: Stop is on (and Run off) while it runs, the
    //    status says so, and Stop ends it without a verdict.
    const c = make({ name: "m4-check", controls: "", readonly: "" }, [["", "def slow():\n    import time\n    time.sleep(30)"], ["check", "slow()"]]);
    await c.ready;
    const checks = [];
    c.addEventListener("check", (ev) => checks.push(ev.detail));
    const running = c.run();
    out.checking = await until(() => part(c, "status").textContent.startsWith("Checking"));
    await tick(200);
    out.stopOnDuringCheck = !part(c, "stop-button").disabled;
    out.runBusyDuringCheck = part(c, "run-button").getAttribute("aria-disabled");
    part(c, "stop-button").click();
    await running;
    out.statusAfterStop = part(c, "status").textContent;
    out.stopOffAfter = part(c, "stop-button").disabled;
    out.checksAfterStop = checks.length;
    c.remove();
    // 5. Code that leaves work running restarts the interpreter: the check does not run in the
    //    new one (where the code's variables are gone), and the verdict says why.
    const d = make({ name: "m4-left", readonly: "" }, [["", "from pyodide.code import run_js\nrun_js('setInterval(() => {}, 1000)')\ntotal = 1"], ["check", "assert total == 1"]]);
    await d.ready;
    const verdict = new Promise((res) => d.addEventListener("check", (ev) => res(ev.detail), { once: true }));
    const left = await d.run();
    out.leftRestarted = left.restarted;
    out.leftVerdict = await verdict;
    d.remove();
    // 6. run() without code runs the element's code as it was at the call, not as it is when
    //    the run gets its turn.
    const g = make({ name: "m4-turn", readonly: "" }, [["", "'at the call'"]]);
    await g.ready;
    const busy = g.run("import time\ntime.sleep(0.5)");
    const own = g.run();
    g.code = "'changed later'";
    await busy;
    out.ownResult = (await own).result;
    g.remove();
    // 7. An element of a shared environment that leaves while its run (through the element)
    //    goes on, and comes back: its new controls are not busy with the old run.
    const h1 = make({ env: "m4env", controls: "", readonly: "" }, [["", "import time\ntime.sleep(3)"]]);
    const h2 = make({ env: "m4env", readonly: "" }, [["", "1"]]);
    await Promise.all([h1.ready, h2.ready]);
    const slow = h1.run().catch(() => null);
    await until(() => part(h1, "stop-button") && !part(h1, "stop-button").disabled);
    h1.remove();
    await tick();
    document.getElementById("a").append(h1);
    await tick();
    await h1.ready;
    await until(() => part(h1, "run-button") && !part(h1, "run-button").disabled);
    out.rejoinedRunBusy = part(h1, "run-button").getAttribute("aria-disabled");
    out.rejoinedStopDisabled = part(h1, "stop-button").disabled;
    await slow;
    h1.remove();
    h2.remove();
    return out;
  });
  assert.ok(r.editorShown, "the editor appears for code set by property");
  assert.equal(r.codeAfter, "x = 41\nx + 1");
  assert.ok(r.editorAfter, "the editor stays after an attribute change and a move");
  assert.equal(r.run1, "42");
  assert.equal(r.codeDetached, "'edited'");
  assert.equal(r.runEdited, "'edited'");
  assert.ok(r.dropped, `a file dropped while loading is written (errors: ${JSON.stringify(r.dropErrors)})`);
  assert.deepEqual(r.dropErrors, []);
  assert.ok(r.checking, "the status says the check runs");
  assert.equal(r.stopOnDuringCheck, true);
  assert.equal(r.runBusyDuringCheck, "true");
  assert.match(r.statusAfterStop, /^Stopped/);
  assert.equal(r.stopOffAfter, true);
  assert.equal(r.checksAfterStop, 0, "a stopped check gives no verdict");
  assert.equal(r.leftRestarted, true);
  assert.equal(r.leftVerdict.passed, false);
  assert.match(r.leftVerdict.message, /left work running/);
  assert.equal(r.ownResult, "'at the call'");
  assert.equal(r.rejoinedRunBusy, "false", "the old den's run does not make the rejoined element busy");
  assert.equal(r.rejoinedStopDisabled, true);
});

test(`${B}: review mends 6: typing sends the page no input event; hidden runs stay out of run()'s callbacks; a vetoed run gives no verdict; Reset stops a run waiting in input(); callbacks and on/off properties are checked`, async () => {
  // 1. The browser's own input events (typing in the input line) are composed: they must not
  //    reach the page as the element's `input` event, which is the input() request.
  const typer = await page.evaluateHandle(() => {
    window.__m6inputs = [];
    const el = window.makeLab({ name: "m6-type", controls: "" });
    el.addEventListener("input", (e) => window.__m6inputs.push(e instanceof CustomEvent ? "request" : e.constructor.name));
    return el;
  });
  await page.evaluate((el) => el.ready, typer);
  const line = await waitForDeep(page, 'foxden-den[name="m6-type"] >>> [part~="stdin"]');
  await line.click();
  await page.keyboard.type("abc");
  const typed = await page.evaluate((el) => {
    const value = el.shadowRoot.querySelector('[part~="stdin"]').value;
    el.remove();
    return { value, inputs: window.__m6inputs };
  }, typer);
  assert.deepEqual(typed, { value: "abc", inputs: [] });
  // A field the page slotted into the element is the page's: its input events go on.
  const slotted = await page.evaluateHandle(() => {
    window.__m6slotted = [];
    const el = window.makeLab({ name: "m6-slot", controls: "" });
    const field = document.createElement("input");
    field.id = "m6-field";
    el.append(field);
    document.addEventListener("input", (e) => e.target === field && window.__m6slotted.push(e.constructor.name));
    return el;
  });
  await page.evaluate((el) => el.ready, slotted);
  await page.click("#m6-field");
  await page.keyboard.type("xy");
  assert.deepEqual(await page.evaluate((el) => { el.remove(); return window.__m6slotted; }, slotted), ["InputEvent", "InputEvent"]);

  const r = await page.evaluate(async () => {
    const make = window.makeLab;
    const out = {};
    const { tick, until, part } = window.labKit;
    // 2. The hidden setup and check print: run()'s onOutput gets the code's output only; a run
    //    a `run` listener vetoes gets no verdict (no check event, no ✘).
    const c = make({ name: "m6-check", controls: "", readonly: "" }, [["setup", "print('setup says')"], ["", "x = 1\nprint('code says')"], ["check", "print('check says')\nassert x == 1"]]);
    await c.ready;
    const checks = [];
    c.addEventListener("check", (e) => checks.push(e.detail.passed));
    const seen = [];
    const first = await c.run(undefined, { onOutput: (o) => seen.push(o.text), onDisplay: () => seen.push("display") });
    out.first = { error: first.error, stdout: first.stdout, seen: seen.join("") };
    const veto = (e) => e.detail.phase === "start" && e.preventDefault();
    c.addEventListener("run", veto);
    const second = await c.run();
    c.removeEventListener("run", veto);
    out.second = { type: second.error && second.error.type, checks, checkHidden: part(c, "check").hidden };
    c.remove();
    // 3. Reset interpreter while the element's run waits in input(): the run is stopped, and
    //    the reset goes on (it waited for the den's turn until someone answered).
    const d = make({ name: "m6-reset", controls: "" });
    await d.ready;
    await d.run("kept = 1");
    const asking = d.run("name = input('Name? ')");
    out.asked = await until(() => part(d, "status").textContent.includes("Name?"));
    part(d, "reset-button").click();
    const ended = await Promise.race([asking, tick(10000).then(() => null)]);
    out.resetRun = ended && ended.error && ended.error.type;
    out.resetDone = await until(() => part(d, "status").textContent.startsWith("New interpreter"), 15000);
    if (!out.resetDone) {
      // (Its run still holds the den: anything more would wait for it.)
      d.remove();
      return out;
    }
    out.afterReset = (await d.run("'kept' in globals()")).result;
    // 3b. Stop pressed with the focus on it (from the keyboard): when the run ends and Stop is
    //     disabled, the focus goes to Run, not to the page's body.
    const sleeping = d.run("import time\ntime.sleep(30)");
    await until(() => !part(d, "stop-button").disabled);
    part(d, "stop-button").focus();
    part(d, "stop-button").click();
    out.stopped = (await sleeping).error?.type;
    await tick(100);
    out.focusAfterStop = d.shadowRoot.activeElement && d.shadowRoot.activeElement.getAttribute("part");
    d.remove();
    // 4. A callback option that is not a function is refused (it made the run silently
    //    non-interactive); an on/off property takes booleans.
    const e = make({ name: "m6-opts" });
    await e.ready;
    out.badCallback = await e.run("1", { onInput: "x" }).then(() => "ran", (err) => `${err.name} ${err.code} ${err.option}`);
    out.nullCallback = (await e.run("2", { onOutput: null })).result;
    e.warmStart = false;
    e.standby = true;
    out.onOff = [e.getAttribute("warm-start"), e.getAttribute("standby"), e.warmStart];
    e.remove();
    return out;
  });
  assert.deepEqual(r.first, { error: null, stdout: "code says\n", seen: "code says\n" });
  assert.deepEqual(r.second, { type: "Stopped", checks: [true], checkHidden: true });
  assert.equal(r.asked, true, "the input line asked");
  assert.equal(r.resetRun, "KeyboardInterrupt");
  assert.equal(r.resetDone, true, "the reset was done");
  assert.equal(r.afterReset, "False");
  assert.equal(r.stopped, "KeyboardInterrupt");
  assert.equal(r.focusAfterStop, "run-button");
  assert.equal(r.badCallback, "DenError bad-option onInput");
  assert.equal(r.nullCallback, "2");
  assert.deepEqual(r.onOff, ["off", "on", "off"]);
});

test(`${B}: the setup scripts of a lazy lesson run in document order, whichever cell the reader needs first`, async () => {
  const r = await page.evaluate(async () => {
    const spacers = [];
    const cells = ["base = 10", null, "derived = base + 1"].map((setup) => {
      const spacer = document.createElement("div");
      spacer.style.height = "5000px";
      document.body.append(spacer);
      spacers.push(spacer);
      const el = document.createElement("foxden-den");
      el.setAttribute("env", "lazy-order");
      el.loading = "lazy";
      if (setup) el.innerHTML = `<script type="text/x-python" setup>${setup}<\/script>`;
      document.body.append(el);
      return el;
    });
    // The reader comes to the third cell first (a link to it): its setup needs the first's.
    const run = await cells[2].run("derived");
    const out = { result: run.result, error: run.error && `${run.error.type}: ${run.error.message}` };
    for (const el of cells) el.remove();
    for (const sp of spacers) sp.remove();
    return out;
  });
  assert.deepEqual(r, { result: "11", error: null });
});

test(`${B}: a run waiting for another cell's run says so, and Stop ends the wait`, async () => {
  const r = await page.evaluate(async () => {
    const make = window.makeLab;
    const { tick, until, part } = window.labKit;
    const a = make({ env: "queue-env", controls: "" });
    const b = make({ env: "queue-env", controls: "" }, [["", "print('b ran')"]]);
    await Promise.all([a.ready, b.ready]);
    const out = {};
    // A's run holds the den: it waits for an answer in A's input line.
    const holding = a.run("x = input('Name? ')");
    out.asked = await until(() => part(a, "status").textContent.includes("Name?"));
    // The reader presses B's Run: B waits, says so, and its Stop is on.
    part(b, "run-button").click();
    await tick(200);
    out.waiting = { status: part(b, "status").textContent, stopOff: part(b, "stop-button").disabled, runBusy: part(b, "run-button").getAttribute("aria-disabled") };
    part(b, "stop-button").click();
    out.stoppedStatus = await until(() => part(b, "status").textContent.startsWith("Stopped before it started"), 5000);
    out.afterStop = { stopOff: part(b, "stop-button").disabled, runBusy: part(b, "run-button").getAttribute("aria-disabled") };
    // run() waiting the same way rejects at stop().
    const queued = b.run("print('never')").then(() => "ran", (e) => `${e.name}: ${e.message}`);
    await tick(100);
    out.stopCall = await b.stop();
    out.queued = await Promise.race([queued, tick(5000).then(() => "still waiting")]);
    out.aStillAsks = part(a, "status").textContent.includes("Name?");
    a.stop();
    out.aEnded = (await holding).error?.type;
    out.bOutput = part(b, "output").textContent;
    a.remove();
    b.remove();
    return out;
  });
  assert.equal(r.asked, true);
  assert.deepEqual(r.waiting, { status: "Waiting for the run in progress to end…", stopOff: false, runBusy: "true" });
  assert.equal(r.stoppedStatus, true, "B's status after Stop");
  assert.deepEqual(r.afterStop, { stopOff: true, runBusy: "false" });
  assert.equal(r.stopCall, true);
  assert.match(r.queued, /^AbortError: the run was stopped before it started/);
  assert.equal(r.aStillAsks, true, "A's run was not stopped by B's Stop");
  assert.equal(r.aEnded, "KeyboardInterrupt");
  assert.equal(r.bOutput, "", "B's code never ran");
});

test(`${B}: no page errors`, async () => {
  await sleep(100);
  assert.deepEqual(errors, []);
});

test(`${B}: element lifecycle edges: a fresh ready on re-insertion, close() wins over a change in the same task, String() for reflected properties, bad early properties reported, no stale controls after a listener closes`, async () => {
  const r = await page.evaluate(async () => {
    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
    const part = (el, p) => el.shadowRoot.querySelector(`[part~="${p}"]`);
    const starts = [];
    const adapter = () => ({ start: ({ den }) => { starts.push(den); }, close() {}, run: () => ({ result: "1" }) });
    const make = (name, attrs = {}) => {
      const el = document.createElement("foxden-den");
      el.name = name;
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      el.runtime = adapter();
      return el;
    };
    const settled = (p) => Promise.race([p.then((i) => `resolved ${i.kind}`, (e) => `${e.name} ${e.code}`), sleep(5000).then(() => "not settled in 5 s")]);
    const nameFree = (name) => window.foxden.openDen({ name, runtime: { start() {}, close() {}, run: () => ({}) } }).then((d) => d.close().then(() => "free"), (e) => e.code);
    const host = document.querySelector("#a");
    const out = {};
    // 1. Re-inserted in a later task (its den closed meanwhile): a fresh ready, for the new den.
    const a = make("life-1");
    host.append(a);
    await a.ready;
    a.remove();
    await sleep(0);
    host.append(a);
    out.reinserted = await settled(a.ready);
    // Changed while away and re-inserted in the same task: a fresh ready too.
    const before = a.ready;
    a.remove();
    a.name = "life-1b";
    host.append(a);
    out.changedAwayFresh = a.ready !== before;
    out.changedAway = await settled(a.ready);
    out.oldNameFree = await nameFree("life-1");
    a.remove();
    // 3. close() after an insertion, or a change, in the same task: nothing opens; a later
    // change reopens.
    const c = make("life-3");
    host.append(c);
    c.close();
    await sleep(50);
    out.closeAfterInsert = await nameFree("life-3");
    const d = make("life-3a");
    host.append(d);
    await d.ready;
    d.name = "life-3b";
    d.close();
    await sleep(50);
    out.closeAfterChange = await nameFree("life-3b");
    d.name = "life-3c";
    out.reopened = await settled(d.ready);
    d.remove();
    c.remove();
    // 4. Reflected properties take any value as String() does, as the platform's do.
    const e4 = make("life-4");
    const thrown = [];
    for (const [p, v] of [["denUrl", new URL("/den/den.html", location.href)], ["timeout", 10n], ["pyodideUrl", { toString: () => "/pyodide/" }]]) {
      try { e4[p] = v; } catch (err) { thrown.push(`${p}: ${err.message}`); }
    }
    out.setters = { thrown, denUrl: e4.getAttribute("den-url"), timeout: e4.getAttribute("timeout"), pyodideUrl: e4.getAttribute("pyodide-url") };
    // 2. Properties set before the upgrade: a bad runtime is reported (error event, ready
    // rejects) instead of leaving the element dead; the other properties are still taken.
    const early = document.implementation.createHTMLDocument("").createElement("foxden-den");
    early.setAttribute("name", "life-2");
    early.runtime = { run() {} };
    early.denUrl = new URL("/den/den.html", location.href);
    const earlyErrors = [];
    early.addEventListener("error", (e) => earlyErrors.push(`${e.detail.error.name} ${e.detail.error.code}`));
    host.append(early);
    out.early = await settled(early.ready);
    out.earlyErrors = earlyErrors;
    out.earlyDenUrl = early.getAttribute("den-url");
    early.remove();
    // Not even an object: reported the same way (it once threw inside the module).
    const early2 = document.implementation.createHTMLDocument("").createElement("foxden-den");
    early2.setAttribute("name", "life-2b");
    early2.runtime = "iframe";
    host.append(early2);
    out.earlyPrimitive = await settled(early2.ready);
    early2.remove();
    // A failed element closed in the same task as a change that keeps its den's attributes
    // stays failed: a later change's ready rejects with the failure, not "closed".
    const fe = document.createElement("foxden-den");
    fe.name = "life-8";
    fe.runtime = { start() { throw new Error("no start"); }, close() {}, run: () => ({}) };
    host.append(fe);
    out.failed = await settled(fe.ready);
    fe.setAttribute("timeout", "5000");
    fe.close();
    await sleep(0);
    fe.setAttribute("timeout", "6000");
    out.failedLater = await settled(fe.ready);
    fe.remove();
    // 5, 6. A listener that closes the element: the controls say "Closed", nothing to stop.
    const f = make("life-5", { controls: "" });
    f.addEventListener("run", (e) => { if (e.detail.phase === "start") f.close(); });
    host.append(f);
    await f.ready;
    await f.run("1").catch(() => {});
    await sleep(50);
    out.closedInRun = { status: part(f, "status").textContent, stopDisabled: part(f, "stop-button").disabled, runDisabled: part(f, "run-button").disabled };
    f.remove();
    const g = make("life-6", { controls: "" });
    g.addEventListener("ready", () => g.close());
    host.append(g);
    await g.ready.catch(() => {});
    await sleep(50);
    out.closedInReady = { status: part(g, "status").textContent, runDisabled: part(g, "run-button").disabled };
    g.remove();
    // 7. A waiting lazy element whose attributes become invalid: nothing to run.
    const h = make("life-7", { controls: "", loading: "lazy" });
    h.style.cssText = "display:block;margin-top:5000px";
    host.append(h);
    await sleep(50);
    out.lazyRunBefore = part(h, "run-button").disabled;
    h.setAttribute("timeout", "x");
    await sleep(50);
    out.lazyRunInvalid = part(h, "run-button").disabled;
    h.remove();
    out.starts = starts;
    return out;
  });
  assert.equal(r.reinserted, "resolved adapter");
  assert.equal(r.changedAwayFresh, true);
  assert.equal(r.changedAway, "resolved adapter");
  assert.equal(r.oldNameFree, "free");
  assert.equal(r.closeAfterInsert, "free");
  assert.equal(r.closeAfterChange, "free");
  assert.equal(r.reopened, "resolved adapter");
  assert.deepEqual(r.setters, { thrown: [], denUrl: r.setters.denUrl, timeout: "10", pyodideUrl: "/pyodide/" });
  assert.match(r.setters.denUrl, /^http:\/\/127\.0\.0\.1:\d+\/den\/den\.html$/);
  assert.equal(r.early, "DenError bad-option");
  assert.deepEqual(r.earlyErrors, ["DenError bad-option"]);
  assert.match(r.earlyDenUrl, /\/den\/den\.html$/);
  assert.equal(r.earlyPrimitive, "DenError bad-option");
  assert.match(r.failed, /^DenLoadError/);
  assert.equal(r.failedLater, r.failed);
  assert.deepEqual(r.closedInRun, { status: "Closed", stopDisabled: true, runDisabled: true });
  assert.deepEqual(r.closedInReady, { status: "Closed", runDisabled: true });
  assert.equal(r.lazyRunBefore, false);
  assert.equal(r.lazyRunInvalid, true);
  assert.deepEqual(r.starts, ["life-1", "life-1", "life-1b", "life-3a", "life-3c", "life-5", "life-6"]);
});
