// Types of the foxden ES module (dist/foxden.js): foxden's API (types.d.ts, also what
// dist/api.js exports) and <foxden-den>.
export * from "./types.js";
import type { Den, DenError, DenInfo, DenLoadError, DenMethods, DisplayChunk, FileChanges, IframeRuntimeOptions, InputRequest, NetworkRequestChunk, OpenDenOptions, OutputChunk, PathError, RunOptions, RunResult, RuntimeAdapter, SnapshotError } from "./types.js";

// ---------------------------------------------------------------------------------------------
// <foxden-den>: defined when foxden.js is imported. See docs/element.md.

/** `detail` of the `run` event: once when a run starts, once when it ends. The start event is
 * cancelable: `preventDefault()` keeps the code from running (the run ends at once, `Stopped`
 * before it started; files and variables kept). */
export type FoxdenRunEventDetail =
  | { id: number; phase: "start"; code: string }
  | { id: number; phase: "end"; code: string; result: RunResult };

/** `detail` of the `output` event: one chunk of stdout or stderr, as it is printed. */
export type FoxdenOutputEventDetail = OutputChunk;

/** `detail` of the `display` event: one display, in order with the `output` events. */
export type FoxdenDisplayEventDetail = DisplayChunk;

/** `detail` of the cancelable `input` event: a run's `input()` waits for a line (cross-origin
 * isolated dens, runs without `stdin` or `onInput`). Answer with `respond(text)` (null: end of
 * input) during the event, or call `preventDefault()` and respond later. Unanswered, `input()`
 * raises `EOFError`. */
export interface FoxdenInputEventDetail extends InputRequest { respond(text: string | null): void }

/** `detail` of the `request` event: one `foxden.fetch`, allowed or refused, as it ends. */
export type FoxdenRequestEventDetail = NetworkRequestChunk;

/** `detail` of the `file-change` event. */
export interface FoxdenFileChangeEventDetail extends FileChanges {
  source: "run" | "write" | "delete" | "restore";
}

/** `detail` of the `progress` event: asset bytes while the runtime loads. */
export interface FoxdenProgressEventDetail { loaded: number; total: number }

/** `detail` of the `ready` event. */
export interface FoxdenReadyEventDetail { info: DenInfo }

/** `detail` of the `error` event: a bad attribute (`attribute` is set), a den that did not open
 * (`DenLoadError`, or `DenError` code "name-in-use"), a Run-button run that could not start, a
 * file the drop zone could not write, or a Reset-interpreter click whose restart failed. */
export interface FoxdenErrorEventDetail {
  error: DenError | DenLoadError | PathError | SnapshotError;
  /** The attribute whose value is invalid (the error's `option` too). */
  attribute?: FoxdenDenAttribute;
}

/** `detail` of the `check` event: an exercise's `<script type="text/x-python" check>` ran after
 * the reader's code (`passed`: it raised nothing; `message`: what the element shows). */
export interface FoxdenCheckEventDetail { passed: boolean; message: string }

export interface FoxdenDenEventMap extends Omit<HTMLElementEventMap, "error" | "progress" | "input"> {
  input: CustomEvent<FoxdenInputEventDetail>;
  check: CustomEvent<FoxdenCheckEventDetail>;
  run: CustomEvent<FoxdenRunEventDetail>;
  output: CustomEvent<FoxdenOutputEventDetail>;
  display: CustomEvent<FoxdenDisplayEventDetail>;
  request: CustomEvent<FoxdenRequestEventDetail>;
  "file-change": CustomEvent<FoxdenFileChangeEventDetail>;
  progress: CustomEvent<FoxdenProgressEventDetail>;
  ready: CustomEvent<FoxdenReadyEventDetail>;
  error: CustomEvent<FoxdenErrorEventDetail>;
}

export type FoxdenDenAttribute =
  | "name" | "store" | "timeout" | "den-url" | "pyodide-url" | "isolation"
  | "max-output-bytes" | "max-den-bytes" | "load-timeout" | "warm-start" | "standby"
  | "max-file-bytes" | "max-files" | "max-writes-per-minute" | "max-memory-bytes" | "kill-grace" | "packages" | "read-only-paths" | "controls" | "autorun" | "loading" | "env" | "readonly"
  | "network" | "network-methods" | "network-per-minute" | "network-max-response-bytes";

/** The `<foxden-den>` element. Every attribute is reflected as the property of the same name in camelCase. */
export interface FoxdenDenElement extends HTMLElement, DenMethods {
  /** Den name (attribute `name`, required unless `env` is set): 1-64 ASCII letters, digits, '-' or '_'. */
  name: string;
  /** `"memory"` (default), `"idb"` or `"idb:<dbName>"`. */
  store: string;
  /** Default run timeout in ms (attribute `timeout`, default 30000). */
  timeout: number;
  /** URL of den.html (attribute `den-url`); default `./den/den.html` next to foxden.js. */
  denUrl: string;
  /** Folder of the Pyodide files (attribute `pyodide-url`); default `./pyodide/` next to foxden.js. */
  pyodideUrl: string;
  /** `"auto"` (default), `"manifest-sandbox"` or `"iframe-sandbox"`. */
  isolation: string;
  /** Default cap on a run's output (attribute `max-output-bytes`, default 1 MiB). */
  maxOutputBytes: number;
  /** Cap on the den's files (attribute `max-den-bytes`, default 256 MiB). */
  maxDenBytes: number;
  /** How long opening may take, ms (attribute `load-timeout`, default 60000). */
  loadTimeout: number;
  /** `"on"` (default) or `"off"`: the warm cache (see `IframeRuntimeOptions.warmStart`). */
  warmStart: string;
  /** `"on"` (default) or `"off"`: the standby interpreter (see `IframeRuntimeOptions.standby`). */
  standby: string;
  /** Cap on each file's size (attribute `max-file-bytes`, default 10 MiB). */
  maxFileBytes: number;
  /** Cap on the number of files (attribute `max-files`, default 10000). */
  maxFiles: number;
  /** File writes per sliding minute (attribute `max-writes-per-minute`, default 0: no limit). */
  maxWritesPerMinute: number;
  /** Cap on the worker's WebAssembly memory (attribute `max-memory-bytes`, default 2 GiB, 128 MiB to 4 GiB; see `OpenDenOptions.maxMemoryBytes`). */
  maxMemoryBytes: number;
  /** How long a run's leftover tasks and timers may go on before the worker restarts, ms (attribute `kill-grace`, default 200; see `OpenDenOptions.killGraceMs`). */
  killGrace: number;
  /** Wheels to install, `url#sha256=<64 hex>` separated by spaces (attribute `packages`; see `OpenDenOptions.packages`). */
  packages: string;
  /** Den paths the code may read but not change, separated by spaces (attribute
   * `read-only-paths`; see `OpenDenOptions.readOnlyPaths`). */
  readOnlyPaths: string;
  /** A runtime adapter of the page's (not an attribute; see `RuntimeAdapter`), or `null` (the
   * default): the iframe runtime the attributes describe. Setting a different one reopens the
   * den on it (as a changed attribute does; the same one again changes nothing); of the
   * runtime's attributes only `load-timeout` applies to it; `packages` and `network` need the
   * iframe runtime (an `error` event names them). See docs/element.md. Setting an adapter without `start` or `close` throws
   * `DenError` `bad-option`, as `openDen` does; anything else a `TypeError`. */
  runtime: RuntimeAdapter | null;
  /** Render the Run button, live output, file list and drop zone (attribute `controls`). */
  controls: boolean;
  /** Run the `<script type="text/x-python">` child once the den is ready (attribute `autorun`). */
  autorun: boolean;
  /** `"eager"` (default) or `"lazy"` (attribute `loading`): a lazy element opens its den only
   * when it comes within 200 px of the viewport, or when a method or the Run button needs it;
   * `ready` waits until then. */
  loading: string;
  /** Shared environment (attribute `env`): elements with the same `env` share one den (one
   * interpreter, one file set, named after it), each with its own output. `""` when not set. */
  env: string;
  /** With `controls`: show the code read-only instead of the editor (attribute `readonly`). */
  readonly: boolean;
  /** The code the Run button and `run()` without code execute: the editor's text (with
   * `controls`), else the `<script type="text/x-python">` child. Setting it replaces the
   * editor's text; the Reset-code button goes back to the script child. */
  code: string;

  /** Runs `code`; without it (or with `null`), runs the element's code (`code`), then the
   * exercise's check if it has one (`check` event). Setup code runs first, once per interpreter. */
  run(code?: string | null, opts?: RunOptions): Promise<RunResult>;
  /** URL patterns `foxden.fetch` may reach, separated by spaces (attribute `network`; "" / absent: no network). */
  network: string;
  /** Allowed methods, separated by spaces or commas (attribute `network-methods`, default "GET"). */
  networkMethods: string;
  /** Requests per sliding minute (attribute `network-per-minute`, default 5). */
  networkPerMinute: number;
  /** Cap on each answer (attribute `network-max-response-bytes`, default 1 MiB). */
  networkMaxResponseBytes: number;

  /** Resolves with `info` once the den is open; rejects with the error that stopped it. */
  readonly ready: Promise<DenInfo>;
  /** `info` of the open den, or null. */
  readonly info: DenInfo | null;

  /** Closes the den; it reopens when the element is re-inserted or a den attribute changes. */
  close(): Promise<void>;

  addEventListener<K extends keyof FoxdenDenEventMap>(
    type: K,
    listener: (this: FoxdenDenElement, ev: FoxdenDenEventMap[K]) => any,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof FoxdenDenEventMap>(
    type: K,
    listener: (this: FoxdenDenElement, ev: FoxdenDenEventMap[K]) => any,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap {
    "foxden-den": FoxdenDenElement;
  }
}
