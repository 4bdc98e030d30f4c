// Packages (issue 12 §1): pure-Python wheels the host fetches, checks against their SHA-256 pins
// and hands to the sandbox, which installs them with no network. The wheels are real ones from
// PyPI, downloaded and pinned by xtask into target/test-wheels (served at /wheels/); hostile
// variants are made from them here with python3.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { launch, openPage, BROWSER, logNewErrors } from "../lib.mjs";

const B = BROWSER;
const DIR = process.env.FOXDEN_WHEELS;
if (!DIR) throw new Error("run through `cargo xtask e2e` (it downloads the test wheels)");
/** [{ file, sha256, size }] of the pinned test wheels. */
const MANIFEST = JSON.parse(readFileSync(join(DIR, "manifest.json"), "utf8"));
const wheel = (prefix) => {
  const w = MANIFEST.find((m) => m.file.toLowerCase().startsWith(prefix.toLowerCase() + "-"));
  if (!w) throw new Error(`no test wheel ${prefix}`);
  return w;
};
/** `{ url, sha256 }` of a test wheel, served by the e2e server. */
const spec = (prefix) => ({ url: `/wheels/${wheel(prefix).file}`, sha256: wheel(prefix).sha256 });
const ALL = ["tabulate", "sympy", "mpmath", "python_dateutil", "six", "beautifulsoup4", "soupsieve", "PyYAML"];

/** A hostile variant of a real wheel, made by python3: base64 of its bytes. */
function tampered(kind) {
  const src = join(DIR, wheel("six").file);
  const code = `
import base64, hashlib, io, sys, zipfile
src, kind = sys.argv[1], sys.argv[2]
zin = zipfile.ZipFile(src)
out = io.BytesIO()
digest = lambda d: "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for info in zin.infolist():
        data = zin.read(info)
        if kind == "record" and info.filename == "six.py":
            data += b"\\nimport os  # changed after RECORD was written\\n"
        if kind == "escape" and info.filename.endswith("/RECORD"):
            data += ("../../evil.py,%s,%d\\n" % (digest(b"x = 1\\n"), 6)).encode()
        z.writestr(info.filename, data)
    if kind == "escape":
        z.writestr("../../evil.py", b"x = 1\\n")
sys.stdout.write(base64.b64encode(out.getvalue()).decode())
`;
  return execFileSync("python3", ["-c", code, src, kind], { encoding: "utf8", maxBuffer: 1 << 26 });
}

let ctx, page, errors;
before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
  // Helpers in the page: open a den with packages, and report a rejection's typed fields.
  await page.evaluate(() => {
    window.openWith = async (name, packages, runtime = {}) => {
      const { openDen, iframeRuntime } = window.foxden;
      return openDen({ name, packages, runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/", ...runtime }) });
    };
    window.refusal = async (name, packages) => {
      try {
        const den = await window.openWith(name, packages);
        await den.close();
        return { opened: true };
      } catch (e) {
        return { name: e.name, stage: e.stage, package: e.package, message: e.message, isLoad: e instanceof window.foxden.DenLoadError };
      }
    };
    window.sha256hex = async (bytes) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
    window.fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  });
});
afterEach(logNewErrors(() => errors));
after(async () => ctx?.close());

test(`${B}: every test package installs with no network and is imported and used`, async () => {
  const specs = ALL.map(spec);
  const r = await page.evaluate(async (specs) => {
    const t = performance.now();
    window.den = await window.openWith("pk", specs);
    const openMs = performance.now() - t;
    const run = await window.den.run(`
import importlib.metadata as md, json, sys
from tabulate import tabulate
import sympy, mpmath
from dateutil import parser, relativedelta
from bs4 import BeautifulSoup
import yaml
x = sympy.symbols("x")
mpmath.mp.dps = 30
soup = BeautifulSoup('<ul><li class="a">one</li><li class="b">two</li></ul>', "html.parser")
out = {
  "tabulate": tabulate([["a", 1], ["bb", 22]], headers=["k", "v"], tablefmt="github"),
  "sympy": [str(sympy.diff(sympy.sin(x) ** 2, x)), str(sympy.factor(x**2 - 1)), str(sympy.solve(x**2 - 4, x))],
  "mpmath": str(mpmath.pi),
  "dateutil": str(parser.parse("2024-02-29T12:00:00+02:00") + relativedelta.relativedelta(years=1)),
  "bs4": [li.text for li in soup.select("li.b")] + [soup.select_one("ul > li:first-child").text],
  "yaml": [yaml.safe_load("a: [1, 2]\\nb: {c: true}"), yaml.safe_dump({"k": [1, "two"]}), yaml.__with_libyaml__],
  "versions": sorted((d.metadata["Name"].lower(), d.version) for d in md.distributions()),
  "where": sympy.__file__.rsplit("/", 3)[-3],
}
print(json.dumps(out))
`, { timeoutMs: 180000 });
    return { openMs, info: window.den.info, stdout: run.stdout, error: run.error };
  }, specs);
  assert.equal(r.error, null, JSON.stringify(r.error));
  const out = JSON.parse(r.stdout);
  assert.equal(out.tabulate, "| k   |   v |\n|-----|-----|\n| a   |   1 |\n| bb  |  22 |");
  assert.deepEqual(out.sympy, ["2*sin(x)*cos(x)", "(x - 1)*(x + 1)", "[-2, 2]"]);
  assert.equal(out.mpmath, "3.14159265358979323846264338328");
  assert.equal(out.dateutil, "2025-02-28 12:00:00+02:00");
  assert.deepEqual(out.bs4, ["two", "one"]);
  assert.deepEqual(out.yaml, [{ a: [1, 2], b: { c: true } }, "k:\n- 1\n- two\n", false]);
  assert.deepEqual(out.versions, [
    ["beautifulsoup4", "4.12.3"], ["mpmath", "1.3.0"], ["python-dateutil", "2.9.0.post0"], ["pyyaml", "6.0.2"],
    ["six", "1.17.0"], ["soupsieve", "2.6"], ["sympy", "1.14.0"], ["tabulate", "0.9.0"],
  ]);
  assert.equal(out.where, "site-packages");
  const mib = MANIFEST.reduce((s, m) => s + m.size, 0) / 1048576;
  console.log(`# ${B}: den with ${ALL.length} wheels (${mib.toFixed(1)} MiB) ready in ${r.openMs.toFixed(0)} ms`);
});

test(`${B}: packages survive a timeout and reset(); re-installing sympy + mpmath after a restart is measured`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.den;
    await den.run("marker = 1");
    const timeout = await den.run("while True: pass", { timeoutMs: 300 });
    const afterTimeout = await den.run("from tabulate import tabulate\n('marker' in globals(), tabulate([[1]], tablefmt='plain'))");
    const reset = await den.reset();
    const afterReset = await den.run("import sympy\nstr(sympy.expand((sympy.Symbol('y') + 1) ** 2))", { timeoutMs: 180000 });
    return { kind: timeout.error && timeout.error.kind, afterTimeout: afterTimeout.result, err: afterTimeout.error, reset, afterReset: afterReset.result };
  });
  assert.equal(r.kind, "timeout");
  assert.equal(r.afterTimeout, "(False, '1')", JSON.stringify(r.err));
  assert.equal(r.afterReset, "'y**2 + 2*y + 1'");
  assert.equal(typeof r.reset.packagesMs, "number");
  // Without a standby, each restart boots from the snapshot and re-installs the wheels from the
  // bytes the den page keeps: this is the cost of packages on a restart.
  const m = await page.evaluate(async (specs) => {
    const den = await window.openWith("pk-restart", specs, { standby: false });
    const first = await den.run("import sympy, mpmath\nstr(sympy.sqrt(8))", { timeoutMs: 180000 });
    const resets = [];
    for (let i = 0; i < 3; i++) resets.push(await den.reset());
    const again = await den.run("import sympy\nstr(sympy.sqrt(8))", { timeoutMs: 180000 });
    const plain = await window.openWith("pk-plain", [], { standby: false });
    const bare = [];
    for (let i = 0; i < 3; i++) bare.push(await plain.reset());
    await den.close();
    await plain.close();
    return { first: first.result, again: again.result, resets, bare };
  }, [spec("sympy"), spec("mpmath")]);
  assert.equal(m.first, "'2*sqrt(2)'");
  assert.equal(m.again, "'2*sqrt(2)'");
  const median = (xs) => xs.slice().sort((a, b) => a - b)[1];
  const install = median(m.resets.map((x) => x.packagesMs));
  const withPk = median(m.resets.map((x) => x.bootMs));
  const without = median(m.bare.map((x) => x.bootMs));
  const mib = (wheel("sympy").size + wheel("mpmath").size) / 1048576;
  console.log(`# ${B}: restart with sympy + mpmath (${mib.toFixed(1)} MiB of wheels): boot ${withPk.toFixed(0)} ms, of which re-install ${install.toFixed(0)} ms; without packages ${without.toFixed(0)} ms (median of 3, standby off)`);
  assert.ok(install > 0 && install < withPk + 1);
});

test(`${B}: a wrong hash is a DenLoadError naming the package; the page's dens keep working`, async () => {
  const bad = { ...spec("tabulate"), sha256: "0".repeat(64) };
  const r = await page.evaluate((bad, good) => window.refusal("pk-bad", [good, bad]), bad, spec("six"));
  assert.deepEqual([r.name, r.stage, r.package, r.isLoad], ["DenLoadError", "package", "tabulate", true]);
  assert.match(r.message, /tabulate-0\.9\.0-py3-none-any\.whl has SHA-256 024ca478.* but 0{64} was pinned/);
  // The name is free again and the other den is untouched.
  const after = await page.evaluate(async (good) => {
    const den = await window.openWith("pk-bad", [good]);
    const a = (await den.run("import six\nsix.PY3")).result;
    await den.close();
    return [a, (await window.den.run("import tabulate\n1 + 1")).result];
  }, spec("six"));
  assert.deepEqual(after, ["True", "2"]);
});

test(`${B}: a wheel larger than the den's budget for wheels is refused as it downloads, with or without a length`, async () => {
  const n = 100 * 1024 * 1024;
  const r = await page.evaluate(async (n) => ({
    sized: await window.refusal("pk-big", [{ url: `/api/big/huge-1.0-py3-none-any.whl?n=${n}`, sha256: "0".repeat(64) }]),
    streamed: await window.refusal("pk-big", [{ url: `/api/stream/huge-1.0-py3-none-any.whl?n=${n}`, sha256: "0".repeat(64) }]),
  }), n);
  for (const [how, x] of Object.entries(r)) {
    assert.deepEqual([x.name, x.stage, x.package], ["DenLoadError", "package", "huge"], `${how}: ${JSON.stringify(x)}`);
    assert.match(x.message, /larger than 67108864 bytes/, `${how}: ${x.message}`);
  }
});

test(`${B}: wheels downloading together stop at the den's budget for wheels in all, and the first refusal stops the others`, async () => {
  const { createHash } = await import("node:crypto");
  const MiB = 1024 * 1024;
  const sent = (g) => page.evaluate(async (g) => (await (await fetch(`/api/sent?g=${g}`)).json()).sent, g);
  /** What the server wrote for group `g`, once it stopped growing. */
  const settled = async (g) => {
    let last = -1;
    for (;;) {
      const now = await sent(g);
      if (now === last) return now;
      last = now;
      await new Promise((r) => setTimeout(r, 400));
    }
  };
  // Three wheels of 60 MiB each (each under the 64 MiB budget, correctly pinned): together
  // they pass it, and the downloads stop there instead of all 180 MiB being held first.
  const n = 60 * MiB;
  const pin = createHash("sha256").update(Buffer.alloc(n, "y")).digest("hex");
  const g1 = `total-${B}-${Date.now()}`;
  const three = ["ka", "kb", "kc"].map((k) => ({ url: `/api/stream/${k}-1.0-py3-none-any.whl?n=${n}&g=${g1}`, sha256: pin }));
  const r = await page.evaluate((three) => window.refusal("pk-total", three), three);
  assert.deepEqual([r.name, r.stage, r.isLoad], ["DenLoadError", "package", true], JSON.stringify(r));
  assert.ok(["ka", "kb", "kc"].includes(r.package), JSON.stringify(r));
  assert.match(r.message, /-1\.0-py3-none-any\.whl takes the den's wheels past 64 MiB in all \(the downloads were stopped there\)/);
  const total = await settled(g1);
  assert.ok(total >= 64 * MiB && total < 120 * MiB, `the server wrote ${total / MiB} MiB`);
  // A wheel refused by its pin stops a slow download of another (4 MiB at 16 KiB per 40 ms,
  // about 10 s): the refusal comes first and the server is cut off early.
  const g2 = `cancel-${B}-${Date.now()}`;
  const slow = { url: `/api/stream/slow-1.0-py3-none-any.whl?n=${4 * MiB}&delay=40&g=${g2}`, sha256: "0".repeat(64) };
  const bad = { ...spec("six"), sha256: "0".repeat(64) };
  const c = await page.evaluate(async (list) => {
    const t0 = performance.now();
    return { ...(await window.refusal("pk-cancel", list)), ms: performance.now() - t0 };
  }, [slow, bad]);
  assert.deepEqual([c.name, c.stage, c.package], ["DenLoadError", "package", "six"], JSON.stringify(c));
  assert.match(c.message, /six-1\.17\.0-py2\.py3-none-any\.whl has SHA-256 .* but 0{64} was pinned/);
  const written = await settled(g2);
  assert.ok(written < 2 * MiB, `the server wrote ${written / MiB} MiB of the slow wheel`);
});

test(`${B}: wrong tags, a corrupt zip, a RECORD mismatch, an escaping path and a missing dependency are refused by name`, async () => {
  const r = await page.evaluate(
    async (record, escape, sympy) => {
      const junk = new TextEncoder().encode("PK\u0003\u0004 this is not a zip file");
      const withSha = async (name, bytes) => ({ name, bytes, sha256: await window.sha256hex(bytes) });
      const rec = window.fromB64(record);
      const esc = window.fromB64(escape);
      return {
        tags: await window.refusal("pk-t", [await withSha("numpy-2.2.0-cp314-cp314-pyodide_2026_0_wasm32.whl", junk)]),
        py2: await window.refusal("pk-t", ["/wheels/x-1.0-py2-none-any.whl#sha256=" + "a".repeat(64)]),
        corrupt: await window.refusal("pk-c", [await withSha("broken-1.0-py3-none-any.whl", junk)]),
        record: await window.refusal("pk-r", [await withSha("six-1.17.0-py2.py3-none-any.whl", rec)]),
        escape: await window.refusal("pk-e", [await withSha("six-1.17.0-py2.py3-none-any.whl", esc)]),
        missing: await window.refusal("pk-m", [sympy]),
        fetch: await window.refusal("pk-f", [{ url: "/wheels/nothing-1.0-py3-none-any.whl", sha256: "b".repeat(64) }]),
        works: (await window.den.run("import yaml\nyaml.safe_load('[1, 2]')")).result,
      };
    },
    tampered("record"),
    tampered("escape"),
    spec("sympy"),
  );
  const is = (x, pkg, re) => {
    assert.equal(x.name, "DenLoadError", JSON.stringify(x));
    assert.equal(x.stage, "package");
    assert.equal(x.package, pkg);
    assert.match(x.message, re);
  };
  is(r.tags, "numpy", /compiled code/);
  is(r.py2, "x", /not for Python 3/);
  is(r.corrupt, "broken", /not a readable zip file/);
  is(r.record, "six", /six\.py does not match its RECORD hash/);
  is(r.escape, "six", /escape site-packages/);
  is(r.missing, "sympy", /requires mpmath<1\.4,>=1\.1\.0, which is not among the given wheels/);
  is(r.fetch, "nothing", /could not be fetched.*HTTP 404/);
  // (The hint about Pyodide's files is not for a wheel's URL, which is the page's own.)
  assert.doesNotMatch(r.fetch.message, /pyodideUrl/);
  assert.equal(r.works, "[1, 2]");
});

test(`${B}: the packages attribute installs wheels for <foxden-den>; a bad one is an error event naming it`, async () => {
  const good = `/wheels/${wheel("tabulate").file}#sha256=${wheel("tabulate").sha256}  /wheels/${wheel("six").file}#sha256=${wheel("six").sha256}`;
  const r = await page.evaluate(async (good) => {
    const el = document.createElement("foxden-den");
    el.setAttribute("name", "pk-el");
    el.setAttribute("packages", good);
    document.body.append(el);
    await el.ready;
    const run = await el.run("from tabulate import tabulate\nimport six\ntabulate([[six.PY3]], tablefmt='plain')");
    const prop = el.packages;
    const seen = [];
    el.addEventListener("error", (e) => seen.push({ attribute: e.detail.attribute, code: e.detail.error.code, message: e.detail.error.message }));
    el.setAttribute("packages", "/wheels/tabulate-0.9.0-py3-none-any.whl");
    await new Promise((r) => setTimeout(r, 50));
    const still = (await el.run("1 + 2")).result;
    el.remove();
    return { result: run.result, error: run.error, prop, seen, still };
  }, good);
  assert.equal(r.result, "'True'", JSON.stringify(r.error));
  assert.equal(r.prop, good);
  assert.equal(r.seen.length, 1);
  assert.equal(r.seen[0].attribute, "packages");
  assert.match(r.seen[0].message, /package tabulate: .* has no pin/);
  assert.equal(r.still, "3");
});
