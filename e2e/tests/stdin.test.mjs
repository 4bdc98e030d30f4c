// input() and sys.stdin: scripted per run with run(code, { stdin }) (issue 12, part 2).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER } from "../lib.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser));
  await openQuickDen(page, "stdin");
});
after(async () => ctx?.close());

const run = (code, opts) => page.evaluate((code, opts) => window.dens.stdin.run(code, opts), code, opts || {});

test(`${BROWSER}: input() reads scripted stdin line by line, then EOF`, async () => {
  const r = await run("a = int(input('a? '))\nb = int(input('b? '))\nprint(a * b)\ntry:\n    input()\nexcept EOFError:\n    print('eof')", { stdin: "3\n4\n" });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stdout, "a? b? 12\neof\n");
  // sys.stdin works as a file; the last line needs no newline.
  const all = await run("import sys\n[l.strip() for l in sys.stdin]", { stdin: "x\ny\nz" });
  assert.equal(all.result, "['x', 'y', 'z']");
  const utf = await run("input()", { stdin: "héllo 🦊\n" });
  assert.equal(utf.result, "'héllo 🦊'");
});

test(`${BROWSER}: stdin is per run: what one run leaves unread never reaches the next, and a run without stdin gets a clear EOFError`, async () => {
  const first = await run("input()", { stdin: "one\ntwo\n" });
  assert.equal(first.result, "'one'");
  const second = await run("input()");
  assert.equal(second.error?.type, "EOFError");
  assert.match(second.error.message, /this run has no stdin: pass it with den\.run\(code, \{ stdin: '3\\n4\\n' \}\)/);
  // The den keeps working, variables kept.
  const third = await run("x = 5\nx + int(input())", { stdin: "1\n" });
  assert.equal(third.result, "6");
  assert.equal((await run("x")).result, "5");
});

test(`${BROWSER}: bad stdin options are refused before the run`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.stdin;
    const out = [];
    for (const stdin of [42, new Uint8Array(2), "x".repeat(16 * 1024 * 1024 + 1)]) {
      try {
        await den.run("1", { stdin });
        out.push("ran");
      } catch (e) {
        out.push(`${e.name}:${e.code}:${e.option}`);
      }
    }
    return out;
  });
  assert.deepEqual(r, Array(3).fill("DenError:bad-option:stdin"));
});

test(`${BROWSER}: sys.stdin is a text file as a terminal's: sys.stdin.buffer reads bytes, and \\r\\n reads as \\n`, async () => {
  const r = await run("import sys\nfirst = sys.stdin.buffer.readline().split()\nsecond = input()\n(first, second)", { stdin: "3 4\r\nyes\r\nz é\n" });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "([b'3', b'4'], 'yes')");
  const all = await run("import sys\nsys.stdin.buffer.read().split()", { stdin: "1 2\nz é\n" });
  assert.equal(all.result, "[b'1', b'2', b'z', b'\\xc3\\xa9']");
  const none = await run("import sys\nsys.stdin.buffer.readline()");
  assert.equal(none.error?.type, "EOFError");
  assert.match(none.error.message, /this run has no stdin/);
});
