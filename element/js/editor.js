// @ts-check
// foxden's code editor: CodeMirror 6 set up for Python, loaded by <foxden-den controls> with a
// dynamic import() only when an editor is shown (pages without one never fetch it). xtask
// bundles this file and the pinned CodeMirror packages into dist/editor.js (esbuild, ESM).
//
// The element (Rust, element/src/element/editor.rs) owns the returned handle and calls
// destroy() when its UI goes away; nothing here keeps state beyond the EditorView.
//
// Keyboard: Ctrl-Enter / Cmd-Enter runs; Tab and Shift-Tab indent; Escape then Tab (or
// Shift-Tab) leaves the editor (CodeMirror's tab-focus mode, built in), so there is no
// keyboard trap. Highlighting uses CodeMirror's stable `tok-*` class names, styled below through
// custom properties (light and dark).
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, indentOnInput, indentUnit, bracketMatching } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { classHighlighter } from "@lezer/highlight";

// The editor's look, mounted next to it in the element's shadow root (so foxden.js and the
// wasm do not carry it). Every colour is a custom property with a light and a dark default
// (docs/element.md lists them); CodeMirror's own base theme supplies the rest.
const CSS = `
.editor .cm-editor { background: var(--foxden-code-bg, #f0f0f4); border-radius: calc(var(--foxden-radius, 8px) / 2); max-height: var(--foxden-editor-max-height, 24em); }
.editor .cm-editor .cm-scroller { font: var(--foxden-mono-font, 13px/1.4 ui-monospace, monospace); }
.editor .cm-editor.cm-focused { outline: 3px solid var(--foxden-focus, #f9a825); outline-offset: 2px; }
.editor .cm-editor .cm-gutters { background: var(--foxden-gutter-bg, #e6e6ec); color: var(--foxden-gutter-fg, #55545c); border-right: 1px solid var(--foxden-border, #cfcfd8); }
.editor .cm-editor .cm-activeLine, .editor .cm-editor .cm-activeLineGutter { background: var(--foxden-active-line-bg, rgba(11, 87, 208, .07)); }
.editor .cm-editor .cm-content { caret-color: var(--foxden-fg, #1c1b22); }
.tok-keyword, .tok-controlKeyword, .tok-definitionKeyword, .tok-moduleKeyword, .tok-operatorKeyword { color: var(--foxden-syntax-keyword, #7a1fa2); }
.tok-string, .tok-string2 { color: var(--foxden-syntax-string, #0b6b2e); }
.tok-comment { color: var(--foxden-syntax-comment, #5f6368); font-style: italic; }
.tok-number, .tok-bool, .tok-atom { color: var(--foxden-syntax-number, #a1420b); }
.tok-definition, .tok-function { color: var(--foxden-syntax-def, #0b57d0); }
.tok-className, .tok-typeName { color: var(--foxden-syntax-class, #8a4b00); }
@media (prefers-color-scheme: dark) {
  .editor .cm-editor { background: var(--foxden-code-bg, #2b2a33); }
  .editor .cm-editor .cm-gutters { background: var(--foxden-gutter-bg, #26252d); color: var(--foxden-gutter-fg, #b0afb8); border-right-color: var(--foxden-border, #4a4950); }
  .editor .cm-editor .cm-activeLine, .editor .cm-editor .cm-activeLineGutter { background: var(--foxden-active-line-bg, rgba(168, 199, 250, .08)); }
  .editor .cm-editor .cm-content { caret-color: var(--foxden-fg, #ececf1); }
  .tok-keyword, .tok-controlKeyword, .tok-definitionKeyword, .tok-moduleKeyword, .tok-operatorKeyword { color: var(--foxden-syntax-keyword, #d7a6ff); }
  .tok-string, .tok-string2 { color: var(--foxden-syntax-string, #9fe0a8); }
  .tok-comment { color: var(--foxden-syntax-comment, #a8abb3); }
  .tok-number, .tok-bool, .tok-atom { color: var(--foxden-syntax-number, #ffb38a); }
  .tok-definition, .tok-function { color: var(--foxden-syntax-def, #8ab4f8); }
  .tok-className, .tok-typeName { color: var(--foxden-syntax-class, #f6c177); }
}
`;

/**
 * Mounts an editor in `parent` (inside the element's shadow root).
 * @param {HTMLElement} parent where the editor goes
 * @param {string} code the starting text
 * @param {string} label the accessible name of the text area
 * @param {string} describedBy id (in the same shadow root) of the keyboard hint
 * @param {() => void} onRun called on Ctrl-Enter / Cmd-Enter
 */
export function createEditor(parent, code, label, describedBy, onRun) {
  const root = /** @type {ShadowRoot | Document} */ (parent.getRootNode());
  const style = document.createElement("style");
  style.textContent = CSS;
  parent.before(style);
  const view = new EditorView({
    parent,
    root,
    state: EditorState.create({
      doc: code,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        indentUnit.of("    "),
        python(),
        syntaxHighlighting(classHighlighter),
        // Mod-Enter first: it would otherwise insert a blank line (defaultKeymap).
        keymap.of([{ key: "Mod-Enter", preventDefault: true, run: () => (onRun(), true) }, indentWithTab, ...defaultKeymap, ...historyKeymap]),
        EditorView.contentAttributes.of({ "aria-label": label, "aria-describedby": describedBy, "aria-multiline": "true" }),
      ],
    }),
  });
  return {
    /** The current text. */
    get: () => view.state.doc.toString(),
    /** Replaces the whole text (one undoable change). @param {string} text */
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
    destroy: () => (view.destroy(), style.remove()),
  };
}
