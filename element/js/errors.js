// foxden's error classes. Rust creates them through makeError(); foxden.js re-exports them so
// that `err instanceof PathError` works. Each carries a `name` equal to its class name, and
// extra typed fields (PathError.path/.rule, SnapshotError.code, DenLoadError.stage, ...).
export class FoxdenError extends Error {
  constructor(message, fields) {
    super(message);
    this.name = new.target.name;
    if (fields) Object.assign(this, fields);
  }
}
export class PathError extends FoxdenError {}
export class SnapshotError extends FoxdenError {}
export class DenError extends FoxdenError {}
export class DenLoadError extends FoxdenError {}

const classes = { PathError, SnapshotError, DenError, DenLoadError };
// The release build minifies this file: the class names are set here so that they survive it.
for (const [name, Class] of Object.entries({ FoxdenError, ...classes })) {
  Object.defineProperty(Class, "name", { value: name });
}

export function makeError(kind, message, fields) {
  const Class = classes[kind] || FoxdenError;
  return new Class(message, fields);
}

export function errorClasses() {
  return { FoxdenError, ...classes };
}
