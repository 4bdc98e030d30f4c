// Which files a run touched, learned from the file system's own hooks instead of a walk over
// every file (issue 11): every way Python (or JS through `js`) changes files must still be seen.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, openQuickDen, BROWSER, logNewErrors } from "../lib.mjs";

let ctx, page, errors;
const B = BROWSER;

before(async () => {
  ctx = await launch();
  ({ page, errors } = await openPage(ctx.browser));
  await openQuickDen(page, "track");
});

afterEach(logNewErrors(() => errors));

after(async () => {
  await ctx?.close();
});

const run = (code) => page.evaluate((code) => window.dens.track.run(code, { timeoutMs: 20000 }), code);
const files = () => page.evaluate(async () => Object.fromEntries(await Promise.all((await window.dens.track.list()).map(async (f) => [f.path, await window.dens.track.readFile(f.path, "utf-8")]))));
const sorted = (r) => ({ created: [...r.files.created].sort(), changed: [...r.files.changed].sort(), deleted: [...r.files.deleted].sort() });

test(`${B}: writes, appends, truncation, replace, rename and removal of folders are all seen`, async () => {
  let r = await run(`
import os
os.makedirs("/work/d/sub", exist_ok=True)
for n in ("a", "b"):
    open(f"/work/d/{n}.txt", "w").write(n * 3)
open("/work/d/sub/c.txt", "w").write("ccc")
open("/work/log.txt", "w").write("one\\n")
open("/work/t.txt", "w").write("0123456789")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r).created, ["/work/d/a.txt", "/work/d/b.txt", "/work/d/sub/c.txt", "/work/log.txt", "/work/t.txt"]);
  r = await run(`
import os, shutil
open("/work/log.txt", "a").write("two\\n")
os.truncate("/work/t.txt", 4)
with open("/work/new.tmp", "w") as f:
    f.write("replaced")
os.replace("/work/new.tmp", "/work/d/a.txt")
os.rename("/work/d/sub", "/work/moved")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), {
    created: ["/work/moved/c.txt"],
    changed: ["/work/d/a.txt", "/work/log.txt", "/work/t.txt"],
    deleted: ["/work/d/sub/c.txt"],
  });
  r = await run(`
import shutil
shutil.rmtree("/work/d")
with open("/work/moved/c.txt", "r+") as f:
    f.truncate(1)`);
  assert.deepEqual(sorted(r), { created: [], changed: ["/work/moved/c.txt"], deleted: ["/work/d/a.txt", "/work/d/b.txt"] });
  assert.deepEqual(await files(), { "/work/log.txt": "one\ntwo\n", "/work/moved/c.txt": "c", "/work/t.txt": "0123" });
});

test(`${B}: sqlite, zipfile, mmap and JS writes through the FS are seen`, async () => {
  const r = await run(`
import sqlite3, zipfile, mmap, js, pyodide_js
db = sqlite3.connect("/work/db.sqlite")
db.execute("create table t (x)")
db.execute("insert into t values (42)")
db.commit()
db.close()
with zipfile.ZipFile("/out/a.zip", "w") as z:
    z.writestr("x.txt", "zipped")
with open("/work/t.txt", "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:1] = b"Z"
    m.flush()
    m.close()
pyodide_js.FS.writeFile("/work/fromjs.txt", "written by JS")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), { created: ["/out/a.zip", "/work/db.sqlite", "/work/fromjs.txt"], changed: ["/work/t.txt"], deleted: [] });
  const f = await files();
  assert.equal(f["/work/t.txt"], "Z123");
  assert.equal(f["/work/fromjs.txt"], "written by JS");
  const back = await run(`import sqlite3\nsqlite3.connect("/work/db.sqlite").execute("select x from t").fetchone()[0]`);
  assert.equal(back.result, "42");
});

test(`${B}: a write through a symlink is seen (the scan walks every file once symlinks exist)`, async () => {
  const r = await run(`
import os
os.symlink("/work/log.txt", "/work/link")
open("/work/link", "a").write("three\\n")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), { created: [], changed: ["/work/log.txt"], deleted: [] });
  assert.equal((await files())["/work/log.txt"], "one\ntwo\nthree\n");
  // Walking every file compares by stat, but a file the hooks saw written is sent whatever its
  // stat says: a same-size rewrite with its times put back is not missed. A path under a
  // symlinked folder is not a den file, though the hooks saw it written.
  const again = await run(`
import os
st = os.stat("/work/t.txt")
open("/work/t.txt", "r+").write("wxyz")
os.utime("/work/t.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
os.makedirs("/tmp/real", exist_ok=True)
os.symlink("/tmp/real", "/work/linked")
open("/work/linked/x.txt", "w").write("not a den file")`);
  assert.equal(again.error, null, JSON.stringify(again.error));
  assert.deepEqual(sorted(again), { created: [], changed: ["/work/t.txt"], deleted: [] });
  assert.equal((await files())["/work/t.txt"], "wxyz");
  await page.evaluate(() => window.dens.track.reset()); // a fresh worker tracks by hooks again
});

test(`${B}: 1000 unchanged files: a run reports nothing`, async () => {
  await page.evaluate(async () => {
    for (let i = 0; i < 1000; i++) await window.dens.track.writeFile(`/drop/many/${i}.txt`, `file ${i}`);
  });
  const first = await run("pass");
  assert.deepEqual(sorted(first), { created: [], changed: [], deleted: [] });
  const r = await run("open('/drop/many/7.txt').read()");
  assert.equal(r.result, "'file 7'");
  assert.deepEqual(sorted(r), { created: [], changed: [], deleted: [] });
});

test(`${B}: relative and dotted paths, folders renamed away and made anew, writes after a rename, many new files: host and worker agree`, async () => {
  // A den of its own: no symlink was ever made in it, so only touched paths are visited.
  await openQuickDen(page, "track2");
  const run2 = (code) => page.evaluate((code) => window.dens.track2.run(code, { timeoutMs: 30000 }), code);
  const list2 = () => page.evaluate(async () => (await window.dens.track2.list()).map((f) => f.path).sort());
  const text2 = (p) => page.evaluate((p) => window.dens.track2.readFile(p, "utf-8"), p);
  const worker = async () => JSON.parse((await run2(`
import os, json
out = []
for root in ("/drop", "/out", "/work"):
    for d, _, fs in os.walk(root):
        out += [os.path.join(d, f) for f in fs]
print(json.dumps(sorted(out)))`)).stdout);
  let r = await run2(`
import os
os.chdir("/work")
open("r.txt", "w").write("r")
open("m.txt", "w").write("m")
os.makedirs("cache")
open("cache/x", "w").write("x")
f = open("/work/o.txt", "w"); f.write("a"); f.flush()`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  // Relative, dotted and // paths (after chdir("/")) name the same files.
  r = await run2(`
import os, shutil
os.remove("./r.txt")
os.rename("m.txt", "../out/m.txt")
os.rename("/work/cache", "/work/cache.old"); os.mkdir("/work/cache"); shutil.rmtree("/work/cache.old")
os.rename("/work/o.txt", "/work/p.txt")
os.chdir("/")
open("work/rel.txt", "w").write("rel")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stderr, "", "nothing refused");
  // A write through the file opened before its rename.
  r = await run2(`f.write("bbb"); f.flush()`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(await list2(), await worker());
  assert.deepEqual(await list2(), ["/out/m.txt", "/work/p.txt", "/work/rel.txt"]);
  assert.equal(await text2("/work/p.txt"), "abbb");
  // 6000 new files in a new folder: each reported once.
  r = await run2(`
import os
os.makedirs("/work/many")
for i in range(6000):
    open(f"/work/many/{i}", "w").write("x")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.files.created.length, 6000);
  assert.equal(new Set(r.files.created).size, 6000);
  await page.evaluate(() => window.dens.track2.close());
});

test(`${B}: a file made where a folder of known files was, and a host write where the code made a symlink: host and worker agree`, async () => {
  await page.evaluate(() => window.dens.track.reset()); // tracking by hooks (no symlink yet)
  await page.evaluate(() => window.dens.track.writeFile("/work/swap/inner.txt", "in"));
  let r = await run(`
import os
os.rename("/work/swap", "/tmp/swap")
open("/work/swap", "w").write("now a file")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.stderr, "");
  assert.deepEqual(sorted(r), { created: ["/work/swap"], changed: [], deleted: ["/work/swap/inner.txt"] });
  let f = await files();
  assert.equal(f["/work/swap"], "now a file");
  assert.equal("/work/swap/inner.txt" in f, false);
  r = await run(`open("/work/swap").read()`);
  assert.equal(r.result, "'now a file'");
  // A symlink the code made is not a den file; a host write to its path replaces it and does
  // not write through it.
  await page.evaluate(() => window.dens.track.writeFile("/work/target.txt", "target"));
  r = await run(`import os\nos.symlink("/work/target.txt", "/work/alias")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  await page.evaluate(() => window.dens.track.writeFile("/work/alias", "alias"));
  r = await run(`import os\n(open("/work/target.txt").read(), open("/work/alias").read(), os.path.islink("/work/alias"))`);
  assert.equal(r.result, "('target', 'alias', False)");
  assert.deepEqual(sorted(r), { created: [], changed: [], deleted: [] });
  f = await files();
  assert.equal(f["/work/target.txt"], "target");
  assert.equal(f["/work/alias"], "alias");
  await page.evaluate(() => window.dens.track.reset());
});

test(`${B}: files and folders the code made read-only or unreadable are still kept, re-sent and deleted by the host`, async () => {
  await page.evaluate(() => window.dens.track.reset());
  let r = await run(`
import os
os.makedirs("/work/perm/locked", exist_ok=True)
open("/work/perm/ro.txt", "w").write("one")
os.chmod("/work/perm/ro.txt", 0o444)
open("/work/perm/none.txt", "w").write("secret")
os.chmod("/work/perm/none.txt", 0)
open("/work/perm/locked/in.txt", "w").write("inside")
os.chmod("/work/perm/locked", 0)`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r).created, ["/work/perm/locked/in.txt", "/work/perm/none.txt", "/work/perm/ro.txt"]);
  let f = await files();
  assert.equal(f["/work/perm/none.txt"], "secret");
  assert.equal(f["/work/perm/locked/in.txt"], "inside");
  // The host writes over the read-only file and into the locked folder, and deletes in it.
  await page.evaluate(async () => {
    const den = window.dens.track;
    await den.writeFile("/work/perm/ro.txt", "two");
    await den.writeFile("/work/perm/locked/new.txt", "new");
    await den.deleteFile("/work/perm/locked/in.txt");
  });
  r = await run(`
import os
os.chmod("/work/perm/locked", 0o755)
(open("/work/perm/ro.txt").read(), sorted(os.listdir("/work/perm/locked")))`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "('two', ['new.txt'])");
  // The mode bits still hold for the code itself.
  r = await run(`
import errno
try:
    open("/work/perm/ro.txt", "w")
except PermissionError as e:
    print("refused", e.errno == errno.EACCES)`);
  assert.equal(r.stdout, "refused True\n");
  // A folder locked during a run: its files are neither lost nor reported deleted.
  r = await run(`
import os
os.chmod("/work/perm/locked", 0)
os.rename("/work/perm/locked", "/work/perm/locked2")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), { created: ["/work/perm/locked2/new.txt"], changed: [], deleted: ["/work/perm/locked/new.txt"] });
  f = await files();
  assert.equal(f["/work/perm/locked2/new.txt"], "new");
  await page.evaluate(() => window.dens.track.reset());
});

test(`${B}: /work replaced by a symlink is not walked through: its files are gone, and a host write makes it a folder again`, async () => {
  await page.evaluate(() => window.dens.track.writeFile("/work/keep/k.txt", "k"));
  const before = Object.keys(await files()).filter((p) => p.startsWith("/work/")).sort();
  let r = await run(`
import os
os.chdir("/")  # /work, the working folder, cannot be renamed
os.rename("/work", "/tmp/oldwork")
os.symlink("/lib", "/work")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), { created: [], changed: [], deleted: before });
  await page.evaluate(() => window.dens.track.writeFile("/work/back.txt", "b"));
  r = await run(`import os
(os.path.islink("/work"), os.listdir("/work"), open("/work/back.txt").read())`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.result, "(False, ['back.txt'], 'b')");
  assert.deepEqual(sorted(r), { created: [], changed: [], deleted: [] });
  await page.evaluate(() => window.dens.track.reset());
});

test(`${B}: a run that makes more files than a den can hold keeps none of them, says why, and the den goes on with the host's files`, async () => {
  await openQuickDen(page, "track4");
  const r = await page.evaluate(async () => {
    const den = window.dens.track4;
    await den.writeFile("/work/host.txt", "host");
    const many = (end) => `
import os
open("/work/host.txt", "w").write("changed by the run")
os.makedirs("/work/many", exist_ok=True)
for i in range(10001):
    open(f"/work/many/{i}", "w").write("x")
${end}`;
    const big = await den.run(many(""), { timeoutMs: 60000 });
    const after = await den.run("import os\n(sorted(os.listdir('/work')), open('/work/host.txt').read())");
    // A run that also raised: its error stays, the note goes to stderr.
    const raised = await den.run(many("raise ValueError('boom')"), { timeoutMs: 60000 });
    const paths = (await den.list()).map((f) => f.path);
    const text = await den.readFile("/work/host.txt", "utf-8");
    await den.close();
    return { big, after: after.result, raised, paths, text };
  });
  assert.equal(r.big.error?.kind, "storage", JSON.stringify(r.big.error));
  assert.match(r.big.error.message, /^the run's file changes were not kept: .*10002 files.*maxFiles.*nothing was changed/);
  assert.equal(r.big.restarted, true);
  assert.deepEqual(r.big.files, { created: [], changed: [], deleted: [] });
  assert.equal(r.after, "(['host.txt'], 'host')");
  assert.equal(r.raised.error?.type, "ValueError", JSON.stringify(r.raised.error));
  assert.match(r.raised.stderr, /foxden: the run's file changes were not kept: .*10002 files.*maxFiles/);
  assert.equal(r.raised.restarted, true);
  assert.deepEqual(r.raised.files, { created: [], changed: [], deleted: [] });
  assert.deepEqual(r.paths, ["/work/host.txt"]);
  assert.equal(r.text, "host");
});

test(`${B}: names JS made with lone surrogates are noted and not kept (two of them would be one name on the host)`, async () => {
  const r = await run(`
import pyodide_js
from pyodide.code import run_js
run_js(r"""(FS) => {
  FS.writeFile("/work/lone" + String.fromCharCode(0xD800) + ".txt", "a");
  FS.writeFile("/work/lone" + String.fromCharCode(0xDC00) + ".txt", "b");
  FS.writeFile("/work/pair\\u{1F600}.txt", "c");
}""")(pyodide_js.FS)`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), { created: ["/work/pair\u{1F600}.txt"], changed: [], deleted: [] });
  const notes = r.stderr.split("\n").filter((l) => l.includes("lone surrogate"));
  assert.deepEqual(notes, ['foxden: "/work/lone\\ud800.txt" was not kept: its name is not valid Unicode (a lone surrogate)', 'foxden: "/work/lone\\udc00.txt" was not kept: its name is not valid Unicode (a lone surrogate)']);
  // Noted once; the files stay in the sandbox.
  const again = await run(`import os\nlen([n for n in os.listdir("/work") if n.startswith("lone")])`);
  assert.equal(again.stderr, "");
  assert.equal(again.result, "2");
  // JavaScript's fs refuses such a name at once.
  const js = await page.evaluate(() => window.dens.track.run("await fs.writeFile('/work/x' + String.fromCharCode(0xD800), 'x')", { lang: "javascript" }));
  assert.equal(js.error?.type, "FsError", JSON.stringify(js.error));
  assert.match(js.error.message, /not valid Unicode \(a lone surrogate\)/);
});

test(`${B}: a path longer than a reply may name is noted and not kept; the run's other files are`, async () => {
  const r = await run(`
import os
deep = "/work/deep/" + "/".join(["d" * 250] * 17)
os.makedirs(deep)
open(deep + "/x.txt", "w").write("deep")
open("/work/next-to-it.txt", "w").write("kept")`);
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.deepEqual(sorted(r), { created: ["/work/next-to-it.txt"], changed: [], deleted: [] });
  assert.match(r.stderr, /^foxden: "\/work\/deep\/d+"… was not kept: its path is \d+ characters long \(a den path is at most 1024 bytes\)$/m, r.stderr);
  assert.equal((await files())["/work/next-to-it.txt"], "kept");
  await run("import shutil\nshutil.rmtree('/work/deep')\nimport os\nos.remove('/work/next-to-it.txt')");
});

test(`${B}: interpreters resumed from the memory snapshot draw different random numbers`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.track;
    const draws = [];
    for (let k = 0; k < 3; k++) {
      if (k) await den.reset();
      draws.push((await den.run("import random\nrandom.random()")).result);
    }
    return { draws, info: den.info.warmStart };
  });
  assert.equal(new Set(r.draws).size, 3, `the same draws: ${r.draws.join(", ")}`);
});

test(`${B}: writes to pipes and the terminal are not files: they work and mark nothing`, async () => {
  await openQuickDen(page, "track3");
  const r = await page.evaluate(async () => {
    const den = window.dens.track3;
    const pipe = await den.run("import os\nr, w = os.pipe()\nos.write(w, b'hi')\nos.read(r, 2)");
    const after = await den.run("print('still here')\n6 * 7");
    await den.close();
    return { pipe: pipe.result, error: pipe.error, files: pipe.files, after: after.result, stdout: after.stdout };
  });
  assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(r.pipe, "b'hi'");
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.equal(r.after, "42");
  assert.equal(r.stdout, "still here\n");
});
