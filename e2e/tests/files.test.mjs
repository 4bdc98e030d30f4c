// The den's files in a real browser (issue 3): IndexedDB persistence, one writer per den name,
// snapshots and restore that change nothing on bad bytes, fork, and the size cap.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, BROWSER, BASE } from "../lib.mjs";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

let ctx, page;
before(async () => {
  ctx = await launch();
  ({ page } = await openPage(ctx.browser));
});
after(async () => ctx?.close());
const B = BROWSER;

const open = (p, name, store, extra = {}) =>
  p.evaluate(
    async (name, store, extra) => {
      const { openDen, iframeRuntime, memoryStore, idbStore } = window.foxden;
      window.dens = window.dens || {};
      window.dens[name] = await openDen({ name, runtime: iframeRuntime(), store: store ? idbStore(store) : memoryStore(), ...extra });
      return true;
    },
    name,
    store,
    extra,
  );

test(`${B}: idbStore files and a run's changes survive a page reload`, async () => {
  await open(page, "persist", "fx-e2e");
  const r = await page.evaluate(async () => {
    const den = window.dens.persist;
    await den.writeFile("/drop/keep.txt", "kept across reloads");
    return den.run("open('/out/made.txt', 'w').write('by python')\nopen('/drop/keep.txt').read()");
  });
  assert.equal(r.result, "'kept across reloads'");
  await page.reload({ waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true);
  await open(page, "persist", "fx-e2e");
  const files = await page.evaluate(async () => {
    const den = window.dens.persist;
    const list = await den.list();
    const out = { list: list.map((f) => f.path), keep: await den.readText("/drop/keep.txt"), made: await den.readText("/out/made.txt") };
    await den.close();
    return out;
  });
  assert.deepEqual(files.list, ["/drop/keep.txt", "/out/made.txt"]);
  assert.equal(files.keep, "kept across reloads");
  assert.equal(files.made, "by python");
});

test(`${B}: two pages never open one IndexedDB den at once; the second gets DenError "locked"`, async () => {
  await open(page, "shared", "fx-e2e");
  const { page: other } = await openPage(ctx.browser);
  const err = await other.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore } = window.foxden;
    try {
      await openDen({ name: "shared", runtime: iframeRuntime(), store: idbStore("fx-e2e") });
      return null;
    } catch (e) {
      return { name: e.name, code: e.code, message: e.message };
    }
  });
  assert.equal(err?.name, "DenError");
  assert.equal(err.code, "locked");
  await page.evaluate(() => window.dens.shared.close());
  // Once the first page closed it, the second can open it.
  const ok = await other.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore } = window.foxden;
    const den = await openDen({ name: "shared", runtime: iframeRuntime(), store: idbStore("fx-e2e") });
    await den.close();
    return true;
  });
  assert.ok(ok);
  await other.close();
});

test(`${B}: a page without Web Locks (not a secure context) cannot open an IndexedDB den: two tabs could overwrite each other`, async () => {
  const { page: other } = await openPage(ctx.browser);
  const r = await other.evaluate(async () => {
    // What an http:// page that is not localhost sees: IndexedDB, but no navigator.locks.
    Object.defineProperty(Navigator.prototype, "locks", { get: () => undefined, configurable: true });
    const { openDen, iframeRuntime, idbStore, memoryStore } = window.foxden;
    let err = null;
    try {
      await openDen({ name: "nolocks", runtime: iframeRuntime(), store: idbStore("fx-e2e-nolocks") });
    } catch (e) {
      err = { name: e.name, code: e.code, message: e.message };
    }
    // A memory den needs no lock.
    const den = await openDen({ name: "nolocks", runtime: iframeRuntime(), store: memoryStore() });
    const run = await den.run("1 + 1");
    await den.close();
    return { err, result: run.result };
  });
  assert.equal(r.err?.name, "DenError", JSON.stringify(r.err));
  assert.equal(r.err.code, "storage");
  assert.match(r.err.message, /needs Web Locks.*secure context.*memoryStore\(\)/);
  assert.equal(r.result, "2");
  await other.close();
});

test(`${B}: snapshot, corrupt restore changes nothing, good restore replaces all, openDen({ snapshot })`, async () => {
  await open(page, "snap", null);
  const r = await page.evaluate(async () => {
    const { SnapshotError, decodeSnapshot } = window.foxden;
    const den = window.dens.snap;
    await den.writeFile("/drop/a.txt", "alpha");
    await den.writeFile("/work/b.bin", new Uint8Array([0, 1, 2, 255]));
    const snap = await den.snapshot();
    const before = JSON.stringify(await den.list());
    const outcomes = [];
    for (const pos of [0, 100, 600, Math.floor(snap.length / 2), snap.length - 1100]) {
      const bad = snap.slice();
      bad[pos] ^= 0x20;
      try {
        await den.restore(bad);
        outcomes.push(`pos ${pos}: accepted`);
      } catch (e) {
        outcomes.push(e instanceof SnapshotError ? "refused" : `pos ${pos}: ${e.name}`);
      }
    }
    try {
      await den.restore(snap.slice(0, snap.length - 700));
      outcomes.push("truncated: accepted");
    } catch (e) {
      outcomes.push(e instanceof SnapshotError ? "refused" : e.name);
    }
    const after = JSON.stringify(await den.list());
    await den.writeFile("/drop/a.txt", "changed");
    await den.writeFile("/out/extra.txt", "x");
    const changes = await den.restore(snap);
    const restored = await den.readText("/drop/a.txt");
    const list = (await den.list()).map((f) => f.path);
    const decoded = Object.keys(decodeSnapshot(snap));
    const { openDen, iframeRuntime } = window.foxden;
    const copy = await openDen({ name: "from-snap", runtime: iframeRuntime(), snapshot: snap });
    const viaRun = await copy.run("open('/drop/a.txt').read() + str(list(open('/work/b.bin','rb').read()))");
    await copy.close();
    return { outcomes, same: before === after, changes, restored, list, decoded, viaRun: viaRun.result };
  });
  assert.ok(r.outcomes.every((o) => o === "refused"), r.outcomes.join(", "));
  assert.ok(r.same, "files unchanged after refused restores");
  assert.deepEqual(r.changes, { created: [], changed: ["/drop/a.txt"], deleted: ["/out/extra.txt"] });
  assert.equal(r.restored, "alpha");
  assert.deepEqual(r.list, ["/drop/a.txt", "/work/b.bin"]);
  assert.deepEqual(r.decoded, ["/drop/a.txt", "/work/b.bin"]);
  assert.equal(r.viaRun, "'alpha[0, 1, 2, 255]'");
});

test(`${B}: restore gives files their snapshot's times, also where the content is the same: snapshot, restore, snapshot is the same bytes`, async () => {
  await open(page, "times");
  const r = await page.evaluate(async () => {
    const den = window.dens.times;
    await den.writeFile("/work/a.txt", "same");
    await den.writeFile("/work/b.txt", "changes");
    const first = await den.snapshot();
    await new Promise((res) => setTimeout(res, 20));
    // The same content, made anew at a later time.
    await den.deleteFile("/work/a.txt");
    await den.writeFile("/work/a.txt", "same");
    await den.writeFile("/work/b.txt", "changed");
    await den.run("pass"); // the worker holds a.txt with the later time
    const time = async () => (await den.list()).find((f) => f.path === "/work/a.txt").mtime;
    const timeBefore = await time();
    const restored = await den.restore(first);
    const timeAfter = await time();
    // The worker gets the restored time too.
    const seen = (await den.run("import os\nos.stat('/work/a.txt').st_mtime_ns // 1000000")).result;
    const again = await den.snapshot();
    const same = first.length === again.length && first.every((b, i) => b === again[i]);
    await den.close();
    return { same, restored, timeBefore, timeAfter, seen };
  });
  assert.equal(r.same, true, "snapshot → restore → snapshot must give the same bytes");
  assert.deepEqual(r.restored, { created: [], changed: ["/work/b.txt"], deleted: [] });
  assert.notEqual(r.timeBefore, r.timeAfter);
  assert.equal(Number(r.seen), Math.floor(r.timeAfter), "the worker's file has the restored time");
});

test(`${B}: snapshots are read where they are: views with an offset, ArrayBuffer, DataView; files come out as copies`, async () => {
  const r = await page.evaluate(async () => {
    const { decodeSnapshot, SnapshotError } = window.foxden;
    const den = window.dens.snap;
    await den.writeFile("/drop/a.txt", "alpha");
    const snap = await den.snapshot();
    const text = (u) => new TextDecoder().decode(u);
    // The snapshot in the middle of a larger buffer, junk on both sides.
    const big = new Uint8Array(snap.length + 40).fill(0xee);
    big.set(snap, 16);
    const view = big.subarray(16, 16 + snap.length);
    const fromView = decodeSnapshot(view);
    const fromDataView = decodeSnapshot(new DataView(big.buffer, 16, snap.length));
    const fromBuffer = decodeSnapshot(big.buffer.slice(16, 16 + snap.length));
    let junk;
    try {
      decodeSnapshot(big);
      junk = "accepted";
    } catch (e) {
      junk = e instanceof SnapshotError ? "refused" : e.name;
    }
    // Out: copies. Changing the input after the call changes no file, and the other way round.
    const a = fromView["/drop/a.txt"];
    view.fill(0);
    const aAfterInputChanged = text(a);
    big.set(snap, 16);
    a[0] = 0x41;
    const again = text(decodeSnapshot(view)["/drop/a.txt"]);
    // A subclass whose slice() returns a view (as a Buffer polyfill's does) still gets copies.
    class ViewSlice extends Uint8Array {
      slice(a, b) {
        return this.subarray(a, b);
      }
    }
    const sub = new ViewSlice(snap.length);
    sub.set(snap);
    const fromSub = decodeSnapshot(sub)["/drop/a.txt"];
    sub.fill(0);
    const subAfterInputChanged = text(fromSub);
    // restore() and openDen({ snapshot }) read the view too, and keep their own copy.
    await den.writeFile("/drop/a.txt", "changed");
    await den.restore(view);
    view.fill(0);
    const restored = await den.readText("/drop/a.txt");
    big.set(snap, 16);
    return {
      keys: [Object.keys(fromView), Object.keys(fromDataView), Object.keys(fromBuffer)],
      texts: [text(fromDataView["/drop/a.txt"]), text(fromBuffer["/drop/a.txt"])],
      junk, aAfterInputChanged, again, restored, subAfterInputChanged,
    };
  });
  for (const k of r.keys) assert.ok(k.includes("/drop/a.txt"), JSON.stringify(r.keys));
  assert.deepEqual(r.texts, ["alpha", "alpha"]);
  assert.equal(r.junk, "refused", "the whole buffer, junk included, is not a snapshot");
  assert.equal(r.aAfterInputChanged, "alpha");
  assert.equal(r.again, "alpha");
  assert.equal(r.restored, "alpha");
  assert.equal(r.subAfterInputChanged, "alpha");
});

test(`${B}: a snapshot longer than 4 GiB is refused as such, not read modulo 4 GiB`, async () => {
  const r = await page.evaluate(async () => {
    const { encodeSnapshot, decodeSnapshot, SnapshotError } = window.foxden;
    // An empty den's snapshot (2048 bytes), then zeros, then junk in the very last byte: read
    // modulo 4 GiB it would be exactly the snapshot. Untouched pages cost no memory.
    const empty = encodeSnapshot({});
    const big = new Uint8Array(2 ** 32 + empty.length);
    big.set(empty, 0);
    big[big.length - 1] = 1;
    const outcome = async (f) => {
      try {
        await f();
        return "accepted";
      } catch (e) {
        return e instanceof SnapshotError ? `${e.code}: ${e.message}` : `${e.name}: ${e.message}`;
      }
    };
    return {
      size: empty.length,
      decoded: await outcome(() => decodeSnapshot(big)),
      restored: await outcome(() => window.dens.snap.restore(big)),
    };
  });
  assert.equal(r.size, 2048);
  for (const o of [r.decoded, r.restored]) assert.match(o, /^format: .*4294969344 bytes long, more than the 4 GiB/);
});

test(`${B}: a snapshot padded with zero blocks to just under 4 GiB is read to its end and accepted`, async () => {
  const r = await page.evaluate(async () => {
    const { encodeSnapshot, decodeSnapshot } = window.foxden;
    const snap = encodeSnapshot({ "/drop/a.txt": "alpha" });
    const padded = new Uint8Array(2 ** 32 - 512);
    padded.set(snap, 0);
    const files = decodeSnapshot(padded);
    padded[padded.length - 1] = 1;
    let junk = "accepted";
    try {
      decodeSnapshot(padded);
    } catch (e) {
      junk = `${e.code}: ${e.message}`;
    }
    return { text: new TextDecoder().decode(files["/drop/a.txt"]), junk };
  });
  assert.equal(r.text, "alpha");
  assert.match(r.junk, /^format: .*data after the end of the archive/);
});

test(`${B}: writeFile over maxFileBytes is refused before its bytes are copied, even past 4 GiB; one the page has no memory for is refused too`, async () => {
  const r = await page.evaluate(async () => {
    const { DenError } = window.foxden;
    const den = window.dens.snap;
    const answer = async (data, on = den) => {
      const none = new Promise((res) => setTimeout(() => res("no answer in 30 s"), 30000));
      const write = on.writeFile("/work/huge.bin", data).then(
        () => "accepted",
        (e) => (e instanceof DenError ? `${e.code}: ${e.message}` : `${e.name}: ${e.message}`),
      );
      return Promise.race([write, none]);
    };
    const past4GiB = await answer(new Uint8Array(2 ** 32 + 10));
    const big = await answer(new Float64Array(2 ** 27)); // 1 GiB as another typed array
    // With the cap at its most (4 GiB), exactly 4 GiB is still more than wasm can take.
    const { openDen, iframeRuntime } = window.foxden;
    const wide = await openDen({ name: "wide-cap", runtime: iframeRuntime(), maxFileBytes: 2 ** 32, maxDenBytes: 2 ** 33 });
    const at4GiB = await answer(new Uint8Array(2 ** 32), wide);
    // Under the cap, but more than the page's wasm memory can still take: refused, not an
    // abort of the module (which would end every den of the page); the den keeps working.
    const noRoom = await answer(new Uint8Array(2 ** 32 - 2 ** 20), wide);
    // A string is checked as UTF-8 (here twice its length) before it is copied into wasm.
    const utf = await openDen({ name: "utf8-cap", runtime: iframeRuntime(), maxFileBytes: 1000000 });
    const overAsUtf8 = await answer("é".repeat(600000), utf);
    await utf.writeFile("/work/fits.txt", "é".repeat(400000) + "\ud800");
    const fitsBack = await utf.readText("/work/fits.txt");
    await utf.close();
    await wide.writeFile("/work/small.txt", "fits");
    const wideAfter = await wide.readText("/work/small.txt");
    await wide.close();
    await den.writeFile("/work/after.txt", "still fine");
    const after = await den.readText("/work/after.txt");
    await den.deleteFile("/work/after.txt");
    return { past4GiB, big, at4GiB, noRoom, overAsUtf8, fitsBack: fitsBack === "é".repeat(400000) + "\ufffd", wideAfter, after, listed: (await den.list()).map((f) => f.path) };
  });
  assert.match(r.past4GiB, /^cap: "\/work\/huge.bin" would hold 4294967306 bytes, over the cap of \d+ bytes per file \(maxFileBytes\)/);
  assert.match(r.big, /^cap: "\/work\/huge.bin" would hold 1073741824 bytes, over the cap/);
  assert.match(r.at4GiB, /^cap: "\/work\/huge.bin" would hold 4294967296 bytes, over the cap/);
  assert.match(r.noRoom, /^storage: the page has no memory left for 4293918720 more bytes of files/);
  assert.match(r.overAsUtf8, /^cap: "\/work\/huge.bin" would hold 1200000 bytes, over the cap of 1000000 bytes per file/);
  assert.equal(r.fitsBack, true);
  assert.equal(r.wideAfter, "fits");
  assert.equal(r.after, "still fine");
  assert.ok(!r.listed.includes("/work/huge.bin"));
});

test(`${B}: detached buffers (bytes transferred away) get an answer: writeFile refuses them, snapshots read them as empty`, async () => {
  const r = await page.evaluate(async () => {
    const { DenError, SnapshotError, decodeSnapshot, encodeSnapshot } = window.foxden;
    const den = window.dens.snap;
    // A buffer, or a typed array made before its buffer was transferred away.
    const detached = (view = false) => {
      const b = new ArrayBuffer(8);
      const v = new Float32Array(b);
      structuredClone(b, { transfer: [b] });
      return view ? v : b;
    };
    const answer = async (f) => {
      const none = new Promise((res) => setTimeout(() => res("no answer in 30 s"), 30000));
      const done = (async () => f())().then(
        (v) => `ok ${v instanceof Uint8Array ? v.length : JSON.stringify(v)}`,
        (e) => (e instanceof DenError || e instanceof SnapshotError ? `${e.name} ${e.code}` : `${e.name}: ${e.message}`),
      );
      return Promise.race([done, none]);
    };
    return {
      write: await answer(() => den.writeFile("/work/gone.bin", detached())),
      writeView: await answer(() => den.writeFile("/work/gone.bin", detached(true))),
      restore: await answer(() => den.restore(detached())),
      decode: await answer(() => decodeSnapshot(detached(true))),
      encoded: await answer(() => Object.values(decodeSnapshot(encodeSnapshot({ "/drop/e.bin": detached() })))[0]),
      listed: (await den.list()).map((f) => f.path),
    };
  });
  assert.equal(r.write, "DenError bad-data");
  assert.equal(r.writeView, "DenError bad-data");
  assert.equal(r.restore, "SnapshotError truncated");
  assert.equal(r.decode, "SnapshotError truncated");
  assert.equal(r.encoded, "ok 0");
  assert.ok(!r.listed.includes("/work/gone.bin"));
});

test(`${B}: writeFile and restore take the bytes as they are at the call: the buffer may be reused or transferred at once`, async () => {
  await open(page, "capture", null);
  const r = await page.evaluate(async () => {
    const den = window.dens.capture;
    const b = new Uint8Array([1, 2, 3]);
    const first = den.writeFile("/work/now.bin", b);
    b.fill(0); // the caller reuses its buffer before the write's promise settles
    const moved = new Uint8Array([4, 5, 6]);
    const second = den.writeFile("/work/moved.bin", moved);
    structuredClone(moved.buffer, { transfer: [moved.buffer] }); // and transfers another
    // One buffer reused for several files without awaiting: each keeps its own chunk.
    const chunk = new Uint8Array(1);
    const loop = [];
    for (let i = 0; i < 3; i++) { chunk[0] = 10 + i; loop.push(den.writeFile(`/work/chunk${i}.bin`, chunk)); }
    await Promise.all([first, second, ...loop]);
    const snap = await den.snapshot();
    await den.writeFile("/work/now.bin", "changed");
    const restoring = den.restore(snap);
    snap.fill(0); // the snapshot's bytes were checked at the call
    await restoring;
    const read = async (p) => Array.from(await den.readFile(p));
    const out = { now: await read("/work/now.bin"), moved: await read("/work/moved.bin"), chunks: [await read("/work/chunk0.bin"), await read("/work/chunk1.bin"), await read("/work/chunk2.bin")] };
    // openDen({ snapshot }) reads the snapshot at the call too.
    const snap2 = await den.snapshot();
    const { openDen, iframeRuntime } = window.foxden;
    const opening = openDen({ name: "capture2", runtime: iframeRuntime(), snapshot: snap2 });
    snap2.fill(0);
    const copy = await opening;
    out.opened = Array.from(await copy.readFile("/work/now.bin"));
    await copy.close();
    await den.close();
    return out;
  });
  assert.deepEqual(r.now, [1, 2, 3]);
  assert.deepEqual(r.moved, [4, 5, 6]);
  assert.deepEqual(r.chunks, [[10], [11], [12]]);
  assert.deepEqual(r.opened, [1, 2, 3]);
});

test(`${B}: IndexedDB records are trusted only under their own key, with bounded strings and a real time; another script deleting the database is not blocked by an open den`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore } = window.foxden;
    const db = "fx-keyed";
    const open = (name) => openDen({ name, runtime: iframeRuntime(), store: idbStore(db) });
    const outcome = (p) => p.then(() => "opened", (e) => `${e.name} ${e.code} ${e.message}`);
    /** Changes the database behind the dens' back: `f(store)` in one transaction. */
    const tamper = (f) => new Promise((res, rej) => {
      const req = indexedDB.open(db);
      req.onerror = () => rej(req.error);
      req.onsuccess = () => {
        const tx = req.result.transaction("files", "readwrite");
        f(tx.objectStore("files"));
        tx.oncomplete = () => { req.result.close(); res(); };
        tx.onerror = () => rej(tx.error);
      };
    });
    const out = {};
    let den = await open("keyed");
    await den.writeFile("/work/b.txt", "old");
    await den.close();
    // A copy of a record under another key (it would undo later writes and deletes of b.txt).
    await tamper((s) => { s.get(["keyed", "/work/b.txt"]).onsuccess = (e) => s.put(e.target.result, ["keyed", "/work/z"]); });
    out.strayKey = await outcome(open("keyed"));
    await tamper((s) => s.delete(["keyed", "/work/z"]));
    // A longer key that starts with the record's own (it lies in the den's key range too).
    await tamper((s) => { s.get(["keyed", "/work/b.txt"]).onsuccess = (e) => s.put(e.target.result, ["keyed", "/work/b.txt", 0]); });
    out.longerKey = await outcome(open("keyed"));
    await tamper((s) => s.delete(["keyed", "/work/b.txt", 0]));
    // A record whose path is not in normal form, under that very key.
    await tamper((s) => { s.get(["keyed", "/work/b.txt"]).onsuccess = (e) => s.put({ ...e.target.result, path: "/work//c" }, ["keyed", "/work//c"]); });
    out.notNormal = await outcome(open("keyed"));
    await tamper((s) => s.delete(["keyed", "/work//c"]));
    // A path longer than any den path (not copied whole), and a time that is not a number.
    await tamper((s) => { s.get(["keyed", "/work/b.txt"]).onsuccess = (e) => s.put({ ...e.target.result, path: "/work/" + "p".repeat(5000000) }, ["keyed", "/work/b.txt"]); });
    out.longPath = await outcome(open("keyed"));
    await tamper((s) => { s.get(["keyed", "/work/b.txt"]).onsuccess = (e) => s.put({ ...e.target.result, path: "/work/b.txt", mtime: NaN }, ["keyed", "/work/b.txt"]); });
    out.nanTime = await outcome(open("keyed"));
    await tamper((s) => { s.get(["keyed", "/work/b.txt"]).onsuccess = (e) => s.put({ ...e.target.result, mtime: 1 }, ["keyed", "/work/b.txt"]); });
    den = await open("keyed");
    out.healthy = await den.readText("/work/b.txt");
    // Another script deletes the database while the den is open: the deletion goes ahead (the
    // den's connection closes), and a later write of the den is refused, typed.
    out.deleted = await Promise.race([
      new Promise((res) => { const q = indexedDB.deleteDatabase(db); q.onsuccess = () => res("deleted"); q.onerror = () => res("error"); }),
      new Promise((res) => setTimeout(() => res("still blocked after 10 s"), 10000)),
    ]);
    out.writeAfter = await den.writeFile("/work/n.txt", "new").then(() => "written", (e) => `${e.name} ${e.code}`);
    out.stillReadable = await den.readText("/work/b.txt");
    await den.close();
    den = await open("keyed");
    out.afterDelete = (await den.list()).map((f) => f.path);
    await den.close();
    return out;
  });
  assert.match(r.strayKey, /^DenError storage .*not under its own path/);
  assert.match(r.longerKey, /^DenError storage .*not under its own path/);
  assert.match(r.notNormal, /^DenError storage .*not under its own path/);
  assert.match(r.longPath, /^DenError storage .*without a valid path/);
  assert.match(r.nanTime, /^DenError storage .*no valid time/);
  assert.equal(r.healthy, "old");
  assert.equal(r.deleted, "deleted");
  assert.equal(r.writeAfter, "DenError storage");
  assert.equal(r.stillReadable, "old");
  assert.deepEqual(r.afterDelete, []);
});

test(`${B}: a damaged IndexedDB den is refused, and repaired by opening it with a snapshot (or forking onto it)`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore, encodeSnapshot } = window.foxden;
    const db = "fx-damaged";
    const open = (name, extra = {}) => openDen({ name, runtime: iframeRuntime(), store: idbStore(db), ...extra });
    const outcome = (p) => p.then((d) => d, (e) => `${e.name} ${e.code}`);
    // A den with two files, then one record's bytes changed behind its back.
    let den = await open("hurt");
    await den.writeFile("/work/a.txt", "alpha");
    await den.writeFile("/work/b.txt", "beta");
    await den.close();
    await new Promise((res, rej) => {
      const req = indexedDB.open(db);
      req.onerror = () => rej(req.error);
      req.onsuccess = () => {
        const tx = req.result.transaction("files", "readwrite");
        const store = tx.objectStore("files");
        const get = store.get(["hurt", "/work/a.txt"]);
        get.onsuccess = () => store.put({ ...get.result, data: new TextEncoder().encode("ALPHA") }, ["hurt", "/work/a.txt"]);
        tx.oncomplete = () => { req.result.close(); res(); };
        tx.onerror = () => rej(tx.error);
      };
    });
    const refused = await outcome(open("hurt"));
    // Opened with a snapshot: the damaged records are not read, and all are replaced.
    den = await open("hurt", { snapshot: encodeSnapshot({ "/work/c.txt": "gamma" }) });
    const repaired = (await den.list()).map((f) => f.path);
    await den.close();
    den = await open("hurt");
    const reopened = (await den.list()).map((f) => f.path);
    const c = await den.readText("/work/c.txt");
    // A fork onto a damaged den replaces it too.
    await den.writeFile("/work/a.txt", "alpha");
    await den.close();
    await new Promise((res) => {
      const req = indexedDB.open(db);
      req.onsuccess = () => {
        const tx = req.result.transaction("files", "readwrite");
        const store = tx.objectStore("files");
        const get = store.get(["hurt", "/work/a.txt"]);
        get.onsuccess = () => store.put({ ...get.result, sha256: "00" }, ["hurt", "/work/a.txt"]);
        tx.oncomplete = () => { req.result.close(); res(); };
      };
    });
    const refusedAgain = await outcome(open("hurt"));
    const source = await open("healthy");
    await source.writeFile("/drop/d.txt", "delta");
    const fork = await source.fork({ name: "hurt" });
    const forked = (await fork.list()).map((f) => f.path);
    await fork.close();
    await source.close();
    den = await open("hurt");
    const afterFork = (await den.list()).map((f) => f.path);
    await den.close();
    return { refused, repaired, reopened, c, refusedAgain, forked, afterFork };
  });
  assert.equal(r.refused, "DenError storage");
  assert.deepEqual(r.repaired, ["/work/c.txt"]);
  assert.deepEqual(r.reopened, ["/work/c.txt"]);
  assert.equal(r.c, "gamma");
  assert.equal(r.refusedAgain, "DenError storage");
  assert.deepEqual(r.forked, ["/drop/d.txt"]);
  assert.deepEqual(r.afterFork, ["/drop/d.txt"]);
});

test(`${B}: an IndexedDB database without its object store is repaired when a den opens; an element removed while it opens leaves no storeless database and no open connection`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, idbStore } = window.foxden;
    const adapter = () => ({ start() {}, close() {}, run: () => ({ result: "1" }) });
    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
    const out = {};
    // A database made at version 1 with no store (as a creation cut short leaves it).
    await new Promise((res, rej) => {
      const q = indexedDB.open("fx-nostore", 1);
      q.onsuccess = () => { q.result.close(); res(); };
      q.onerror = () => rej(q.error);
    });
    try {
      let den = await openDen({ name: "n", runtime: adapter(), store: idbStore("fx-nostore") });
      await den.writeFile("/work/a.txt", "kept");
      await den.close();
      den = await openDen({ name: "n", runtime: adapter(), store: idbStore("fx-nostore") });
      out.repaired = await den.readText("/work/a.txt");
      await den.close();
    } catch (e) {
      out.repaired = `${e.name} ${e.code} ${e.message}`;
    }
    // Elements removed at once, or a few ms after they start opening a new database.
    const names = [];
    for (let k = 0; k < 16; k++) {
      const el = document.createElement("foxden-den");
      el.setAttribute("store", `idb:fx-cut-${k}`);
      el.name = `c${k}`;
      el.runtime = adapter();
      document.body.append(el);
      el.ready.catch(() => {});
      if (k < 4) for (let i = 0; i < k * 3; i++) await Promise.resolve();
      else await sleep(k - 4);
      el.remove();
      names.push(`fx-cut-${k}`);
    }
    await sleep(1000);
    const existing = new Set((await indexedDB.databases()).map((d) => d.name));
    out.cut = [];
    for (const db of names.filter((n) => existing.has(n))) {
      const stores = await new Promise((res) => {
        const q = indexedDB.open(db);
        q.onsuccess = () => { const s = [...q.result.objectStoreNames]; q.result.close(); res(s); };
        q.onerror = () => res(`error ${q.error}`);
      });
      const deleted = await Promise.race([
        new Promise((res) => { const q = indexedDB.deleteDatabase(db); q.onsuccess = () => res("deleted"); q.onerror = () => res("error"); }),
        sleep(5000).then(() => "blocked by an open connection"),
      ]);
      out.cut.push(`${db}: ${JSON.stringify(stores)} ${deleted}`);
    }
    return out;
  });
  console.log(`# ${r.cut.length} of 16 databases were made: ${r.cut.join("; ")}`);
  assert.equal(r.repaired, "kept");
  for (const line of r.cut) assert.match(line, /: \["files"\] deleted$/);
});

test(`${B}: a path with a lone surrogate is a PathError (rule unicode), not another file's name`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, encodeSnapshot, normalizePath } = window.foxden;
    const adapter = {
      start() {}, close() {},
      run: () => ({ files: { "/work/c\uD800": "from the adapter", "/work/ok.txt": "ok" } }),
    };
    const den = await openDen({ name: "surrogates", runtime: adapter });
    const outcome = (f) => Promise.resolve().then(f).then((v) => `ok ${JSON.stringify(v)}`, (e) => `${e.name} ${e.rule} ${e.message}`);
    const out = {
      write: await outcome(() => den.writeFile("/work/a\uD800", "1")),
      write2: await outcome(() => den.writeFile("/work/a\uDC00", "2")),
      read: await outcome(() => den.readText("/work/a\uD800")),
      del: await outcome(() => den.deleteFile("/work/a\uDC00")),
      list: await outcome(() => den.list("/work/\uD800")),
      normalize: await outcome(() => normalizePath("/work/\uDFFF")),
      snapshot: await outcome(() => encodeSnapshot({ "/work/s\uD800": "x" })),
      // A well-formed pair is one character, and fine.
      pair: await outcome(() => den.writeFile("/work/\uD83D\uDE00.txt", "smile")),
    };
    const run = await den.run("anything");
    out.run = { files: run.files, stderr: run.stderr };
    out.files = (await den.list()).map((f) => f.path);
    await den.close();
    return out;
  });
  for (const k of ["write", "write2", "read", "del", "list", "normalize", "snapshot"]) {
    assert.match(r[k], /^PathError unicode invalid path .*\(unicode\): a path must be valid Unicode \(it has a lone surrogate\)$/, `${k}: ${r[k]}`);
  }
  assert.equal(r.pair, `ok {"created":["/work/\u{1F600}.txt"],"changed":[],"deleted":[]}`);
  assert.deepEqual(r.run.files, { created: ["/work/ok.txt"], changed: [], deleted: [] });
  assert.match(r.run.stderr, /was not kept: invalid path .*\(unicode\)/);
  assert.deepEqual(r.files, ["/work/ok.txt", "/work/\u{1F600}.txt"]);
});

test(`${B}: fork copies the files and then diverges`, async () => {
  const r = await page.evaluate(async () => {
    const den = window.dens.snap;
    // Only { name }: any other key (which fork would not apply) is refused.
    const refused = await den.fork({ name: "snap-fork-x", store: window.foxden.memoryStore() }).then(() => "forked", (e) => `${e.name} ${e.code} ${e.option}`);
    const fork = await den.fork({ name: "snap-fork", store: undefined });
    await fork.writeFile("/drop/a.txt", "fork only");
    await den.writeFile("/drop/new.txt", "parent only");
    const out = {
      parentA: await den.readText("/drop/a.txt"),
      forkA: await fork.readText("/drop/a.txt"),
      forkList: (await fork.list()).map((f) => f.path),
      forkRun: (await fork.run("open('/drop/a.txt').read()")).result,
      forkName: fork.name,
      refused,
    };
    await fork.close();
    return out;
  });
  assert.equal(r.refused, "DenError bad-option store");
  assert.equal(r.parentA, "alpha");
  assert.equal(r.forkA, "fork only");
  assert.deepEqual(r.forkList, ["/drop/a.txt", "/work/b.bin"]);
  assert.equal(r.forkRun, "'fork only'");
  assert.equal(r.forkName, "snap-fork");
});

test(`${B}: Python sees the file times the host keeps, 0 included (files from encodeSnapshot), also after a reset`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, encodeSnapshot } = window.foxden;
    const den = await openDen({ name: "mtime0", runtime: iframeRuntime() });
    await den.restore(encodeSnapshot({ "/work/a.txt": "x" }));
    const listed = (await den.list())[0].mtime;
    const code = "import os\nos.stat('/work/a.txt').st_mtime_ns // 1000000";
    const before = (await den.run(code)).result;
    await den.reset();
    const after = (await den.run(code)).result;
    await den.close();
    return { listed, before, after };
  });
  assert.equal(r.listed, 0);
  assert.equal(r.before, "0");
  assert.equal(r.after, "0");
});

test(`${B}: maxDenBytes is enforced on writes and runs; a refused run keeps the store as it was`, async () => {
  await open(page, "capped", null, { maxDenBytes: 1000 });
  const r = await page.evaluate(async () => {
    const den = window.dens.capped;
    await den.writeFile("/drop/a.txt", "x".repeat(600));
    let writeErr = null;
    try {
      await den.writeFile("/drop/b.txt", "y".repeat(600));
    } catch (e) {
      writeErr = { name: e.name, code: e.code };
    }
    const run = await den.run("open('/out/big.txt','w').write('z' * 1200)\nopen('/drop/a.txt','w').write('changed')");
    const list = (await den.list()).map((f) => `${f.path}:${f.size}`);
    const a = await den.readText("/drop/a.txt");
    // The next run sees the host's files again, not the refused ones.
    const next = await den.run("import os\n(open('/drop/a.txt').read()[:3], os.path.exists('/out/big.txt'))");
    return { writeErr, error: run.error, files: run.files, list, a, next: next.result };
  });
  assert.deepEqual(r.writeErr, { name: "DenError", code: "cap" });
  assert.equal(r.error.kind, "storage");
  assert.match(r.error.message, /cap/);
  assert.deepEqual(r.files, { created: [], changed: [], deleted: [] });
  assert.deepEqual(r.list, ["/drop/a.txt:600"]);
  assert.equal(r.a, "x".repeat(600));
  assert.equal(r.next, "('xxx', False)");
});

test(`${B}: names are checked and freed by close()`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, DenError } = window.foxden;
    const errs = [];
    for (const name of ["", "has space", "x".repeat(65), "snap"]) {
      try {
        await openDen({ name, runtime: iframeRuntime() });
        errs.push("opened");
      } catch (e) {
        errs.push(e instanceof DenError ? e.code : e.name);
      }
    }
    await window.dens.snap.close();
    const again = await openDen({ name: "snap", runtime: iframeRuntime() });
    await again.close();
    let closedErr = null;
    try {
      await window.dens.snap.run("1");
    } catch (e) {
      closedErr = e.code;
    }
    return { errs, closedErr };
  });
  assert.deepEqual(r.errs, ["bad-option", "bad-option", "bad-option", "name-in-use"]);
  assert.equal(r.closedErr, "closed");
});

test(`${B}: a name is open once per page, whichever foxden module opened it (foxden.js, foxden/api)`, async () => {
  const r = await page.evaluate(async () => {
    const main = window.foxden;
    const api = await import("/api.js");
    const code = async (opening) => {
      try {
        await (await opening).close();
        return "opened";
      } catch (e) {
        return e.code ?? String(e);
      }
    };
    // IndexedDB dens: a close frees the name only once the den's Web Lock is let go.
    const a = await main.openDen({ name: "both", store: main.idbStore("fx-both"), runtime: main.iframeRuntime() });
    await a.writeFile("/work/x.txt", "from foxden.js");
    const fromApi = await code(api.openDen({ name: "both", runtime: api.iframeRuntime() }));
    const reg = globalThis[Symbol.for("foxden.dens")];
    // Not awaited: the other module's opening waits for the close under way.
    const closing = a.close();
    const waited = reg.closing.size;
    const b = await api.openDen({ name: "both", store: api.idbStore("fx-both"), runtime: api.iframeRuntime() });
    const fromMain = await code(main.openDen({ name: "both", runtime: main.iframeRuntime() }));
    await closing;
    const ran = (await b.run("open('/work/x.txt').read()")).result;
    await b.close();
    const again = await code(main.openDen({ name: "both", runtime: main.iframeRuntime() }));
    return { fromApi, fromMain, waited, ran, again, held: reg.open.has("both"), closingLeft: reg.closing.size, otherClass: b instanceof main.Den };
  });
  assert.deepEqual(r, { fromApi: "name-in-use", fromMain: "name-in-use", waited: 1, ran: "'from foxden.js'", again: "opened", held: false, closingLeft: 0, otherClass: false });
});

test(`${B}: a den that fails to open leaves its stored files as they were; stalled wheels fail at loadTimeoutMs`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore, DenLoadError } = window.foxden;
    const store = idbStore("fx-e2e-keep");
    const keep = await openDen({ name: "keepme", store, runtime: iframeRuntime() });
    await keep.writeFile("/work/a.txt", "original");
    const other = await openDen({ name: "keep-src", runtime: iframeRuntime() });
    await other.writeFile("/work/b.txt", "from the snapshot");
    const snapshot = await other.snapshot();
    await other.close();
    await keep.close();
    const out = {};
    // The snapshot is valid, but the den page never answers: the open fails, nothing is replaced.
    try {
      await openDen({ name: "keepme", store, snapshot, runtime: iframeRuntime({ denUrl: "/missing/den.html", loadTimeoutMs: 3000 }) });
      out.failed = "opened";
    } catch (e) {
      out.failed = e instanceof DenLoadError ? e.stage : String(e);
    }
    const again = await openDen({ name: "keepme", store, runtime: iframeRuntime() });
    out.files = (await again.list()).map((f) => f.path);
    out.text = await again.readText("/work/a.txt");
    await again.close();
    // A wheel server that never answers: the open fails at loadTimeoutMs, and frees the name.
    const t0 = performance.now();
    try {
      await openDen({ name: "stall", packages: [{ url: "/api/slow/stall-1.0-py3-none-any.whl?ms=20000", sha256: "0".repeat(64) }], runtime: iframeRuntime({ loadTimeoutMs: 2000 }) });
      out.stall = "opened";
    } catch (e) {
      out.stall = e instanceof DenLoadError ? e.stage : String(e);
    }
    out.stallMs = performance.now() - t0;
    const free = await openDen({ name: "stall", runtime: iframeRuntime() });
    out.freed = (await free.run("1")).result;
    await free.close();
    return out;
  });
  assert.equal(r.failed, "timeout");
  assert.deepEqual(r.files, ["/work/a.txt"]);
  assert.equal(r.text, "original");
  assert.equal(r.stall, "timeout");
  assert.ok(r.stallMs < 8000, `stalled wheels took ${r.stallMs} ms`);
  assert.equal(r.freed, "1");
});

test(`${B}: close() settles once an IndexedDB write in flight ended: the den reopens at once, write kept; openDen right after an unawaited close() waits for it`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime, idbStore } = window.foxden;
    const store = idbStore("fx-e2e-reclose");
    const den = await openDen({ name: "reclose", store, runtime: iframeRuntime(), maxFileBytes: 64 << 20 });
    const big = new Uint8Array(32 << 20).fill(7);
    const write = den.writeFile("/work/big.bin", big).then(() => "written", (e) => `refused: ${e.code}`);
    await new Promise((r) => setTimeout(r, 0)); // the write is in its IndexedDB transaction now
    await den.close();
    let again;
    try {
      again = await openDen({ name: "reclose", store, runtime: iframeRuntime(), maxFileBytes: 64 << 20 });
    } catch (e) {
      return { reopen: `${e.name} ${e.code}: ${e.message}` };
    }
    const files = (await again.list()).map((f) => [f.path, f.size]);
    // The same without awaiting close(): openDen waits for the close of its name to settle
    // (before, it failed as name-in-use while the write was in flight).
    const write2 = again.writeFile("/work/big2.bin", big).then(() => "written", (e) => `refused: ${e.code}`);
    await new Promise((r) => setTimeout(r, 0));
    const closing = again.close();
    let third;
    try {
      third = await openDen({ name: "reclose", store, runtime: iframeRuntime() });
    } catch (e) {
      return { reopen: "ok", write: await write, files, reopen2: `${e.name} ${e.code}: ${e.message}` };
    }
    await closing;
    const files2 = (await third.list()).map((f) => [f.path, f.size]);
    for (const p of ["/work/big.bin", "/work/big2.bin"]) await third.deleteFile(p).catch(() => {});
    await third.close();
    return { reopen: "ok", write: await write, files, reopen2: "ok", write2: await write2, files2 };
  });
  assert.equal(r.reopen, "ok");
  assert.equal(r.write, "written");
  assert.deepEqual(r.files, [["/work/big.bin", 32 << 20]]);
  assert.equal(r.reopen2, "ok");
  assert.equal(r.write2, "written");
  assert.deepEqual(r.files2, [["/work/big.bin", 32 << 20], ["/work/big2.bin", 32 << 20]]);
});

test(`${B}: reset() waiting behind a run, then close(): reset rejects as closed at once, no new den page`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const den = await openDen({ name: "reset-close", runtime: iframeRuntime() });
    const run = den.run("import time\ntime.sleep(3)").then((x) => x.error && x.error.kind, (e) => e.code);
    const reset = den.reset().then(() => "reset", (e) => e.code);
    await new Promise((r) => setTimeout(r, 300));
    let added = 0;
    const watch = new MutationObserver((ms) => ms.forEach((m) => m.addedNodes.forEach((n) => (added += n.nodeName === "IFRAME" ? 1 : 0))));
    watch.observe(document.body, { childList: true, subtree: true });
    const t0 = performance.now();
    await den.close();
    const out = { reset: await reset, ms: performance.now() - t0, run: await run };
    await new Promise((r) => setTimeout(r, 500));
    watch.disconnect();
    out.extra = added;
    return out;
  });
  assert.equal(r.reset, "closed");
  assert.ok(r.ms < 1000, `reset settled after ${r.ms} ms`);
  assert.equal(r.extra, 0, "a den page was opened for a closed den");
});

test(`${B}: close() while a reset is under way: the reset rejects as closed, not as a failed restart`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const den = await openDen({ name: "reset-during-close", runtime: iframeRuntime({ standby: false }) });
    const reset = den.reset().then(() => "reset", (e) => `${e.name}:${e.code}`);
    await new Promise((r) => setTimeout(r, 20));
    await den.close();
    return await reset;
  });
  assert.equal(r, "DenError:closed");
});

test(`${B}: a den whose assets are missing or wrong rejects with DenLoadError naming what failed`, async () => {
  const r = await page.evaluate(async (base) => {
    const { openDen, iframeRuntime, DenLoadError } = window.foxden;
    const out = [];
    for (const rt of [{ pyodideUrl: "/nowhere/" }, { pyodideUrl: "/e2e/" }, { denUrl: "/missing/den.html", loadTimeoutMs: 4000 }]) {
      const t0 = performance.now();
      try {
        await openDen({ name: "broken", runtime: iframeRuntime(rt) });
        out.push("opened");
      } catch (e) {
        out.push({ cls: e instanceof DenLoadError, stage: e.stage, message: e.message, ms: performance.now() - t0 });
      }
    }
    return out;
  }, BASE);
  assert.equal(r[0].cls, true);
  assert.equal(r[0].stage, "assets");
  assert.match(r[0].message, /404/);
  assert.equal(r[1].stage, "assets");
  assert.equal(r[2].stage, "timeout");
  assert.match(r[2].message, /404/);
  assert.ok(r[2].ms < 6000, `took ${r[2].ms} ms`);
});

test(`${B}: Pyodide files that are not the pinned ones (a changed byte anywhere) are refused before the den is ready`, async () => {
  // Copies of the real files, one of them changed so that every other check still passes: a
  // valid zip, valid JSON of the right version, a wasm module with one more custom section.
  const src = join(process.env.FOXDEN_DIST || join(import.meta.dirname, "../../dist"), "pyodide");
  const root = join(import.meta.dirname, "../pages", `tampered-${B}`);
  const tamper = {
    "python_stdlib.zip": (b) => Buffer.concat([b, Buffer.from("\0")]),
    "pyodide-lock.json": (b) => Buffer.concat([b, Buffer.from("\n")]),
    "pyodide.asm.wasm": (b) => Buffer.concat([b, Buffer.from([0, 5, 4, 0x66, 0x6f, 0x78, 0x64])]),
  };
  try {
    for (const changed of Object.keys(tamper)) {
      const dir = join(root, changed);
      mkdirSync(dir, { recursive: true });
      for (const f of Object.keys(tamper)) {
        const bytes = readFileSync(join(src, f));
        writeFileSync(join(dir, f), f === changed ? tamper[f](bytes) : bytes);
      }
    }
    const r = await page.evaluate(async (B, files) => {
      const { openDen, iframeRuntime } = window.foxden;
      const out = {};
      for (const f of files) {
        const frames = document.querySelectorAll("iframe[data-foxden-den]").length;
        out[f] = await openDen({ name: "tampered", runtime: iframeRuntime({ pyodideUrl: `/e2e/tampered-${B}/${f}/` }) }).then(
          () => "opened",
          (e) => ({ stage: e.stage, message: e.message, frames: document.querySelectorAll("iframe[data-foxden-den]").length - frames }),
        );
      }
      // The real files still open a den.
      const den = await openDen({ name: "tampered", runtime: iframeRuntime() });
      out.real = (await den.run("6 * 7")).result;
      await den.close();
      return out;
    }, B, Object.keys(tamper));
    for (const f of Object.keys(tamper)) {
      assert.equal(r[f].stage, "assets", `${f}: ${JSON.stringify(r[f])}`);
      assert.match(r[f].message, new RegExp(`tampered-${B}/${f.replace(/\./g, "\\.")}/${f.replace(/\./g, "\\.")} is not Pyodide 314\\.0\\.7's`));
      assert.match(r[f].message, /its SHA-256 is [0-9a-f]{64}, not [0-9a-f]{64}/);
      assert.equal(r[f].frames, 0, "the refused den's iframe is removed");
    }
    assert.equal(r.real, "42");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test(`${B}: close() during a run ends the run at once and removes the iframe`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const frames = () => document.querySelectorAll("iframe[data-foxden-den]").length;
    const before = frames();
    const den = await openDen({ name: "closing", runtime: iframeRuntime() });
    const pending = den.run("while True: pass", { timeoutMs: 20000 });
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    await den.close();
    const run = await pending;
    const took = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
    return { error: run.error, took, before, after: frames() };
  });
  assert.equal(r.error.kind, "crashed");
  assert.equal(r.error.type, "DenClosed");
  assert.ok(r.took < 1000, `run ended ${r.took} ms after close()`);
  assert.equal(r.after, r.before);
});

test(`${B}: readOnlyPaths: a file that replaces a folder holding a read-only file is not kept, and the run's other changes are`, async () => {
  const r = await page.evaluate(async () => {
    const { openDen, iframeRuntime } = window.foxden;
    const den = await openDen({ name: "guarded-holder", runtime: iframeRuntime(), readOnlyPaths: ["/work/ro/a.csv"] });
    await den.writeFile("/work/ro/a.csv", "keep");
    const run = await den.run(`
import os
os.chmod('/work/ro/a.csv', 0o644)
os.chmod('/work/ro', 0o755)
os.remove('/work/ro/a.csv')
os.rmdir('/work/ro')
open('/work/ro', 'w').write('a file now')
open('/work/result.txt', 'w').write('ok')`);
    const next = await den.run("import os\n(os.path.isdir('/work/ro'), open('/work/ro/a.csv').read())");
    const list = (await den.list()).map((f) => f.path);
    await den.close();
    // The same answer from a runtime adapter.
    const adapter = { start() {}, close() {}, run: () => ({ files: { "/work/ro/a.csv": null, "/work/ro": "a file now", "/work/result.txt": "ok" } }) };
    const ad = await openDen({ name: "guarded-holder-adapter", runtime: adapter, readOnlyPaths: ["/work/ro/a.csv"] });
    await ad.writeFile("/work/ro/a.csv", "keep");
    const adRun = await ad.run("x");
    const adList = (await ad.list()).map((f) => f.path);
    await ad.close();
    return { error: run.error, files: run.files, stderr: run.stderr, next: next.result, list, ad: { error: adRun.error, files: adRun.files, stderr: adRun.stderr, list: adList } };
  });
  assert.equal(r.ad.error, null, JSON.stringify(r.ad));
  assert.deepEqual(r.ad.files, { created: ["/work/result.txt"], changed: [], deleted: [] });
  assert.match(r.ad.stderr, /"\/work\/ro" was not kept: read-only paths \(readOnlyPaths\) lie inside it/);
  assert.deepEqual(r.ad.list, ["/work/result.txt", "/work/ro/a.csv"]);
  assert.equal(r.error, null, JSON.stringify(r));
  assert.deepEqual(r.files, { created: ["/work/result.txt"], changed: [], deleted: [] });
  assert.match(r.stderr, /"\/work\/ro" was not kept: read-only paths \(readOnlyPaths\) lie inside it/);
  assert.equal(r.next, "(True, 'keep')");
  assert.deepEqual(r.list, ["/work/result.txt", "/work/ro/a.csv"]);
});

test(`${B}: readOnlyPaths: the code reads them but cannot change them (not even by changing their mode); the host can; forks and the element keep them`, async () => {
  await open(page, "guarded", null, { readOnlyPaths: ["/work/data", "/drop/config.json", "/out/report", "/work/keep/deep", "/work/later/deep"] });
  const r = await page.evaluate(async () => {
    const den = window.dens.guarded;
    await den.writeFile("/work/data/a.csv", "x,y\n1,2\n");
    await den.writeFile("/work/data/sub/b.txt", "b");
    await den.writeFile("/drop/config.json", '{"k": 1}');
    await den.writeFile("/work/free.txt", "free");
    await den.writeFile("/work/keep/deep/x.txt", "kept");
    const ATTEMPT = `
import os, json
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "ok"
    except Exception as e:
        out[name] = type(e).__name__
`;
    const tries = await den.run(`${ATTEMPT}
attempt("read", lambda: open('/work/data/a.csv').read())
attempt("list", lambda: os.listdir('/work/data'))
attempt("write", lambda: open('/work/data/a.csv', 'w').write('gone'))
attempt("append", lambda: open('/work/data/sub/b.txt', 'a').write('more'))
attempt("create", lambda: open('/work/data/new.csv', 'w').write('n'))
attempt("mkdir", lambda: os.mkdir('/work/data/d'))
attempt("delete", lambda: os.remove('/work/data/a.csv'))
attempt("config", lambda: open('/drop/config.json', 'w').write('{}'))
attempt("free", lambda: open('/work/free.txt', 'w').write('changed'))
attempt("other", lambda: open('/drop/other.txt', 'w').write('o'))
# What the modes alone could not stop: from a folder that is not covered.
attempt("delete_outside", lambda: os.remove('/drop/config.json'))
attempt("rename_outside", lambda: os.rename('/drop/config.json', '/drop/moved.json'))
attempt("replace", lambda: os.replace('/drop/other.txt', '/drop/config.json'))
attempt("move_folder", lambda: os.rename('/work/data', '/work/elsewhere'))
attempt("move_holder", lambda: os.rename('/work/keep', '/work/kept'))
attempt("lock_then_move", lambda: (os.chmod('/work/keep', 0), os.rename('/work/keep', '/work/kept')))
attempt("move_into", lambda: (os.makedirs('/tmp/m/deep'), os.rename('/tmp/m', '/work/later')))
attempt("make_absent", lambda: os.makedirs('/out/report/x'))
attempt("create_absent", lambda: open('/out/report', 'w').write('r'))
attempt("exists_ok", lambda: os.makedirs('/work/data', exist_ok=True))
attempt("dir_error_kept", lambda: os.remove('/work/data'))
print(json.dumps(out, sort_keys=True))`);
    // Code that makes them writable again changes its sandbox, not the den.
    const forced = await den.run(`
import os
os.chmod('/work/data/a.csv', 0o644)
open('/work/data/a.csv', 'w').write('forced')
os.chmod('/work/data', 0o755)
open('/work/data/made.csv', 'w').write('m')
os.chmod('/work/data/sub', 0o755)
os.remove('/work/data/sub/b.txt')
os.chmod('/drop/config.json', 0o644)
os.remove('/drop/config.json')
open('/work/data/a.csv').read()`);
    const after = await den.run("import os\n(open('/work/data/a.csv').read(), os.path.exists('/work/data/made.csv'), open('/work/data/sub/b.txt').read(), open('/drop/config.json').read())");
    const js = await den.run(`
let code;
try {
  await fs.writeFile("/work/data/a.csv", "js");
} catch (e) {
  code = [e.name, e.code, e.message];
}
code`, { lang: "javascript" });
    const again = await den.run(`${ATTEMPT}
attempt("write", lambda: open('/work/data/a.csv', 'w').write('gone'))
print(json.dumps(out))`);
    // The host owns the files: its writes go through, and the code sees them read-only.
    await den.writeFile("/work/data/a.csv", "host update");
    const hostWrite = await den.run("open('/work/data/a.csv').read()");
    const list = (await den.list()).map((f) => f.path);
    // A fork keeps them.
    const fork = await den.fork({ name: "guarded-fork" });
    const forkTry = await fork.run("try:\n    open('/work/data/a.csv', 'w').write('f')\n    r = 'written'\nexcept PermissionError:\n    r = 'refused'\nr");
    await fork.close();
    // Bad lists are a DenError naming the option.
    const bad = [];
    for (const readOnlyPaths of [["/etc"], "/work/data", [1], Array.from({ length: 257 }, (_, i) => `/work/${i}`)]) {
      try {
        await window.foxden.openDen({ name: "guarded-bad", runtime: window.foxden.iframeRuntime(), readOnlyPaths });
        bad.push("opened");
      } catch (e) {
        bad.push(`${e.name}:${e.code}:${e.option}:${e.message}`);
      }
    }
    // The element's attribute.
    const el = document.createElement("foxden-den");
    el.name = "guarded-el";
    el.setAttribute("read-only-paths", "/work/in  /drop/x.txt");
    document.body.append(el);
    await el.ready;
    await el.writeFile("/work/in/a.txt", "a");
    const elTry = await el.run("try:\n    open('/work/in/a.txt', 'w').write('e')\n    r = 'written'\nexcept PermissionError:\n    r = 'refused'\nr");
    const elProp = el.readOnlyPaths;
    el.remove();
    await den.close();
    return JSON.stringify({ tries, forced, after, js, again, hostWrite, list, forkTry, bad, elTry, elProp });
  }).then(JSON.parse);
  assert.equal(r.tries.error, null, JSON.stringify(r.tries));
  assert.deepEqual(JSON.parse(r.tries.stdout), {
    read: "ok",
    list: "ok",
    write: "PermissionError",
    append: "PermissionError",
    create: "PermissionError",
    mkdir: "PermissionError",
    delete: "PermissionError",
    config: "PermissionError",
    free: "ok",
    other: "ok",
    delete_outside: "PermissionError",
    rename_outside: "PermissionError",
    replace: "PermissionError",
    move_folder: "PermissionError",
    move_holder: "PermissionError",
    lock_then_move: "PermissionError",
    move_into: "PermissionError",
    make_absent: "PermissionError",
    create_absent: "PermissionError",
    exists_ok: "ok",
    dir_error_kept: "IsADirectoryError",
  });
  assert.deepEqual(r.tries.files, { created: ["/drop/other.txt"], changed: ["/work/free.txt"], deleted: [] });
  // Within its run the code sees what it did; none of it is kept, and stderr says so.
  assert.equal(r.forced.error, null, JSON.stringify(r.forced));
  assert.equal(r.forced.result, "'forced'");
  assert.deepEqual(r.forced.files, { created: [], changed: [], deleted: [] });
  for (const p of ["/work/data/a.csv", "/work/data/made.csv"]) {
    assert.match(r.forced.stderr, new RegExp(`foxden: "${p}" was not kept: it is read-only \\(readOnlyPaths\\)`));
  }
  for (const p of ["/work/data/sub/b.txt", "/drop/config.json"]) {
    assert.match(r.forced.stderr, new RegExp(`foxden: the deletion of "${p}" was not kept: it is read-only`));
  }
  // The den's versions are back before the next run; what the code made is gone; modes too.
  assert.equal(r.after.result, `('x,y\\n1,2\\n', False, 'b', '{"k": 1}')`, JSON.stringify(r.after));
  assert.deepEqual(JSON.parse(r.again.stdout), { write: "PermissionError" });
  assert.equal(r.js.error, null, JSON.stringify(r.js));
  assert.equal(r.js.result, '["FsError", "EACCES", "fs.writeFile: /work/data/a.csv: permission denied (read-only)"]');
  assert.equal(r.hostWrite.result, "'host update'");
  assert.deepEqual(r.list, ["/drop/config.json", "/drop/other.txt", "/work/data/a.csv", "/work/data/sub/b.txt", "/work/free.txt", "/work/keep/deep/x.txt"]);
  assert.equal(r.forkTry.result, "'refused'", JSON.stringify(r.forkTry));
  assert.equal(r.bad.length, 4);
  for (const b of r.bad) assert.match(b, /^DenError:bad-option:readOnlyPaths:/);
  assert.match(r.bad[0], /a read-only path must be a den path: invalid path "\/etc"/);
  assert.match(r.bad[3], /257 read-only paths, more than 256/);
  assert.equal(r.elTry.result, "'refused'", JSON.stringify(r.elTry));
  assert.equal(r.elProp, "/work/in  /drop/x.txt");
});
