// foxden/api: foxden's functions and Den without <foxden-den>, from a module built without the
// element (about a sixth smaller): for pages, extensions and Node.js code that use only the API.
// A page that also uses the element imports foxden.js instead (loading both loads two modules).
import init, * as wasm from "./foxden_api.js";
import { load } from "./load.js";

export const {
  openDen,
  iframeRuntime,
  memoryStore,
  idbStore,
  normalizePath,
  runShell,
  encodeSnapshot,
  decodeSnapshot,
  clearWarmCache,
  Den,
  FoxdenError,
  PathError,
  SnapshotError,
  DenError,
  DenLoadError,
  liveCounts,
} = await load(init, wasm, new URL("./foxden_api_bg.wasm", import.meta.url), import.meta.url);
