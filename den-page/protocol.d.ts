// Generated from element/core/src/protocol/schema.rs by `protocol::schema::typescript()`.
// Do not edit: change the table and run `FOXDEN_BLESS=1 cargo test -p foxden-core protocol`.
//
// The messages between the host, the den page (den.js) and the worker (worker.js). A type says
// what an honest sender posts; the reader of a den page or worker message checks it anyway.

/** The protocol version a den page announces in `hello`. */
export type ProtocolVersion = 13;

/** A pure-Python wheel to install, checked by the host against its SHA-256 pin. */
export interface Wheel {
  /** The wheel's file name (`name-version-py3-none-any.whl`). */
  file: string;
  /** The wheel's bytes (copied, not transferred: kept for restarts). */
  data: Uint8Array;
}

/** A file the worker lacks, sent with a run. */
export interface PutFile {
  /** Normalized absolute path. */
  path: string;
  /** The content (its buffer is transferred). */
  data: Uint8Array;
  /** Modification time, ms since the epoch. */
  mtime: number;
}

/** A JavaScript run's code, as prepared by the host (`code` holds the rewritten text). */
export interface JsCode {
  /** Names bound by top-level `var`/`let`/`const`/`class` declarations. */
  names: string[];
  /** Names of top-level function declarations. */
  functions: string[];
  /** UTF-16 offsets in `code` where a top-level statement may start, ascending. */
  splits: number[];
  /** A `return` statement at the top level. */
  topReturn: boolean;
  /** An `await` outside functions (the code runs as an async function body). */
  topAwait: boolean;
}

/** One HTTP header (`foxden.fetch`). */
export interface HttpHeader {
  /** The header name. */
  name: string;
  /** Its value. */
  value: string;
}

/** Output printed on one stream, between two changes of stream. */
export interface OutputPart {
  /** Which stream. */
  stream: "stdout" | "stderr";
  /** The output. */
  text: string;
}

/** One MIME representation of a display: text, or bytes for images. */
export interface DisplayItem {
  /** The MIME type (`image/png`, `text/html`, …). */
  mime: string;
  /** The text of a text type, else null. */
  text: string | null;
  /** The bytes of a binary type (PNG, JPEG), else null. */
  bytes: Uint8Array | null;
}

/** Why a run failed (`run.error` of the API). */
export interface RunError {
  /** What kind of failure. */
  kind: "python" | "timeout" | "crashed" | "storage" | "javascript";
  /** The exception or error type name (at most 256 bytes). */
  type: string;
  /** The message. */
  message: string;
  /** The Python traceback, or the JavaScript stack, or empty. */
  traceback: string;
}

/** A file a run created or changed. */
export interface ChangedFile {
  /** The path in the sandbox. */
  path: string;
  /** The content (its buffer is transferred). */
  data: Uint8Array;
}

// --- host → den page (window) ---

/** (no `t`): iframe `load`, once. On window.postMessage, once. */
export interface HostToDenWindowConnect {
  /** Marks the message; after it the den page reads its parent's messages. */
  foxden: "connect";
}

/** Every message host → den page (window). */
export type HostToDenWindow = HostToDenWindowConnect;

// --- host → den page ---

/** boot: after `hello`, as soon as the assets are fetched. On window.postMessage (source checked). */
export interface HostToDenBoot {
  t: "boot";
  /** pyodide.asm.wasm, or null when it came as a stream in `wasm`. Transferred. */
  wasm: ArrayBuffer | null;
  /** python_stdlib.zip. Transferred. */
  stdlib: ArrayBuffer;
  /** pyodide-lock.json. */
  lock: string;
  /** Cap on each worker's WebAssembly memory (0: none). */
  maxMemoryBytes: number;
  /** Keep a standby interpreter booted. */
  standby: boolean;
  /** Wheels every run worker installs after it boots (empty: none). */
  packages: Wheel[];
  /** The length of the warm cache's snapshot, read before the entry is checked (a hint; 0: no entry): the den page boots its first worker at once, and the snapshot follows in `warm`. */
  snapshotBytes: number;
}

/** wasm: after `hello`, before `boot`, as soon as the wasm's download started (the den page compiles it while it downloads). On window.postMessage (source checked). */
export interface HostToDenWasm {
  t: "wasm";
  /** pyodide.asm.wasm's body (the host reads a tee of it for its checks and the warm cache key). Transferred. */
  wasm: ReadableStream<Uint8Array>;
}

/** warm: after `boot`, once the warm cache was read (the den page compiles the wasm and starts its first worker meanwhile; that worker boots now). On window.postMessage (source checked). */
export interface HostToDenWarm {
  t: "warm";
  /** The warm cache's snapshot, packed (all-zero pages left out; its SHA-256 and layout checked by the host), or null. Transferred. */
  snapshot: Uint8Array | null;
  /** With `snapshot`: how to unpack it, as (from, to, length) triples of byte offsets (checked by the host); else null. */
  copies: number[] | null;
  /** With `snapshot`: its unpacked length; else 0. */
  snapshotBytes: number;
  /** The host's warm cache wants the snapshot. */
  wantSnapshot: boolean;
}

/** run: each run. On window.postMessage (source checked). */
export interface HostToDenRun {
  t: "run";
  /** The run id (the host's counter). */
  id: number;
  /** The code (Python, or JavaScript as prepared by the host). */
  code: string;
  /** The run's timeout. */
  timeoutMs: number;
  /** Cap on stdout + stderr. */
  maxOutputBytes: number;
  /** How long JS left behind by the run may live. */
  killGraceMs: number;
  /** Files the worker lacks. Transferred. */
  put: PutFile[];
  /** Paths the worker must delete. */
  del: string[];
  /** What `input()` and `sys.stdin` read, then EOF; null: no scripted input. */
  stdin: string | null;
  /** `vars`: JSON text of an object whose names (ASCII identifiers, no dunders, checked by the host) the worker sets in the code's global scope before it runs; null: none. */
  vars: string | null;
  /** Without `stdin`, the host answers `input()` (`onInput` or the element's `input` event); only a cross-origin isolated den can ask. */
  interactive: boolean;
  /** The den has `network` options (the host makes its requests): a worker with JSPI enters the run through it, so that `urllib.request` can wait for the host's answer. */
  network: boolean;
  /** The language of `code`. */
  lang: "python" | "javascript";
  /** For JavaScript: what `foxden_core::javascript::prepare` found in the code; else null. */
  js: JsCode | null;
  /** Stopped as it was posted (`stop()` from the run's own start listener): the den page never starts it; it hands the worker the files without the code and answers `Stopped`. */
  stopped: boolean;
  /** The den's read-only paths, normalized (`foxden_core::readonly`): the worker marks the files and folders they cover read-only as it places them (the host keeps them either way). */
  readOnly: string[];
}

/** reset: `den.reset()`. On window.postMessage (source checked). */
export interface HostToDenReset {
  t: "reset";
  /** The reset's id (same counter as runs). */
  id: number;
}

/** stop: the element's Stop button: Python gets KeyboardInterrupt where it can (an isolated den's signal; where it waits, sleeps or awaits: `interrupt`); the worker is killed if it is still running 1 s later, or 400 ms after a worker without the signal did not answer `interrupted` (busy). On window.postMessage (source checked). */
export interface HostToDenStop {
  t: "stop";
  /** The run to stop (ignored unless it is the one running). */
  id: number;
}

/** input-reply: the answer to an `input` request. On window.postMessage (source checked). */
export interface HostToDenInputReply {
  t: "input-reply";
  /** The run that asked. */
  id: number;
  /** The line typed (≤ 1 MiB UTF-8), or null: end of input. */
  text: string | null;
  /** Why there is no answer (`input()` raises EOFError with it), or null. */
  error: string | null;
}

/** fetch-reply: the host made (or refused) a run's `fetch`. On window.postMessage (source checked). */
export interface HostToDenFetchReply {
  t: "fetch-reply";
  /** The run. */
  id: number;
  /** The request it answers. */
  req: number;
  /** The HTTP status, or null when refused. */
  status: number | null;
  /** Answer headers the browser exposes (at most 64, 16 KiB). */
  headers: HttpHeader[];
  /** The answer body (at most `network.maxResponseBytes`), or null when refused. Transferred. */
  body: Uint8Array | null;
  /** Why the request was refused or did not complete (`refusedBecause`), or null. */
  refused: "network-off" | "bad-url" | "not-allowed" | "method" | "rate" | "bad-request" | "redirect" | "too-large" | "failed" | "aborted" | null;
  /** The refusal's message, or empty. */
  message: string;
}

/** Every message host → den page. */
export type HostToDen = HostToDenBoot | HostToDenWasm | HostToDenWarm | HostToDenRun | HostToDenReset | HostToDenStop | HostToDenInputReply | HostToDenFetchReply;

// --- den page → host ---

/** hello: isolation checked. On window.postMessage (source checked). */
export interface DenToHostHello {
  t: "hello";
  /** The protocol version the den page speaks. */
  protocol: number;
}

/** load-error: isolation or boot failed. On window.postMessage (source checked). */
export interface DenToHostLoadError {
  t: "load-error";
  /** Where it failed (`DenLoadError.stage`). */
  stage: "isolation" | "message" | "wasm" | "pyodide" | "package" | "den";
  /** What failed. */
  message: string;
  /** The package whose wheel was refused (stage `package`). */
  package?: string;
}

/** ready: first worker booted. On window.postMessage (source checked). */
export interface DenToHostReady {
  t: "ready";
  /** Time the worker took to boot. */
  bootMs: number;
  /** Time from `boot` to ready. */
  denMs: number;
  /** A timeout interrupts Python instead of killing the worker. */
  interruptible: boolean;
  /** What became of the warm cache's snapshot. */
  warm: "hit" | "miss" | "rejected";
  /** Time the wheels took to install (part of `bootMs`; absent without packages). */
  packagesMs?: number;
}

/** snapshot: once, when the maker made it and the host asked (`wantSnapshot`). On window.postMessage (source checked). */
export interface DenToHostSnapshot {
  t: "snapshot";
  /** A copy of the memory snapshot of a fresh interpreter. Transferred. */
  snapshot: Uint8Array;
}

/** queued: on arrival, only for a run that cannot start at once (its worker is booting): the watchdog gives it `loadTimeoutMs` + 3 s until `started`. On window.postMessage (source checked). */
export interface DenToHostQueued {
  t: "queued";
  /** The run. */
  id: number;
}

/** started: a `queued` run was handed to its booted worker (its watchdog clock starts; other runs started when posted). On window.postMessage (source checked). */
export interface DenToHostStarted {
  t: "started";
  /** The run. */
  id: number;
}

/** out: streamed, batched ≤ 15 ms / 8 KiB / 1 024 parts. On window.postMessage (source checked). */
export interface DenToHostOut {
  t: "out";
  /** The run. */
  id: number;
  /** The output in print order, at most 1 024 parts (`MAX_OUT_PARTS`). */
  parts: OutputPart[];
}

/** display: `foxden.display(obj)`, or a last expression with `_repr_*_` methods. On window.postMessage (source checked). */
export interface DenToHostDisplay {
  t: "display";
  /** The run. */
  id: number;
  /** The representations, richest first, `text/plain` last. */
  bundle: DisplayItem[];
}

/** input: `input()` in a run with `interactive` (on a den without cross-origin isolation, through JSPI); the run's timeout stops until `input-reply`. On window.postMessage (source checked). */
export interface DenToHostInput {
  t: "input";
  /** The run. */
  id: number;
  /** The prompt `input()` was given (already printed to stdout), cut to 4096 chars. */
  prompt: string;
}

/** done: the run ended. On window.postMessage (source checked). */
export interface DenToHostDone {
  t: "done";
  /** The run. */
  id: number;
  /** `repr()` of the last expression, or null. */
  result: string | null;
  /** Why the run failed, or null. */
  error: RunError | null;
  /** Output was cut at `maxOutputBytes`. */
  truncated: boolean;
  /** Files created or changed. Transferred. */
  changed: ChangedFile[];
  /** Paths deleted. */
  deleted: string[];
  /** 0, or how many files the run changed when that is more than a den can hold (10 000): then `changed` and `deleted` are empty and none of it is kept. */
  tooManyFiles: number;
  /** The worker was restarted (Python variables lost). */
  restarted: boolean;
  /** Time the run took in the worker. */
  durationMs: number;
}

/** reset-done: new worker booted (or failed to). On window.postMessage (source checked). */
export interface DenToHostResetDone {
  t: "reset-done";
  /** The reset. */
  id: number;
  /** How the new interpreter booted (absent on error). */
  from?: "scratch" | "snapshot";
  /** Time it took to boot (absent on error). */
  bootMs?: number;
  /** Time its wheels took to install (part of `bootMs`). */
  packagesMs?: number;
  /** Why no interpreter booted (absent on success). */
  error?: string;
}

/** fetch: `foxden.fetch(url, …)` in a run, checked by the den page. On window.postMessage (source checked). */
export interface DenToHostFetch {
  t: "fetch";
  /** The run. */
  id: number;
  /** The request's number in the run (the worker's counter). */
  req: number;
  /** The URL as Python wrote it (the host parses it). */
  url: string;
  /** The method as Python wrote it. */
  method: string;
  /** Request headers. */
  headers: HttpHeader[];
  /** The request body, or null. Transferred. */
  body: Uint8Array | null;
}

/** Every message den page → host. */
export type DenToHost = DenToHostHello | DenToHostLoadError | DenToHostReady | DenToHostSnapshot | DenToHostQueued | DenToHostStarted | DenToHostOut | DenToHostDisplay | DenToHostInput | DenToHostDone | DenToHostResetDone | DenToHostFetch;

// --- den page → worker ---

/** boot: worker start. On the worker's global channel. */
export interface DenToWorkerBoot {
  t: "boot";
  /** `run` runs code; `maker` makes the snapshot and is terminated. */
  role: "run" | "maker";
  /** 128 random bits (hex): the worker posts everything as `[key, message]`, and the den page reads nothing else from the worker's global channel. */
  key: string;
  /** The compiled pyodide.asm.wasm. */
  module: WebAssembly.Module;
  /** A copy of python_stdlib.zip. Transferred. */
  stdlib: ArrayBuffer;
  /** pyodide-lock.json. */
  lock: string;
  /** Pyodide's interrupt buffer, this worker's own (a signal left unread by a killed worker never reaches the next), when the den page is cross-origin isolated. */
  interrupt: Int32Array | null;
  /** The input buffer (state, length, then up to 1 MiB of UTF-8), when isolated. */
  input: Int32Array | null;
  /** Cap on the WebAssembly memory (0: none). */
  maxMemoryBytes: number;
  /** A copy of the snapshot to resume from (role `run`), or null. Transferred. */
  snapshot: Uint8Array | null;
  /** With a packed `snapshot`: the (from, to, length) triples that unpack it; null when it is not packed. */
  copies: number[] | null;
  /** The unpacked snapshot's length. With `snapshot` null and this above 0, the snapshot follows (`snapshot`): the worker instantiates Pyodide meanwhile. */
  snapshotBytes: number;
  /** Wheels to install before any run (role `run`; the maker gets none). */
  packages: Wheel[];
  /** An earlier worker of this den page checked these wheels in full: skip re-hashing each file. */
  verified: boolean;
  /** The files the den page's first worker installed from these wheels (before any user code): written as they are, instead of installing again; or null. */
  installed: ChangedFile[] | null;
}

/** run: the host's `run`, forwarded as it came. On the worker's global channel. The same message as `HostToDenRun`. */
export type DenToWorkerRun = HostToDenRun;

/** fetch-reply: the host's `fetch-reply` for the run in flight, forwarded as it came. On the worker's global channel. The same message as `HostToDenFetchReply`. */
export type DenToWorkerFetchReply = HostToDenFetchReply;

/** input-reply: the host's `input-reply` for the run in flight, checked (at most 1 MiB), to a worker without an input buffer (no cross-origin isolation) that waits through JSPI. On the worker's global channel. The same message as `HostToDenInputReply`. */
export type DenToWorkerInputReply = HostToDenInputReply;

/** interrupt: the run in flight was stopped, or timed out, where Python can be interrupted: what it waits for from the host (`input()` through JSPI; an isolated worker reads state 4 from its input buffer instead; requests) and its `time.sleep` end, raising KeyboardInterrupt in Python. On the worker's global channel. */
export interface DenToWorkerInterrupt {
  t: "interrupt";
  /** The run stopped. */
  id: number;
}

/** snapshot: once, to a worker booted with `snapshotBytes` and no snapshot, when the host's `warm` came. On the worker's global channel. */
export interface DenToWorkerSnapshot {
  t: "snapshot";
  /** The snapshot of `warm` (a copy), or null: the worker then boots from scratch. Transferred. */
  snapshot: Uint8Array | null;
  /** As in `boot`. */
  copies: number[] | null;
}

/** Every message den page → worker. */
export type DenToWorker = DenToWorkerBoot | DenToWorkerRun | DenToWorkerFetchReply | DenToWorkerInputReply | DenToWorkerInterrupt | DenToWorkerSnapshot;

// --- worker → den page ---

/** booted: role `run` booted. On the worker's global channel, as `[key, message]`. */
export interface WorkerToDenBooted {
  t: "booted";
  /** Time the boot took. */
  ms: number;
  /** How it booted. */
  from: "scratch" | "snapshot";
  /** Time the wheels took to install (part of `ms`). */
  packagesMs?: number;
  /** The files the install wrote, when it checked the wheels in full (first worker). Transferred. */
  installed?: ChangedFile[];
}

/** boot-error: the boot failed. On the worker's global channel, as `[key, message]`. */
export interface WorkerToDenBootError {
  t: "boot-error";
  /** Why. */
  message: string;
  /** The package whose wheel was refused. */
  package?: string;
}

/** snapshot: role `maker`, once, then terminated. On the worker's global channel, as `[key, message]`. */
export interface WorkerToDenSnapshot {
  t: "snapshot";
  /** Time the boot took. */
  ms: number;
  /** The memory snapshot of a fresh interpreter. Transferred. */
  snapshot: Uint8Array;
}

/** out: streamed, batched ≤ 15 ms / 8 KiB / 1 024 parts. On the worker's global channel, as `[key, message]`. The same message as `DenToHostOut`. */
export type WorkerToDenOut = DenToHostOut;

/** display: `foxden.display(obj)`, after the output printed before it. On the worker's global channel, as `[key, message]`. The same message as `DenToHostDisplay`. */
export type WorkerToDenDisplay = DenToHostDisplay;

/** input: `input()` in an interactive run; then the worker waits on the input buffer, or without one, Python is suspended (JSPI) until `input-reply`. On the worker's global channel, as `[key, message]`. */
export interface WorkerToDenInput {
  t: "input";
  /** The run. */
  id: number;
  /** The prompt `input()` was given (already printed to stdout), cut to 4096 chars. */
  prompt: string;
  /** The run made workers of its own, which may go on computing while this one waits: the wait then counts against the timeout as without isolation. */
  workers?: boolean;
}

/** done: the run ended. On the worker's global channel, as `[key, message]`. */
export interface WorkerToDenDone {
  t: "done";
  /** The run. */
  id: number;
  /** `repr()` of the last expression, or null. */
  result: string | null;
  /** Why the run failed, or null. */
  error: RunError | null;
  /** Output was cut at `maxOutputBytes`. */
  truncated: boolean;
  /** Files created or changed. Transferred. */
  changed: ChangedFile[];
  /** Paths deleted. */
  deleted: string[];
  /** 0, or how many files the run changed when that is more than a den can hold (10 000): then `changed` and `deleted` are empty and none of it is kept. */
  tooManyFiles: number;
  /** JS or asyncio work outlived the run: restart the worker. */
  leftover: boolean;
  /** Time the run took in the worker. */
  durationMs: number;
}

/** fetch: `foxden.fetch(url, …)` during a run. On the worker's global channel, as `[key, message]`. The same message as `DenToHostFetch`. */
export type WorkerToDenFetch = DenToHostFetch;

/** interrupted: the worker read `interrupt` (so it was not busy): the run's waits and its sleep end with KeyboardInterrupt; the den page gives it the grace to end before it restarts the worker (without this, it restarts it soon). On the worker's global channel, as `[key, message]`. */
export interface WorkerToDenInterrupted {
  t: "interrupted";
  /** The run stopped. */
  id: number;
  /** It ended a wait (input, a request, an await), where KeyboardInterrupt is now raised: no interrupt signal follows. */
  waited: boolean;
}

/** Every message worker → den page. */
export type WorkerToDen = WorkerToDenBooted | WorkerToDenBootError | WorkerToDenSnapshot | WorkerToDenOut | WorkerToDenDisplay | WorkerToDenInput | WorkerToDenDone | WorkerToDenFetch | WorkerToDenInterrupted;
