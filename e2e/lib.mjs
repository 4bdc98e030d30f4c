// Shared harness for the browser tests: launches Debian's Chromium or Firefox ESR through
// puppeteer-core with every non-loopback request sent to the logging proxy that xtask runs,
// and reads the server and proxy logs to check that probe markers never reached them.
import puppeteer from "puppeteer-core";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const BROWSER = process.env.FOXDEN_BROWSER || "chromium";
export const BASE = process.env.FOXDEN_BASE;
export const COI_BASE = process.env.FOXDEN_COI_BASE;
const PROXY = process.env.FOXDEN_PROXY;
if (!BASE || !PROXY) throw new Error("run the browser tests through `cargo xtask e2e` (it starts the servers)");

/**
 * Launches the browser under test with the proxy settings. Options (for the extension suite):
 * `firefoxArgs`, `firefoxPrefs(profile)` (extra prefs), `chromium` (extra launch options).
 * Resolves `{ browser, profile, close }`.
 */
export async function launch(opts = {}) {
  const profile = mkdtempSync(join(tmpdir(), `foxden-${BROWSER}-`));
  let browser;
  if (BROWSER === "firefox") {
    const [host, port] = PROXY.split(":");
    browser = await puppeteer.launch({
      browser: "firefox",
      executablePath: "/usr/bin/firefox-esr",
      headless: true,
      userDataDir: profile,
      args: opts.firefoxArgs || [],
      extraPrefsFirefox: {
        ...(opts.firefoxPrefs ? opts.firefoxPrefs(profile) : {}),
        "network.proxy.type": 1,
        "network.proxy.http": host,
        "network.proxy.http_port": Number(port),
        "network.proxy.ssl": host,
        "network.proxy.ssl_port": Number(port),
        "network.proxy.share_proxy_settings": true,
        "network.proxy.allow_hijacking_localhost": false,
        "network.proxy.no_proxies_on": "",
        "network.dns.disableIPv6": true,
      },
    });
  } else {
    browser = await puppeteer.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      userDataDir: profile,
      ...(opts.chromium || {}),
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // window.gc() and exact performance.memory figures, for the heap figures of the load test.
        "--js-flags=--expose-gc",
        "--enable-precise-memory-info",
        `--proxy-server=http://${PROXY}`,
      ],
    });
  }
  const close = async () => {
    await browser.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { browser, profile, close };
}

/** Opens a page and collects its errors (and, in Chromium, those of its frames and workers). */
export async function openPage(browser, path = "/e2e/index.html", base = BASE) {
  const page = await browser.newPage();
  const errors = [];
  const logs = [];
  page.on("pageerror", (e) => {
    const text = String(e && e.message ? e.message : e);
    // Firefox logs this (from the worker's realm, which WebDriver BiDi reports with the page's)
    // when the den page terminates a worker in the middle of a JSPI call: the restart after a
    // timeout or Stop of a run entered through JSPI (an interactive run on a den without
    // cross-origin isolation, a run on a den with network). No page script sees it, and
    // Chromium, which reports its workers' errors too, logs nothing then.
    if (BROWSER === "firefox" && text === "uncaught exception: undefined") {
      console.log("# firefox: a worker terminated inside a JSPI call logged 'uncaught exception: undefined'");
      return;
    }
    errors.push(text);
  });
  page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  await page.goto(base + path, { waitUntil: "load" });
  await page.waitForFunction(() => window.foxdenLoaded === true, { timeout: 30000 });
  return { page, errors, logs };
}

/** An afterEach hook that logs the page errors that appeared during each test. */
export function logNewErrors(getErrors) {
  let seen = 0;
  return (t) => {
    const errors = getErrors() || [];
    if (errors.length > seen) console.log(`# page errors after "${t.name}": ${errors.slice(seen).join(" | ")}`);
    seen = errors.length;
  };
}

export function readLog(which) {
  const file = which === "proxy" ? process.env.FOXDEN_PROXY_LOG : process.env.FOXDEN_SERVER_LOG;
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for a selector that pierces shadow roots (`host >>> inner`) and returns its handle.
 * puppeteer's waitForSelector re-checks such a selector only when the page's light DOM
 * changes (a MutationObserver on the document sees nothing inside a shadow root), so a node
 * that appears in the shadow root after the last light-DOM change is never seen: this polls.
 */
export async function waitForDeep(page, selector, timeout = 30000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const handle = await page.$(selector);
    if (handle) return handle;
    if (Date.now() > deadline) throw new Error(`${selector} did not appear within ${timeout} ms`);
    await sleep(50);
  }
}

export function marker(tag) {
  return `fxprobe-${tag}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** Opens the quickstart den in the page (memory store, default runtime). */
export async function openQuickDen(page, name = "notes", extra = {}) {
  return page.evaluate(
    async (name, extra) => {
      const { openDen, iframeRuntime, memoryStore } = window.foxden;
      window.dens = window.dens || {};
      const den = await openDen({
        name,
        store: memoryStore(),
        runtime: iframeRuntime({ denUrl: "/den/den.html", pyodideUrl: "/pyodide/", ...(extra.runtime || {}) }),
        ...(extra.den || {}),
      });
      window.dens[name] = den;
      return den.info;
    },
    name,
    extra,
  );
}
