// Interactive input() (issue 12, part 2): on a cross-origin isolated den, input() blocks the
// worker on a SharedArrayBuffer and the host answers through onInput or the element's `input`
// event; the run's timeout (and the host's watchdog) stop while a person types. Without
// isolation, input() says how to enable it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, COI_BASE } from "../lib.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser, "/e2e/index.html", COI_BASE));
  const info = await openQuickDen(page, "ask");
  assert.equal(info.interruptible, true, "the den must be cross-origin isolated");
});
after(async () => ctx?.close());

/** Runs `code` with an onInput that answers from `answers` (after `delayMs`), recording requests. */
const ask = (code, answers, opts = {}) =>
  page.evaluate(
    async (code, answers, opts) => {
      const asked = [];
      const r = await window.dens.ask.run(code, {
        timeoutMs: opts.timeoutMs,
        onInput: async (req) => {
          asked.push(req);
          if (opts.delayMs) await new Promise((res) => setTimeout(res, opts.delayMs));
          const a = answers.shift();
          if (a === "__throw__") throw new Error("no keyboard");
          if (a === "__number__") return 42;
          return a === undefined ? null : a;
        },
      });
      return { ...r, asked };
    },
    code,
    answers,
    opts,
  );

test(`${BROWSER}: input() asks onInput; the prompt is printed and the answer echoed like a terminal`, async () => {
  const r = await ask("name = input('name? ')\nn = int(input('n? '))\nprint(name * n)\nn", ["ada", "3"]);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stdout, "name? ada\nn? 3\nadaadaada\n");
  assert.equal(r.result, "3");
  assert.deepEqual(r.asked.map((q) => q.prompt), ["name? ", "n? "]);
  assert.equal(typeof r.asked[0].runId, "number");
  // Variables persist as always; the answer is plain text (UTF-8 kept).
  const utf = await ask("input()", ["héllo 🦊"]);
  assert.equal(utf.result, "'héllo 🦊'");
});

test(`${BROWSER}: the time spent waiting for an answer does not count against the timeout or the host's watchdog`, async () => {
  // timeoutMs 500, answered after 4.5 s: past both the den page's timer and the host's watchdog
  // (timeout + 3 s grace) had they kept counting.
  const r = await ask("a = input('slow? ')\na * 2", ["x"], { timeoutMs: 500, delayMs: 4500 });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "'xx'");
  assert.equal(r.restarted, false);
  // Python's own time still counts: a loop after the answer is stopped by the timeout.
  const t = await ask("input()\nwhile True: pass", ["go"], { timeoutMs: 600 });
  assert.equal(t.error?.kind, "timeout");
  // A run that made a worker of its own (which goes on computing meanwhile): the wait counts
  // at a tenth, as without isolation (4.5 s: 450 ms of a 300 ms timeout).
  const w = await ask("import js\njs.eval(\"globalThis.w = new Worker(URL.createObjectURL(new Blob(['let n = 0; for (;;) n++'])))\")\ninput('answer whenever: ')", ["x"], { timeoutMs: 300, delayMs: 4500 });
  assert.equal(w.error?.kind, "timeout", JSON.stringify(w.error));
});

test(`${BROWSER}: end of input, a failing or wrong handler, and multi-line answers`, async () => {
  const eof = await ask("try:\n    input('x? ')\nexcept EOFError as e:\n    print('eof', e)", []);
  assert.equal(eof.error, null);
  assert.match(eof.stdout, /^x\? eof EOF when reading a line\n$/);
  const threw = await ask("input()", ["__throw__"]);
  assert.equal(threw.error?.type, "EOFError");
  assert.match(threw.error.message, /onInput failed: .*no keyboard/);
  const wrong = await ask("input()", ["__number__"]);
  assert.equal(wrong.error?.type, "EOFError");
  assert.match(wrong.error.message, /onInput must give a string \(or null for end of input\), not a number/);
  // sys.stdin reads every line asked for until end of input; a pasted answer with newlines is
  // read line by line.
  const all = await ask("import sys\nsys.stdin.read()", ["a\nb", "c"]);
  assert.equal(all.result, "'a\\nb\\nc\\n'");
  assert.equal(all.asked.length, 3);
  // Scripted stdin still wins: onInput is not asked.
  const scripted = await page.evaluate(async () => {
    let asked = 0;
    const r = await window.dens.ask.run("input()", { stdin: "given\n", onInput: () => { asked++; return "typed"; } });
    return { result: r.result, asked };
  });
  assert.deepEqual(scripted, { result: "'given'", asked: 0 });
  // The den keeps working.
  assert.equal((await ask("1 + 1", [])).result, "2");
});

test(`${BROWSER}: the element asks through a cancelable input event; unanswered means EOFError`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeElement({ name: "ask-el" });
    await el.ready;
    const prompts = [];
    // 1. answered during the event
    const now = (e) => { prompts.push(e.detail.prompt); e.detail.respond("now"); };
    el.addEventListener("input", now);
    const a = await el.run("input('first? ')");
    el.removeEventListener("input", now);
    // 2. deferred with preventDefault, answered later; a stale respond does nothing
    let stale = null;
    const later = (e) => {
      e.preventDefault();
      prompts.push(e.detail.prompt);
      if (stale) stale("stale answer");
      stale = e.detail.respond;
      setTimeout(() => e.detail.respond("later"), 300);
    };
    el.addEventListener("input", later);
    const b = await el.run("input('second? ') + input('third? ')");
    el.removeEventListener("input", later);
    // 3. nobody answers
    const c = await el.run("input('nobody? ')");
    const after = await el.run("'still' + ' here'");
    el.remove();
    return { a: a.result, b: b.result, c: c.error, prompts, after: after.result };
  });
  assert.equal(r.a, "'now'");
  assert.equal(r.b, "'laterlater'");
  assert.deepEqual(r.prompts, ["first? ", "second? ", "third? "]);
  assert.equal(r.c?.type, "EOFError");
  assert.match(r.c.message, /nobody answered input\(\)/);
  assert.equal(r.after, "'still here'");
});

test(`${BROWSER}: with controls and no listener, the input line asks the reader; Enter answers`, async () => {
  await page.evaluate(async () => {
    const el = window.makeElement({ name: "ask-ui", controls: "", readonly: "" }, "name = input('Your name? ')\nprint('hi', name)");
    await el.ready;
    window.uiRun = el.run();
  });
  // The status line shows the prompt and the input line has the focus.
  await page.waitForFunction(() => {
    const root = document.querySelector('foxden-den[name="ask-ui"]').shadowRoot;
    return root.getElementById("status").textContent.includes("Your name?") && root.activeElement === root.getElementById("stdin");
  }, { timeout: 20000 });
  const label = await page.evaluate(() => document.querySelector('foxden-den[name="ask-ui"]').shadowRoot.getElementById("stdin").getAttribute("aria-label"));
  assert.equal(label, "Answer to: Your name?");
  await page.keyboard.type("Ada");
  await page.keyboard.press("Enter");
  const r = await page.evaluate(async () => {
    const run = await window.uiRun;
    const root = document.querySelector('foxden-den[name="ask-ui"]').shadowRoot;
    const out = { stdout: run.stdout, error: run.error, line: root.getElementById("stdin").value, output: root.getElementById("output").textContent };
    document.querySelector('foxden-den[name="ask-ui"]').remove();
    return out;
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stdout, "Your name? Ada\nhi Ada\n");
  assert.equal(r.line, "", "the line is cleared after answering");
  assert.match(r.output, /hi Ada/);
});

test(`${BROWSER}: input() does not take the focus from a field elsewhere on the page`, async () => {
  await page.evaluate(async () => {
    const field = document.createElement("input");
    field.id = "elsewhere";
    document.body.prepend(field);
    const el = window.makeElement({ name: "ask-focus", controls: "", readonly: "" }, "name = input('Name? ')\nprint('hi', name)");
    await el.ready;
    field.focus();
    window.uiRun2 = el.run();
  });
  await page.waitForFunction(() => document.querySelector('foxden-den[name="ask-focus"]').shadowRoot.getElementById("status").textContent.includes("Name?"), { timeout: 20000 });
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.id), "elsewhere");
  // What the reader types there stays there (Enter included), not sent to the sandbox.
  await page.keyboard.type("typed elsewhere");
  await page.keyboard.press("Enter");
  // The reader answers in the element's line.
  await page.evaluate(() => document.querySelector('foxden-den[name="ask-focus"]').shadowRoot.getElementById("stdin").focus());
  await page.keyboard.type("Ada");
  await page.keyboard.press("Enter");
  const r = await page.evaluate(async () => {
    const run = await window.uiRun2;
    const out = { stdout: run.stdout, field: document.getElementById("elsewhere").value };
    document.querySelector('foxden-den[name="ask-focus"]').remove();
    document.getElementById("elsewhere").remove();
    return out;
  });
  assert.equal(r.stdout, "Name? Ada\nhi Ada\n");
  assert.equal(r.field, "typed elsewhere");
});

test(`${BROWSER}: without cross-origin isolation, input() waits for onInput through JSPI: the clock stops, variables are kept`, async () => {
  const { page: plain } = await openPage(ctx.browser);
  const info = await openQuickDen(plain, "plain");
  assert.equal(info.interruptible, false);
  const r = await plain.evaluate(async () => {
    const den = window.dens.plain;
    const asked = [];
    const answers = ["6", "7"];
    const slow = await den.run("x = int(input('a? '))\ny = int(input('b? '))\nx * y", {
      // Each answer takes 1 s: 2 s of waiting, more than the run's timeout.
      timeoutMs: 1500,
      onInput: async (req) => {
        asked.push(req.prompt);
        await new Promise((res) => setTimeout(res, 1000));
        return answers.shift();
      },
    });
    const kept = await den.run("x + y");
    const eof = await den.run("try:\n    input('c? ')\nexcept EOFError as e:\n    print('eof', e)", { onInput: () => null });
    const failed = await den.run("input('d? ')", { onInput: () => { throw new Error("no keyboard"); } });
    const awaiting = await den.run("import asyncio\nawait asyncio.sleep(0)\ninput('e? ')", { onInput: () => "from async" });
    const none = await den.run("input('f? ')");
    return {
      slow: { result: slow.result, stdout: slow.stdout, error: slow.error, restarted: slow.restarted },
      asked,
      kept: kept.result,
      eof: eof.stdout,
      failed: failed.error,
      awaiting: { result: awaiting.result, error: awaiting.error },
      none: none.error,
    };
  });
  assert.deepEqual(r.slow, { result: "42", stdout: "a? 6\nb? 7\n", error: null, restarted: false });
  assert.deepEqual(r.asked, ["a? ", "b? "]);
  assert.equal(r.kept, "13");
  assert.equal(r.eof, "c? eof EOF when reading a line\n");
  assert.equal(r.failed?.type, "EOFError");
  assert.match(r.failed.message, /no keyboard/);
  // Code with top-level await runs on asyncio's loop, whose tasks Pyodide runs with stack
  // switching too.
  assert.deepEqual(r.awaiting, { result: "'from async'", error: null });
  assert.equal(r.none?.type, "EOFError");
  assert.match(r.none.message, /this run has no stdin/);
  await plain.close();
});

test(`${BROWSER}: stopping a run while input() waits raises KeyboardInterrupt there and keeps variables, with or without isolation; a JSPI wait that times out does too`, async () => {
  const { page: plain } = await openPage(ctx.browser);
  await openQuickDen(plain, "plain3");
  // Runs in the page: stops a run once its question is asked (the answer never comes).
  const check = (p, name) =>
    p.evaluate(async (name) => {
      const den = window.dens[name];
      const never = () => new Promise(() => {});
      const stopWhileAsking = async (code) => {
        let asked;
        const waiting = new Promise((res) => (asked = res));
        const running = den.run(code, { onInput: () => (asked(), never()) });
        await waiting;
        const t0 = performance.now();
        const stopped = await den.stop();
        const r = await running;
        return { stopped, type: r.error && r.error.type, kind: r.error && r.error.kind, restarted: r.restarted, stdout: r.stdout, ms: performance.now() - t0 };
      };
      await den.run("kept = 'yes'");
      const soft = await stopWhileAsking("try:\n    input('q? ')\nexcept KeyboardInterrupt:\n    print('interrupted')\n    raise");
      const after = (await den.run("kept")).result;
      // Code that swallows the interrupt and goes on is restarted after the grace.
      const hard = await stopWhileAsking("try:\n    input('q? ')\nexcept KeyboardInterrupt:\n    pass\nwhile True: pass");
      const gone = (await den.run("'kept' in globals()")).result;
      return { soft, after, hard, gone };
    }, name);
  for (const [p, name] of [[page, "ask"], [plain, "plain3"]]) {
    const r = await check(p, name);
    assert.deepEqual(
      { ...r.soft, ms: undefined },
      { stopped: true, type: "KeyboardInterrupt", kind: "python", restarted: false, stdout: "q? interrupted\n", ms: undefined },
      `${name}: ${JSON.stringify(r.soft)}`,
    );
    assert.ok(r.soft.ms < 900, `${name}: the stopped run ended ${r.soft.ms} ms after stop()`);
    assert.equal(r.after, "'yes'", name);
    assert.deepEqual({ type: r.hard.type, kind: r.hard.kind, restarted: r.hard.restarted }, { type: "Stopped", kind: "crashed", restarted: true }, name);
    assert.equal(r.gone, "False", name);
  }
  // Without isolation the wait counts at a tenth: a 300 ms timeout ends it after about 3 s,
  // through input()'s KeyboardInterrupt, so the variables are kept.
  const t = await plain.evaluate(async () => {
    const den = window.dens.plain3;
    const r = await den.run("v = 7\ninput('q? ')", { timeoutMs: 300, onInput: () => new Promise(() => {}) });
    const v = (await den.run("v")).result;
    return { kind: r.error && r.error.kind, message: r.error && r.error.message, restarted: r.restarted, v };
  });
  assert.equal(t.kind, "timeout", JSON.stringify(t));
  assert.match(t.message, /interrupted \(KeyboardInterrupt\); Python variables were kept/);
  assert.equal(t.restarted, false);
  assert.equal(t.v, "7");
  await plain.close();
});

test(`${BROWSER}: without isolation, code that asks without waiting, or works in JavaScript while input() waits, cannot stop its clock`, async () => {
  const { page: plain } = await openPage(ctx.browser);
  await openQuickDen(plain, "plain2");
  const r = await plain.evaluate(async () => {
    const den = window.dens.plain2;
    // The answers never come (a person who went away). Asking without waiting, then working
    // silently: while a question is open without isolation the clock runs at a tenth, so the
    // run's 1 s timeout ends it after 10 s.
    const t1 = performance.now();
    const asker = await den.run(
      "ask = __import__('__main__').__dict__['_foxden_ask_input']\nask('q? ')\nn = 0\nwhile True:\n    n += 1",
      { timeoutMs: 1000, onInput: () => new Promise(() => {}) },
    );
    const askerMs = performance.now() - t1;
    // Printing (here from a JS timer while input() waits) shows the worker is not waiting:
    // the clock runs in full again.
    const t2 = performance.now();
    const timer = await den.run(
      "import js\nfrom pyodide.ffi import create_proxy\ndef tick():\n    print('tick')\njs.setInterval(create_proxy(tick), 50)\ninput('q? ')",
      { timeoutMs: 1000, onInput: () => new Promise(() => {}) },
    );
    return { asker: asker.error, askerMs, timer: timer.error, timerMs: performance.now() - t2 };
  });
  assert.equal(r.asker?.kind, "timeout", JSON.stringify(r.asker));
  assert.ok(r.askerMs > 5000 && r.askerMs < 25000, `the silent asker ran ${r.askerMs} ms`);
  assert.equal(r.timer?.kind, "timeout", JSON.stringify(r.timer));
  assert.ok(r.timerMs < 8000, `the printing run ran ${r.timerMs} ms`);
  await plain.close();
});

test(`${BROWSER}: a timeout's interrupt left unread (the run was awaiting) does not reach the next interpreter`, async () => {
  // With a standby (swapped in at the kill, then a new one boots) and without (the next run
  // boots one): either way the next interpreter boots and runs. Each worker has its own signal.
  for (const [name, runtime] of [["sig", {}], ["sig-nostandby", { standby: false }]]) {
    await openQuickDen(page, name, { runtime });
    const r = await page.evaluate(async (name) => {
      const den = window.dens[name];
      const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
      await den.run("x = 1");
      await sleep(5000); // the standby (if any) boots
      const t = await den.run("import asyncio\nawait asyncio.sleep(30)", { timeoutMs: 500 });
      await sleep(4000); // the next standby boots
      const reset = await den.reset().then((x) => x.from, (e) => `${e.code}: ${e.message}`);
      const next = await den.run("1 + 1");
      await den.close();
      return { timeout: t.error && t.error.kind, restarted: t.restarted, reset, next: next.result, nextError: next.error };
    }, name);
    assert.equal(r.timeout, "timeout", `${name}: ${JSON.stringify(r)}`);
    assert.equal(r.restarted, true, `${name}: an awaiting run is killed after the grace`);
    assert.match(r.reset, /^(snapshot|scratch)$/, `${name}: reset failed: ${r.reset}`);
    assert.equal(r.next, "2", `${name}: ${JSON.stringify(r.nextError)}`);
  }
});

test(`${BROWSER}: a timeout landing while the run's leftover JS winds down is still a timeout, worded by what was kept`, async () => {
  await openQuickDen(page, "grace", { den: { killGraceMs: 2000 } });
  const r = await page.evaluate(async () => {
    const den = window.dens.grace;
    await den.run("kept = 41");
    // The code ends at once; a JS timer keeps the worker in its grace period when the timeout comes.
    const t = await den.run("from pyodide.code import run_js\nrun_js('setTimeout(() => {}, 1000)')", { timeoutMs: 300 });
    const after = await den.run("kept + 1");
    await den.close();
    return { kind: t.error && t.error.kind, message: t.error && t.error.message, restarted: t.restarted, after: after.result, afterError: after.error };
  });
  assert.equal(r.kind, "timeout", JSON.stringify(r));
  if (r.restarted) assert.doesNotMatch(r.message, /variables were kept/);
  else {
    assert.match(r.message, /variables were kept/);
    assert.equal(r.after, "42", JSON.stringify(r.afterError));
  }
});

test(`${BROWSER}: the input line's request ends with its controls, its element or its run; the line is stdin only for Python runs without their own`, async () => {
  const r = await page.evaluate(async () => {
    const rootOf = (el) => el.shadowRoot;
    const asking = (el, what) =>
      new Promise((res, rej) => {
        const t0 = Date.now();
        const poll = () => {
          const s = rootOf(el)?.getElementById("status")?.textContent ?? "";
          if (s.includes(what)) res();
          else if (Date.now() - t0 > 20000) rej(new Error(`never asked ${what}: ${s}`));
          else setTimeout(poll, 50);
        };
        poll();
      });
    const out = {};
    // 1. The controls go away while their line asks: the run gets end of input, saying why,
    //    and the den takes the next run (it used to wait for good: its clock stops meanwhile).
    const a = window.makeElement({ name: "ask-gone", controls: "", readonly: "" }, "x = input('q1? ')");
    await a.ready;
    const pa = a.run();
    await asking(a, "q1?");
    a.controls = false;
    const ra = await pa;
    out.gone = ra.error && { type: ra.error.type, message: ra.error.message };
    out.after = (await a.run("1 + 1")).result;
    a.remove();
    // 2. A shared environment: the asking element leaves; the other one's runs go on.
    const b1 = window.makeElement({ env: "ask-env", controls: "", readonly: "" }, "y = input('q2? ')");
    const b2 = window.makeElement({ env: "ask-env" });
    await Promise.all([b1.ready, b2.ready]);
    const pb = b1.run();
    await asking(b1, "q2?");
    b1.remove();
    await pb.catch(() => null);
    out.shared = (await Promise.race([b2.run("2 + 2"), new Promise((res) => setTimeout(() => res({ result: "stuck" }), 15000))])).result;
    b2.remove();
    // 3. Stop while the line asks: the line stops naming the prompt.
    const c = window.makeElement({ name: "ask-stop", controls: "", readonly: "" }, "z = input('q3? ')");
    await c.ready;
    const pc = c.run();
    await asking(c, "q3?");
    out.labelWhileAsking = rootOf(c).getElementById("stdin").getAttribute("aria-label");
    rootOf(c).getElementById("stop").click();
    await pc;
    out.labelAfter = rootOf(c).getElementById("stdin").getAttribute("aria-label");
    // 4. Text in the line is the stdin of Python runs only: a JavaScript run works, a run with
    //    its own onInput is asked, and a setup script gets end of input.
    rootOf(c).getElementById("stdin").value = "typed";
    const js = await c.run("console.log('js ok')", { lang: "javascript" });
    out.js = js.error ? js.error.message : js.stdout;
    out.line = (await c.run("input()")).result;
    let asked = 0;
    out.own = (await c.run("input()", { onInput: () => { asked++; return "own"; } })).result;
    out.asked = asked;
    c.remove();
    const d = window.makeElement({ name: "ask-setup", controls: "", readonly: "" }, "S");
    const setup = document.createElement("script");
    setup.type = "text/x-python";
    setup.setAttribute("setup", "");
    setup.textContent = "import sys\nS = sys.stdin.read()";
    d.append(setup);
    await d.ready;
    rootOf(d).getElementById("stdin").value = "typed";
    out.setupRead = (await d.run()).result;
    d.remove();
    return out;
  });
  assert.equal(r.gone?.type, "EOFError", JSON.stringify(r.gone));
  assert.match(r.gone.message, /controls that asked for input\(\) were removed/);
  assert.equal(r.after, "2");
  assert.equal(r.shared, "4", "the other element of the environment is not stuck");
  assert.equal(r.labelWhileAsking, "Answer to: q3?");
  assert.equal(r.labelAfter, null);
  assert.equal(r.js, "js ok\n");
  assert.equal(r.line, "'typed'");
  assert.deepEqual([r.own, r.asked], ["'own'", 1]);
  assert.equal(r.setupRead, "''", "a setup script gets end of input, not the line");
});

test(`${BROWSER}: code that patches Atomics cannot make input() return at once and keep the run's clock stopped`, async () => {
  const t0 = Date.now();
  const r = await ask(
    "import js\nfrom pyodide.ffi import create_proxy\njs.Atomics.wait = create_proxy(lambda *a: 'timed-out')\njs.Atomics.load = create_proxy(lambda *a: 1)\nn = 0\nwhile True:\n    n += 1\n    try:\n        input()\n    except EOFError:\n        pass",
    [],
    { timeoutMs: 1000 },
  );
  assert.equal(r.error?.kind, "timeout", JSON.stringify(r.error));
  assert.ok(Date.now() - t0 < 20000, `took ${Date.now() - t0} ms`);
});
