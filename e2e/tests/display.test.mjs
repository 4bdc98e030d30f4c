// Rich display (issue 12, part 3): foxden.display(obj) and _repr_*_ on the last expression,
// streamed in order with the output, collected in run.displays, and shown by the element
// without running any of it in the host page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launch, openPage, openQuickDen, BROWSER, marker, readLog, sleep } from "../lib.mjs";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser));
  await openQuickDen(page, "disp");
});
after(async () => ctx?.close());

// A 4x3 RGB PNG made with zlib + struct only.
const PNG_PY = `
import struct, zlib
def png(w, h, rgb):
    raw = b"".join(b"\\x00" + bytes(rgb) * w for _ in range(h))
    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
class Swatch:
    def __init__(self, rgb): self.rgb = rgb
    def _repr_png_(self): return png(4, 3, self.rgb)
    def __repr__(self): return "Swatch(%r)" % (self.rgb,)
class Table:
    def _repr_html_(self): return "<table><tr><th>x</th><th>x²</th></tr>" + "".join("<tr><td>%d</td><td>%d</td></tr>" % (i, i * i) for i in range(4)) + "</table>"
    def __repr__(self): return "Table()"
`;

const sig = (bytes) => Array.from(bytes.slice(0, 8));

test(`${BROWSER}: displays come in order with the output, from foxden.display and the last expression's _repr_*_`, async () => {
  const r = await page.evaluate(async (setup) => {
    const den = window.dens.disp;
    await den.run(setup);
    const seen = [];
    const run = await den.run(
      "import foxden\nprint('before')\nfoxden.display(Swatch((200, 30, 30)))\nprint('between')\n" +
        "foxden.display('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20\" height=\"20\"><circle cx=\"10\" cy=\"10\" r=\"8\" fill=\"teal\"/></svg>', mime='image/svg+xml')\n" +
        "print('after')\nTable()",
      {
        onOutput: (c) => seen.push(`out:${c.text.trim()}`),
        onDisplay: (c) => seen.push(`display:${Object.keys(c.data).join("+")}`),
      },
    );
    const plain = await den.run("1 + 1");
    const swatch = await den.run("Swatch((0, 0, 255))");
    return {
      seen,
      error: run.error,
      result: run.result,
      displays: run.displays.map((d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v instanceof Uint8Array ? { bytes: Array.from(v.slice(0, 8)), length: v.length } : v]))),
      plain: plain.displays.length,
      swatch: { result: swatch.result, n: swatch.displays.length, isBytes: swatch.displays[0]["image/png"] instanceof Uint8Array },
    };
  }, PNG_PY);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(r.seen, ["out:before", "display:image/png+text/plain", "out:between", "display:image/svg+xml+text/plain", "out:after", "display:text/html+text/plain"]);
  assert.equal(r.displays.length, 3);
  assert.deepEqual(r.displays[0]["image/png"].bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(r.displays[0]["text/plain"], "Swatch((200, 30, 30))");
  assert.match(r.displays[1]["image/svg+xml"], /<circle/);
  assert.match(r.displays[2]["text/html"], /<td>3<\/td><td>9<\/td>/);
  assert.equal(r.result, "Table()");
  assert.equal(r.plain, 0, "a plain value is not displayed");
  assert.deepEqual(r.swatch, { result: "Swatch((0, 0, 255))", n: 1, isBytes: true });
});

test(`${BROWSER}: bad displays get a clear error and the den keeps working`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.disp;
    const js = await den.run("import foxden\nfoxden.display('alert(1)', mime='application/javascript')");
    const huge = await den.run("import foxden\nfoxden.display(b'x' * (17 * 1024 * 1024), mime='image/png')");
    // A broken _repr_ on the last expression does not fail the run.
    const broken = await den.run("class B:\n    def _repr_html_(self): raise RuntimeError('no')\n    def __repr__(self): return 'B()'\nB()");
    const after = await den.run("6 * 7");
    return { js: js.error, huge: huge.error, hugeDisplays: huge.displays.length, broken: { error: broken.error, result: broken.result, n: broken.displays.length }, after: after.result };
  });
  assert.equal(r.js?.type, "ValueError");
  assert.match(r.js.message, /'application\/javascript' is not a type a den shows/);
  assert.equal(r.huge?.type, "ValueError");
  assert.match(r.huge.message, /would take the run's displays over 16777216 bytes/);
  assert.equal(r.hugeDisplays, 0);
  assert.deepEqual(r.broken, { error: null, result: "B()", n: 1 });
  assert.equal(r.after, "42");
});

test(`${BROWSER}: a run shows at most 1000 displays (empty ones cost no bytes but would each be an element of the page)`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.disp;
    const out = await den.run(`
import foxden
class E:
    def _repr_html_(self): return ""
    def __repr__(self): return ""
e = E()
n = 0
try:
    while n < 5000:
        foxden.display(e)
        n += 1
except ValueError as err:
    why = str(err)
(n, why)`);
    const after = await den.run("6 * 7");
    return { error: out.error, result: out.result, n: out.displays.length, after: after.result };
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.match(r.result, /^\(1000, 'foxden.display: this run already showed 1000 displays; it was not shown'\)$/);
  assert.equal(r.n, 1000);
  assert.equal(r.after, "42");
});

test(`${BROWSER}: a display of small views into a huge buffer reaches the host as the views' bytes only`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.disp;
    // What the den page posts to this page: each display item's bytes and the buffer under them.
    const seen = [];
    const watch = (e) => {
      if (e.data && e.data.t === "display" && Array.isArray(e.data.bundle)) {
        for (const item of e.data.bundle) if (item.bytes) seen.push([item.bytes.length, item.bytes.buffer.byteLength]);
      }
    };
    window.addEventListener("message", watch);
    const run = await den.run(`
from pyodide.code import run_js
import __main__
o = run_js("({toJs(){const b=new ArrayBuffer(64<<20); new Uint8Array(b).fill(137); return Array.from({length:16},(_,i)=>['image/png',new Uint8Array(b,i,1)])}})")
for i in range(3): __main__._foxden_post_display(o)
`);
    window.removeEventListener("message", watch);
    return { error: run.error, displays: run.displays.length, first: run.displays[0] && Array.from(run.displays[0].data || run.displays[0].bytes || []), seen };
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.seen.length, 48, "16 items in each of 3 displays");
  for (const [len, buf] of r.seen) assert.deepEqual([len, buf], [1, 1], "a view's whole buffer was posted");
  assert.equal(r.displays, 3);
});

test(`${BROWSER}: the element shows displays, and hostile SVG and HTML run nothing in the host page`, async () => {
  const r = await page.evaluate(async (setup) => {
    window.pwned = [];
    const el = window.makeElement({ name: "disp-el", controls: "" });
    await el.ready;
    await el.run(setup);
    const hostile =
      "import foxden\n" +
      "foxden.display('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"20\" height=\"20\" onload=\"parent.pwned.push(1)\"><script>parent.pwned.push(2)</script><rect width=\"20\" height=\"20\" fill=\"orange\"/></svg>', mime='image/svg+xml')\n" +
      "foxden.display('<b>bold</b><script>parent.pwned.push(3)</script><img src=x onerror=\"parent.pwned.push(4)\">', mime='text/html')\n" +
      "foxden.display('# Title <img src=x onerror=\"parent.pwned.push(5)\">', mime='text/markdown')\n" +
      "foxden.display(Swatch((10, 160, 60)))\nTable()";
    const run = await el.run(hostile);
    await new Promise((res) => setTimeout(res, 500));
    const out = el.shadowRoot.querySelector("[part=output]");
    const imgs = [...out.querySelectorAll("img")];
    const frames = [...out.querySelectorAll("iframe")];
    const loaded = await Promise.all(imgs.map((i) => (i.complete ? Promise.resolve(i.naturalWidth) : new Promise((res) => { i.onload = () => res(i.naturalWidth); i.onerror = () => res(-1); }))));
    return {
      error: run.error,
      pwned: window.pwned,
      imgs: imgs.map((i) => ({ src: i.src.slice(0, 5), part: i.getAttribute("part"), alt: i.alt })),
      widths: loaded,
      frames: frames.map((f) => ({ sandbox: f.getAttribute("sandbox"), part: f.getAttribute("part"), title: f.title })),
      text: out.textContent,
      scriptsInShadow: out.querySelectorAll("script").length,
    };
  }, PNG_PY);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(r.pwned, [], "no display ran script in the host page");
  assert.equal(r.scriptsInShadow, 0);
  assert.equal(r.imgs.length, 2);
  // The SVG from a data: URL (opened on its own it has an opaque origin), the PNG from a blob: URL.
  assert.deepEqual(r.imgs.map((i) => [i.src, i.part]), [["data:", "display-image"], ["blob:", "display-image"]]);
  assert.deepEqual(r.widths, [20, 4]);
  assert.equal(r.frames.length, 2);
  assert.ok(r.frames.every((f) => f.sandbox === "" && f.part === "display-html"), JSON.stringify(r.frames));
  assert.match(r.text, /# Title <img src=x onerror/);
  const dir = process.env.FOXDEN_ARTIFACTS;
  if (dir) {
    fs.mkdirSync(dir, { recursive: true });
    const el = await page.$("foxden-den[name=disp-el]");
    await el.screenshot({ path: path.join(dir, `display-${BROWSER}.png`) });
    assert.ok(fs.statSync(path.join(dir, `display-${BROWSER}.png`)).size > 1000);
  }
});

test(`${BROWSER}: an HTML display loads nothing: images, stylesheets, CSS url(), frames and prefetches never leave the page`, async () => {
  const m = marker("htmldisplay");
  const r = await page.evaluate(async (m) => {
    const el = window.makeElement({ name: "disp-net", controls: "" });
    await el.ready;
    const html = [
      `<img src="http://${m}-img.example/a.png">`,
      `<link rel="stylesheet" href="http://${m}-css.example/s.css">`,
      `<div style="background:url(http://${m}-bg.example/b.png);width:9px;height:9px"></div>`,
      `<style>@import url(http://${m}-import.example/i.css); p { background: url(http://${m}-rule.example/r.png) }</style><p>styled</p>`,
      `<iframe src="http://${m}-frame.example/"></iframe>`,
      `<link rel="prefetch" href="http://${m}-prefetch.example/p">`,
      `<video src="http://${m}-video.example/v.mp4"></video>`,
      `<img src="data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=" id="inline">`,
    ].join("");
    const run = await el.run("import foxden\nfoxden.display(" + JSON.stringify(html) + ", mime='text/html')");
    await new Promise((res) => setTimeout(res, 1500));
    const frame = el.shadowRoot.querySelector("iframe[part=display-html]");
    const out = { error: run.error, srcdoc: frame && frame.getAttribute("srcdoc"), sandbox: frame && frame.getAttribute("sandbox") };
    el.remove();
    return out;
  }, m);
  assert.equal(r.error, null, JSON.stringify(r.error));
  const leaked = (readLog("proxy") + readLog("server")).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], "an HTML display made requests");
  assert.equal(r.sandbox, "");
  assert.match(r.srcdoc, /^<meta http-equiv="Content-Security-Policy" content="default-src 'none'/);
});

test(`${BROWSER}: an HTML display cannot navigate: links, a refresh, nested frames and link animations are removed, and a click on it sends nothing`, async () => {
  const m = marker("htmlnav");
  const html = [
    `<a href="http://${m}-link.example/?d=secret" style="position:fixed;inset:0;display:block;font-size:40px">Click to see the chart</a>`,
    `<svg width="20" height="20"><a href="http://${m}-svg.example/"><rect width="10" height="10"/></a><a xlink:href="http://${m}-xlink.example/"><text>t</text></a><a><set attributeName="href" to="http://${m}-set.example/"/></a></svg>`,
    `<math href="http://${m}-math.example/"><mi>x</mi></math>`,
    `<meta http-equiv="refresh" content="1;url=http://${m}-refresh.example/">`,
    `<iframe srcdoc="<a href='http://${m}-inner.example/'>inner</a>"></iframe>`,
    `<form action="http://${m}-form.example/"><button formaction="http://${m}-formaction.example/">go</button></form>`,
    `<div><template shadowrootmode="open"><a href="http://${m}-shadow.example/" style="display:block;width:100%;height:100%">shadow link</a></template></div>`,
    `<link rel="preconnect" href="http://${m}-preconnect.example/"><link rel="dns-prefetch" href="http://${m}-dns.example/">`,
    `<a href="#here">in the page</a><p id="here">kept text</p>`,
  ].join("");
  const srcdoc = await page.evaluate(async (html) => {
    const el = window.makeElement({ name: "disp-nav", controls: "" });
    await el.ready;
    const run = await el.run("import foxden\nfoxden.display(" + JSON.stringify(html) + ", mime='text/html')");
    if (run.error) return JSON.stringify(run.error);
    window.__navEl = el;
    const frame = el.shadowRoot.querySelector("iframe[part=display-html]");
    frame.scrollIntoView();
    return frame.getAttribute("srcdoc");
  }, html);
  assert.ok(!srcdoc.includes(m), `the display still holds a way out: ${srcdoc}`);
  // (An in-page link too: in a srcdoc frame it would load the host page.)
  assert.ok(!/href=|template|<link/i.test(srcdoc.replace(/^(<meta[^>]*>)+/, "")), srcdoc);
  assert.match(srcdoc, /kept text/);
  assert.match(srcdoc, /Click to see the chart/);
  // A reader clicks the big link (the frame's centre), then the refresh would have fired.
  const frame = await page.evaluateHandle(() => window.__navEl.shadowRoot.querySelector("iframe[part=display-html]"));
  await sleep(500);
  const box = await frame.boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await sleep(2000);
  await page.evaluate(() => window.__navEl.remove());
  const leaked = (readLog("proxy") + readLog("server")).split("\n").filter((l) => l.includes(m));
  assert.deepEqual(leaked, [], "the HTML display navigated");
});

test(`${BROWSER}: the controls' output keeps one span per run of a stream, and follows the end of long output`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeElement({ name: "spans", controls: "" });
    await el.ready;
    await el.run("import sys, time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.05)\nprint('e', file=sys.stderr)\nprint('x' * 30 + '\\n' * 400)");
    await new Promise((res) => setTimeout(res, 50));
    const out = el.shadowRoot.querySelector("[part=output]");
    const spans = [...out.querySelectorAll("span")].map((s) => [s.className, s.textContent.slice(0, 12)]);
    const atEnd = out.scrollHeight - out.clientHeight - out.scrollTop;
    el.remove();
    return { spans, atEnd };
  });
  // Three chunks of stdout (sent apart by the sleeps) make one span; stderr its own; then stdout.
  assert.deepEqual(r.spans, [["stdout", "0\n1\n2\n"], ["stderr", "e\n"], ["stdout", "x".repeat(12)]]);
  assert.ok(r.atEnd <= 1, `scrolled to ${r.atEnd} px from the end`);
});

test(`${BROWSER}: a large SVG (12 MiB, within the 16 MiB display cap) is shown too: its data: URL is base64, not percent-encoded`, async () => {
  const r = await page.evaluate(async () => {
    const el = window.makeElement({ name: "disp-big", controls: "" });
    await el.ready;
    // 12 MiB of comment (with characters percent-encoding would triple) around a 30x20 rectangle.
    const run = await el.run(
      "import foxden\n" +
        "pad = '<!-- ' + ('<\"&> ' * (12 * 1024 * 1024 // 5)) + '-->'\n" +
        "foxden.display('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"30\" height=\"20\">' + pad + '<rect width=\"30\" height=\"20\" fill=\"purple\"/></svg>', mime='image/svg+xml')",
      { timeoutMs: 60000 },
    );
    const img = el.shadowRoot.querySelector("[part=output] img");
    const width = !img ? -2 : img.complete && img.naturalWidth ? img.naturalWidth : await new Promise((res) => { img.onload = () => res(img.naturalWidth); img.onerror = () => res(-1); setTimeout(() => res(-3), 20000); });
    const out = { error: run.error, width, height: img && img.naturalHeight, prefix: img && img.src.slice(0, 26), srcLength: img && img.src.length };
    el.remove();
    return out;
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.prefix, "data:image/svg+xml;base64,");
  assert.ok(r.srcLength > 16 * 1024 * 1024 && r.srcLength < 17.5 * 1024 * 1024, String(r.srcLength));
  assert.deepEqual([r.width, r.height], [30, 20]);
});
