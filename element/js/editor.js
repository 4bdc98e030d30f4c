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
// keyboard trap. Highlighting uses CodeMirror's stable `tok-*` class names, styled by the
// element's stylesheet through custom properties (light and dark).
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, indentOnInput, indentUnit, bracketMatching } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { classHighlighter } from "@lezer/highlight";

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
    destroy: () => view.destroy(),
  };
}
