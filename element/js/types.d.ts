// Types of foxden's API, shared by its two entry modules: dist/foxden.js (foxden.d.ts adds
// <foxden-den>) and dist/api.js (api.d.ts, the API alone). The functions are implemented in Rust
// (see foxden_wasm.d.ts for the raw wasm-bindgen declarations); these are the precise shapes.

export type Isolation = "auto" | "manifest-sandbox" | "iframe-sandbox";

export interface IframeRuntimeOptions {
  /** URL of den.html. Default: `./den/den.html` next to foxden.js. */
  denUrl?: string;
  /** Folder with pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json (314.0.7). Default: `./pyodide/` next to foxden.js. */
  pyodideUrl?: string;
  /** Default "auto": manifest-sandbox on an extension page, else iframe-sandbox. */
  isolation?: Isolation;
  /** How long openDen waits for the runtime (ms). Default 60000. */
  loadTimeoutMs?: number;
  /** Where the (invisible) iframe goes. Default: document.body. */
  container?: Element;
  /** Keep a memory snapshot of a fresh interpreter in this page's Cache Storage
   * (`foxden-warm-v2`, keyed by the SHA-256 of the Pyodide files and verified before use) so a
   * later visit's den resumes from it instead of booting. Default true. */
  warmStart?: boolean;
  /** Keep a standby interpreter booted ahead of need, so a timeout or `reset()` swaps it in at
   * once instead of booting (costs one more interpreter's memory per den). Default true. */
  standby?: boolean;
}

export interface IframeRuntime extends Required<Omit<IframeRuntimeOptions, "container">> {
  readonly kind: "iframe";
  readonly container: Element | null;
}

export interface MemoryStore { readonly kind: "memory" }
export interface IdbStore { readonly kind: "idb"; readonly dbName: string }
export type Store = MemoryStore | IdbStore;

export interface OpenDenOptions {
  /** 1-64 ASCII letters, digits, '-' or '_'. One name can be open once per page. */
  name: string;
  /** iframeRuntime() (the default), or a runtime adapter of your own. */
  runtime?: IframeRuntime | RuntimeAdapter;
  /** Default memoryStore(). */
  store?: Store;
  /** Start from snapshot bytes (replaces the store's files). */
  snapshot?: Uint8Array | ArrayBuffer;
  /** Cap on the total size of the den's files. Default 256 MiB. */
  maxDenBytes?: number;
  /** How long asyncio tasks / JS timers left by a run may live before the worker restarts (ms). Default 200. */
  killGraceMs?: number;
  /** Cap on the worker's WebAssembly memory; past it Python gets MemoryError and keeps running. Default 2 GiB, 128 MiB to 4 GiB. */
  maxMemoryBytes?: number;
  /** Cap on the size of each file a write, run or restore creates or changes; a batch with a
   * larger file is refused whole (`DenError` code "cap", or a run's `error.kind` "storage").
   * Default 10 MiB, 0 to 4 GiB. */
  maxFileBytes?: number;
  /** Cap on the number of files in the den. Default 10000, 1 to 10000. */
  maxFiles?: number;
  /** Files the store writes or deletes per sliding minute, by writes, runs and restores
   * together (a file rewritten with the same content, or given new times by a restore, counts
   * too); a batch that would go over is refused whole. Default 0 (no limit). */
  maxWritesPerMinute?: number;
  /** Asset loading progress (bytes). */
  onProgress?: (p: { loaded: number; total: number }) => void;
  /** Pure-Python wheels (`py3-none-any`) to install in the den, each pinned by SHA-256: the host
   * fetches `url` (or takes `bytes`), checks the hash, and every interpreter of the den installs
   * them before any run, with no network (kept across timeouts, restarts and `reset()`). A bad
   * one makes `openDen` reject with `DenLoadError` stage "package" naming it; nothing is
   * installed. At most 64 wheels, 64 MiB in all. See the README's "Packages". */
  packages?: PackageSpec[];
  /** Network for Python's `foxden.fetch` (and `urllib.request`, the sandbox's `fetch()`), made
   * by the host page after checking the allowlist, method, rate and sizes (the sandbox itself can
   * still reach nothing). Default: none (every `foxden.fetch` is refused with `network-off`). */
  network?: NetworkOptions;
  /** Files and folders (den paths, e.g. `["/work/data", "/drop/config.json"]`, at most 256) the
   * code may read but not change: in the sandbox they are read-only (a write raises
   * `PermissionError`), and a change that gets through anyway (the code changed the mode back)
   * is not kept: the run's stderr names it and the den's version is back before the next run.
   * The host's own `writeFile`, `deleteFile` and `restore` are not limited. Forks keep them. */
  readOnlyPaths?: string[];
}

/** A wheel to install: fetched from `url` by the host page, or given as `bytes` with its file
 * name; `sha256` is 64 hex digits. A string is the attribute form `url#sha256=<64 hex>`. */
export type PackageSpec =
  | { url: string; sha256: string }
  | { name: string; bytes: Uint8Array | ArrayBuffer; sha256: string }
  | string;

/** `openDen({ network })`: what `foxden.fetch` may reach. See docs/network.md. */
export interface NetworkOptions {
  /** URL patterns: `scheme://host[:port]/path-glob`, e.g. `"http://127.0.0.1:8080/api/*"`,
   * `"https://api.example.com/v1/*"`, `"https://*.example.com/*"` (subdomains). The port `*`
   * matches any port (`http://127.0.0.1:*` then the path; not written out here, as its `*` and
   * `/` would end this comment); no port means the scheme's default. `*` in the path matches
   * any characters (query included). 1 to 64. */
  allow: string[];
  /** Allowed methods (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS). Default ["GET"]. */
  methods?: string[];
  /** Requests made per sliding minute, per den; the next one is refused (`rate`). Default 5, 1 to 10000. */
  perMinute?: number;
  /** Cap on each answer's body; a longer one is cut and refused (`too-large`). Default 1 MiB, 0 to 256 MiB. */
  maxResponseBytes?: number;
}

/** Why a `foxden.fetch` was refused or did not complete. */
export type RefusedBecause =
  | "network-off" | "bad-url" | "not-allowed" | "method" | "rate" | "bad-request"
  | "redirect" | "too-large" | "failed" | "aborted";

/** One `foxden.fetch` of a run, allowed or refused (`run.requests`, the `request` event). */
export interface NetworkRequest {
  /** The URL (canonical: lower-case host, no default port, no fragment). */
  url: string;
  method: string;
  /** The HTTP status, when an answer came (also with `too-large`), else null. */
  status: number | null;
  /** Why it was refused or did not complete, or null when the answer was delivered. */
  refusedBecause: RefusedBecause | null;
  /** The refusal's message (what Python's `foxden.FetchError` says), or "". */
  message: string;
  /** Answer bytes delivered to Python. */
  bytes: number;
  durationMs: number;
}

/** A request as it is reported during a run (`onRequest`, the `request` event). */
export interface NetworkRequestChunk extends NetworkRequest { runId: number }

export interface OutputChunk { runId: number; stream: "stdout" | "stderr"; text: string }

/** A rich display: a MIME bundle, e.g. `{ "image/png": Uint8Array, "text/plain": "<Figure>" }`.
 * Types: `image/png` and `image/jpeg` (bytes); `image/svg+xml`, `text/html`, `text/markdown`,
 * `application/json`, `text/plain` (text). `text/plain` is always there. */
export type DisplayBundle = { [mime: string]: string | Uint8Array };

/** One display of a run, as it is shown (in order with the output). */
export interface DisplayChunk { runId: number; data: DisplayBundle }

/** What `onInput` is called with: `input()` of run `runId` waits for a line. */
export interface InputRequest { runId: number; prompt: string }

export interface RunOptions {
  /** Default 30000. On timeout the worker is killed and restarted: files kept, variables lost. */
  timeoutMs?: number;
  /** Cap on stdout + stderr bytes together, and on each of `result` and the `error.message`
   * and `error.traceback` that the code raised; foxden's own notes at the end of stderr (files
   * not kept, and why) may pass it by 1 KiB. A cut makes the run `truncated`. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Called with each chunk of output as it is printed. */
  onOutput?: (chunk: OutputChunk) => void;
  /** Called with each display (`foxden.display(obj)`, or a last expression with `_repr_*_`). */
  onDisplay?: (chunk: DisplayChunk) => void;
  /** Called with each `foxden.fetch` request as it ends (allowed or refused). */
  onRequest?: (chunk: NetworkRequestChunk) => void;
  /** What `input()` and `sys.stdin` read, line by line, then EOF (up to 16 MiB). Without it,
   * reading stdin raises `EOFError` saying how to give some. */
  stdin?: string;
  /** Interactive `input()` (runs without `stdin`, on a cross-origin isolated den:
   * `den.info.interruptible` is true). Python blocks until this answers: a string (a line; up to
   * 1 MiB), or null for end of input (`EOFError`); a throw or another type also ends input, with
   * a message. The run's timeout does not count the time spent waiting for the answer. Without
   * isolation, `input()` raises `EOFError` saying how to enable it. */
  onInput?: (request: InputRequest) => string | null | Promise<string | null>;
  /** The language of the code. Default "python". "javascript" runs it in the same sandbox (the
   * den's worker, never the host page), on the same files and limits: the `fs` global reads and
   * writes the den's files, `console.log`/`console.error` stream as stdout/stderr, the last
   * expression (or a top-level `return`) is `result`. See the README, "JavaScript". */
  lang?: "python" | "javascript";
  /** Values the code gets as global variables, set before it runs (they persist like the
   * code's own): an object of names (ASCII identifiers, not `__dunders__`, at most 1 000) to JSON
   * data, at most 16 MiB as JSON. Python gets dicts, lists, str, int, float, bool and None;
   * JavaScript the parsed values. Not JSON data, or a bad name: `DenError` `bad-option`. */
  vars?: Record<string, unknown>;
  /** Aborted before the run starts (it may wait for the den's turn), the run does not start and
   * rejects with the signal's `reason`; aborted while it runs, it is stopped as by `stop()` and
   * resolves with how it ended. */
  signal?: AbortSignal;
}

export type RunErrorKind = "python" | "timeout" | "crashed" | "storage" | "javascript";

export interface RunError {
  kind: RunErrorKind;
  /** Python exception class name for kind "python" (e.g. "ZeroDivisionError"), the error's
   * name for kind "javascript" (e.g. "TypeError", "SyntaxError"; "Uncaught" for a thrown
   * non-Error value). */
  type: string;
  message: string;
  /** Python traceback text (kind "python"), or "Name: message" and the frames of the run's own
   * code (kind "javascript"), else "". */
  traceback: string;
}

export interface FileChanges { created: string[]; changed: string[]; deleted: string[] }

export interface RunResult {
  stdout: string;
  stderr: string;
  /** repr() of the last expression, or null when the code does not end with an expression. */
  result: string | null;
  error: RunError | null;
  /** Output was cut at maxOutputBytes. */
  truncated: boolean;
  files: FileChanges;
  durationMs: number;
  /** The worker was restarted after this run (timeout, crash, or leftover tasks/timers). */
  restarted: boolean;
  /** The run's displays, in order (at most 16 MiB and 1 000; `foxden.display` raises past
   * either, the display is not shown, and `truncated` is set). */
  displays: DisplayBundle[];
  /** The run's `foxden.fetch` requests, allowed or refused, in order (at most 1000). */
  requests: NetworkRequest[];
}

export interface ShellResult { stdout: string; stderr: string; code: number; truncated: boolean }

export interface FileInfo { path: string; size: number; sha256: string; mtime: number }

/** A runtime of your own instead of iframeRuntime(): the host keeps the files, store, snapshots,
 * forks, limits and events, and `run` executes the code (in a worker of yours, on a server, a test
 * double). Its answers are checked like a den page's: bounded texts, checked paths and caps.
 * `packages` and `network` need iframeRuntime(). */
export interface RuntimeAdapter {
  /** Called when a den opens (a fork opens another den: called again). A throw or rejection makes
   * openDen reject with DenLoadError stage "runtime"; not settling within 60 s, stage "timeout". */
  start(den: { den: string }): unknown;
  /** One run, one at a time per den (unless the adapter ignores an aborted `signal`). Not
   * settled within `timeoutMs` + 3 s: the run ends with error kind "timeout" (the adapter
   * enforces `timeoutMs` itself). Output streamed with `request.output` reaches `onOutput` at
   * once, the answer's when the run ends; displays shown with `request.display` reach
   * `onDisplay` at once and the result's `displays`; `request.input` asks `onInput`, and the
   * wait does not count; `onRequest` does not apply. */
  run(request: AdapterRunRequest): AdapterRunReply | Promise<AdapterRunReply>;
  /** Called when the den closes, or when its opening fails after `start` (not awaited). */
  close(den: { den: string }): unknown;
  /** `den.reset()` calls it (resolving `{ from: "adapter", bootMs: 0 }`); without it reset
   * rejects with DenError code "reset". Within 60 s (the default loadTimeoutMs). */
  reset?(den: { den: string }): unknown;
}

/** What a runtime adapter's `run` gets. */
export interface AdapterRunRequest {
  id: number;
  /** The den's name (one adapter may serve several dens: forks). */
  den: string;
  code: string;
  lang: "python" | "javascript";
  timeoutMs: number;
  maxOutputBytes: number;
  stdin: string | null;
  /** A fresh copy of the run's `vars` (names to JSON data), or null. */
  vars: Record<string, unknown> | null;
  /** Every file of the den (copies). */
  files: Record<string, Uint8Array>;
  /** Aborted when the host gives up on the run (no answer within timeoutMs + 3 s, or close()). */
  signal?: AbortSignal;
  /** Streams output while the run goes on: it reaches `onOutput` and the `output` event at once
   * and comes first in the result's `stdout`/`stderr` (the answer's texts follow it: do not send
   * them twice). Kept up to `maxOutputBytes` in all. Throws a TypeError for another stream or a
   * text that is not a string, and once the run has ended. */
  output(stream: "stdout" | "stderr", text: string): void;
  /** (Not enumerable, nor is `input`: a spread of the request leaves both out.)
   * Shows a display (a plot, a table) while the run goes on: a MIME bundle of 1 to 16 of
   * image/png and image/jpeg (bytes: a Uint8Array or an ArrayBuffer), image/svg+xml, text/html,
   * text/markdown, application/json and text/plain (strings; text/plain is added when missing,
   * as `<mime>`, as in a den page's displays). It reaches `onDisplay` at once and the result's
   * `displays`, in order with the output. Throws a
   * TypeError for anything else, and once the run has ended; a RangeError past the run's 1 000
   * displays or 16 MiB (not shown; the run is `truncated`). */
  display(bundle: DisplayBundle): void;
  /** Reads a line, as Python's `input(prompt)`: answered by the run's `onInput`, as on the
   * iframe runtime. Resolves the answer, or null at the end of input (also for a run given
   * `stdin`, which the adapter reads itself); rejects with the reason when the answer failed,
   * or when nobody answers (no `onInput`: the message says how to give one). The host's watchdog does not count the time it waits (nor
   * should the adapter's own timeout). Throws a TypeError for a prompt that is not a string
   * (it is cut at 4 096 characters), and once the run has ended. */
  input(prompt?: string): Promise<string | null>;
}

/** What it answers. `files` names only what changed: new contents, or null for a deleted file.
 * Texts are cut at `maxOutputBytes` (the run is then `truncated`); a path that breaks the rules is
 * not kept (a note on stderr); changes over the den's caps are not kept (error kind "storage");
 * a field of the wrong type refuses the whole answer (error kind "crashed", "ProtocolError"). */
export interface AdapterRunReply {
  stdout?: string;
  stderr?: string;
  result?: string | null;
  error?: RunError | null;
  files?: Record<string, Uint8Array | ArrayBuffer | ArrayBufferView | string | null>;
}

export interface DenInfo {
  kind: "iframe" | "adapter";
  isolation: Exclude<Isolation, "auto"> | "adapter";
  loadMs: number;
  /** The den page is cross-origin isolated: timeouts and Stop interrupt Python anywhere (variables
   * kept) before killing. (Without it, Python is interrupted only where it waits: see `stop()`.) */
  interruptible: boolean;
  /** "hit": resumed from the warm cache; "miss": booted (the snapshot is made and kept now);
   * "rejected": a cached snapshot did not load and is replaced; "off": warmStart is false, or a runtime adapter. */
  warmStart: "hit" | "miss" | "rejected" | "off";
  /** Where `loadMs` went (ms). `assets` (fetching the Pyodide files) runs side by side with
   * `hello` (the den page loading and checking its isolation) and with reading and verifying the
   * warm cache's snapshot; then `ready`: from handing over the assets until Python is ready, of
   * which `warm` was still spent on the warm cache (hashing the assets for its key, the read),
   * `den` passed in the den page (compiling the wasm and starting the worker, which overlap
   * `warm`, then booting) and `boot` in the worker (booting Pyodide, or resuming it from the
   * snapshot). */
  stages: { assets: number; warm: number; hello: number; ready: number; den: number; boot: number } | null;
}

/** The methods a den and a `<foxden-den>` element share (same results, same errors). */
export interface DenMethods {
  run(code: string, opts?: RunOptions): Promise<RunResult>;
  sh(command: string): Promise<ShellResult>;
  writeFile(path: string, data: string | Uint8Array | ArrayBuffer | ArrayBufferView): Promise<FileChanges>;
  readFile(path: string): Promise<Uint8Array>;
  readFile(path: string, opts: "utf-8" | { encoding: "utf-8" }): Promise<string>;
  readText(path: string): Promise<string>;
  deleteFile(path: string): Promise<FileChanges>;
  /** Every file, sorted by path; with `path`, the file at `path` or the files under the folder
   * `path` (a bad path rejects with `PathError`). */
  list(path?: string): Promise<FileInfo[]>;
  snapshot(): Promise<Uint8Array>;
  restore(bytes: Uint8Array | ArrayBuffer): Promise<FileChanges>;
  fork(opts: { name: string }): Promise<Den>;
  /** A new interpreter (Python variables gone), files kept. `from`: resumed from the memory
   * snapshot of a fresh interpreter, or booted from scratch (before that snapshot exists). */
  /** `packagesMs`: how long the new interpreter took to install the den's packages (part of `bootMs`; absent without packages). */
  reset(): Promise<{ from: "snapshot" | "scratch" | "adapter"; bootMs: number; packagesMs?: number }>;
  /** Stops the run in flight (the element's Stop button): a cross-origin isolated den interrupts
   * Python (`KeyboardInterrupt`, variables kept; restarted if it goes on 1 s later), and so does
   * any den while Python waits (`input()`, a request, an `await` of code with top-level await,
   * `time.sleep` in a run entered through JSPI: a den with `network`, an interactive run);
   * otherwise (busy code without isolation, within 400 ms)
   * the worker is restarted (`error.kind` "crashed", type "Stopped", `restarted`, files kept); a
   * run still waiting for its worker never starts (none of its code runs, variables kept;
   * "crashed", "Stopped"); an adapter's run ends at once
   * ("crashed", "Stopped") with its signal aborted. Resolves true if a run was in flight. */
  stop(): Promise<boolean>;
  /** Ends a run in flight and removes the iframe; resolves once an IndexedDB write in flight
   * ended and the name and lock are free (the den can be opened again at once). */
  close(): Promise<void>;
}

export declare class Den {
  private constructor();
  readonly name: string;
  readonly info: DenInfo;
  readonly closed: boolean;
}
/** Merged with the class: a Den has every method of DenMethods. */
export interface Den extends DenMethods {}

export declare function openDen(opts: OpenDenOptions): Promise<Den>;
export declare function iframeRuntime(opts?: IframeRuntimeOptions): IframeRuntime;
export declare function memoryStore(): MemoryStore;
export declare function idbStore(dbName?: string): IdbStore;
export declare function normalizePath(path: string): string;
export declare function runShell(
  command: string,
  files: Record<string, string | Uint8Array>,
  opts?: { maxOutputBytes?: number },
): ShellResult;
export declare function encodeSnapshot(files: Record<string, string | Uint8Array>): Uint8Array;
/** Deletes the warm cache (Cache Storage `foxden-warm-v2`); resolves true if there was one. */
export declare function clearWarmCache(): Promise<boolean>;
/** Checks every byte of a snapshot (read in place, hashed in slices) and returns a copy of each
 * file; throws `SnapshotError`. Any typed array or `DataView` at any offset is accepted. */
export declare function decodeSnapshot(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, opts?: { maxDenBytes?: number }): Record<string, Uint8Array>;
export declare function liveCounts(): { listeners: number; connections: number };

export declare class FoxdenError extends Error {}
export declare class PathError extends FoxdenError {
  readonly name: "PathError";
  readonly path: string;
  readonly rule: "empty" | "nul" | "control" | "backslash" | "absolute" | "too-long" | "dotdot" | "root" | "segment-too-long" | "too-deep" | "folder" | "unicode";
}
export declare class SnapshotError extends FoxdenError {
  readonly name: "SnapshotError";
  readonly code: string;
}
export declare class DenError extends FoxdenError {
  readonly name: "DenError";
  readonly code: "name-in-use" | "locked" | "closed" | "cap" | "conflict" | "not-found" | "bad-option" | "bad-data" | "storage" | "reset";
  readonly option?: string;
}
export declare class DenLoadError extends FoxdenError {
  readonly name: "DenLoadError";
  readonly stage: "assets" | "iframe" | "isolation" | "den-page" | "protocol" | "message" | "wasm" | "pyodide" | "timeout" | "den" | "package" | "runtime";
  /** With stage "package": the package refused (its normalized project name, or the file name). */
  readonly package?: string;
}
