// Types of foxden/api (api.js): foxden.js's functions and classes without <foxden-den>.
export type * from "./foxden.js";
export {
  openDen,
  iframeRuntime,
  memoryStore,
  idbStore,
  normalizePath,
  runShell,
  encodeSnapshot,
  decodeSnapshot,
  clearWarmCache,
  liveCounts,
  Den,
  FoxdenError,
  PathError,
  SnapshotError,
  DenError,
  DenLoadError,
} from "./foxden.js";
