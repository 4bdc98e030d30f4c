// The <foxden-den> class shim. A custom element has to be a JavaScript class that extends
// HTMLElement, which wasm-bindgen cannot declare; so this class holds a Rust handle
// (FoxdenElementHandle, element/src/element.rs) and forwards everything to it: lifecycle
// callbacks, attribute changes, reflected properties and methods. No logic lives here.
//
// wasm-bindgen ships this file as a snippet of the wasm module; foxden.js calls
// `__defineElement(FoxdenElementHandle)`, and Rust calls defineFoxdenElement with the list of
// attributes, properties and methods it implements.

// Each element's `runtime` property (a runtime adapter), kept here rather than in Rust so that
// an adapter that refers back to its element does not keep either alive; and an id per adapter
// object, so that setting the same one again changes nothing.
const runtimes = new WeakMap();
const runtimeIds = new WeakMap();
let nextRuntimeId = 1;

/** Rust's view of an element's runtime property: [adapter or null, its id (0: none)]. */
export function runtimeOf(el) {
  const r = runtimes.get(el);
  if (r === undefined) return [null, 0];
  // A value set before the upgrade is kept unchecked: what is no object is no adapter (Rust
  // reports it), and has no id (a WeakMap takes only objects).
  if (Object(r) !== r) return [r, 0];
  if (!runtimeIds.has(r)) runtimeIds.set(r, nextRuntimeId++);
  return [r, runtimeIds.get(r)];
}

export function defineFoxdenElement(Handle, spec) {
  // Defined once per page, even if two copies of foxden.js are imported.
  if (customElements.get(spec.tag)) return false;

  class FoxdenDenElement extends HTMLElement {
    static get observedAttributes() {
      return spec.attributes;
    }

    // The Rust side of this element. It keeps no reference back to the element (the element is
    // passed in on each call), so a removed element can be garbage-collected with its handle.
    #h = new Handle();

    static handleOf(el) {
      return el.#h;
    }

    connectedCallback() {
      // A property set on the element before foxden.js defined the tag is an own property that
      // hides our accessor: delete it and set it again through the accessor. A value a setter
      // refuses does not keep the element from connecting (or the other values from being
      // set): the first such error is thrown after. The runtime is kept as it is: what is no
      // adapter is reported when the den opens (an `error` event, bad-option), as for a bad
      // attribute.
      let refused = null;
      for (const p of [...spec.properties, "code", "runtime"]) {
        if (Object.prototype.hasOwnProperty.call(this, p)) {
          const v = this[p];
          delete this[p];
          if (p === "runtime") {
            if (v === null || v === undefined) runtimes.delete(this);
            else runtimes.set(this, v);
            continue;
          }
          try {
            this[p] = v;
          } catch (e) {
            refused ??= e;
          }
        }
      }
      this.#h.connected(this);
      if (refused) throw refused;
    }

    disconnectedCallback() {
      this.#h.disconnected(this);
    }

    attributeChangedCallback(name, oldValue, newValue) {
      if (oldValue !== newValue) this.#h.attributeChanged(this, name);
    }

    /** Resolves with `info` once the den is open; rejects with the error that stopped it. */
    get ready() {
      return this.#h.ready();
    }

    /** `{ kind, isolation, loadMs, interruptible, warmStart, stages }` of the open den, or null. */
    get info() {
      return this.#h.info();
    }

    /** The code the Run button and `run()` without code execute (the editor's text). */
    get code() {
      return this.#h.code();
    }

    set code(v) {
      this.#h.setCode(v);
    }
  }

  const proto = FoxdenDenElement.prototype;
  const handleOf = (el) => FoxdenDenElement.handleOf(el);
  // Reflected attributes: the getter and setter are Rust's (parsing, defaults, validation).
  for (const p of spec.properties) {
    Object.defineProperty(proto, p, {
      get() {
        return handleOf(this).getProp(this, p);
      },
      set(v) {
        handleOf(this).setProp(this, p, v);
      },
      enumerable: true,
      configurable: true,
    });
  }
  // The runtime adapter: an object, not an attribute. Rust checks it (and throws for what is
  // no adapter), and reopens the den on a different one.
  Object.defineProperty(proto, "runtime", {
    get() {
      return runtimes.get(this) ?? null;
    },
    set(v) {
      handleOf(this).checkRuntime(v);
      if (v === null || v === undefined) runtimes.delete(this);
      else runtimes.set(this, v);
      handleOf(this).runtimeChanged();
    },
    enumerable: true,
    configurable: true,
  });
  // Methods: run, sh, writeFile, ... all return the promises Rust makes.
  for (const m of spec.methods) {
    Object.defineProperty(proto, m, {
      value(...args) {
        return handleOf(this)[m](...args);
      },
      writable: true,
      configurable: true,
    });
  }
  // The release build minifies this file; the class keeps its name for devtools and users.
  Object.defineProperty(FoxdenDenElement, "name", { value: "FoxdenDenElement" });
  customElements.define(spec.tag, FoxdenDenElement);
  return true;
}

// The editor module (dist/editor.js, CodeMirror), loaded only when an editor is shown. A
// dynamic import has to be written in JavaScript; Rust calls this and owns what it returns.
// The comments tell webpack and Vite to leave it to the browser (the release build checks that
// its minified glue kept them: xtask build.rs, keep_dynamic_import).
export function importEditor(url) {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ url);
}
