//! The `controls` code editor (CodeMirror 6, `dist/editor.js`, loaded with a dynamic import
//! only when an editor is shown) and the lesson buttons: Reset code, Reset interpreter, Show
//! solution.

use super::lesson::lesson_scripts;
use super::*;
use crate::callback::Listener;
use crate::js::get;
use js_sys::Function;
use std::rc::Weak;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::Element;

#[wasm_bindgen(module = "/js/element.js")]
extern "C" {
    /// `import(url)`: wasm-bindgen cannot write a dynamic import itself.
    #[wasm_bindgen(js_name = importEditor)]
    fn import_editor(url: &str) -> Promise;
}

/// A mounted editor; `Drop` destroys it (and frees its Ctrl-Enter callback).
pub(crate) struct Editor {
    handle: JsValue,
    _on_run: Closure<dyn FnMut()>,
}

impl Editor {
    fn method(&self, name: &'static str) -> Option<Function> {
        get(&self.handle, name).dyn_into().ok()
    }
    /// The current text.
    pub(crate) fn text(&self) -> Option<String> {
        self.method("get")?.call0(&self.handle).ok()?.as_string()
    }
    /// Replaces the text.
    pub(crate) fn set_text(&self, text: &str) {
        if let Some(f) = self.method("set") {
            let _ = f.call1(&self.handle, &text.into());
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        if let Some(f) = self.method("destroy") {
            let _ = f.call0(&self.handle);
        }
    }
}

/// Keeps an editor's text as the element's code when the editor goes (`readonly`, controls
/// removed), unless it is still the script child's code: then the script stays the code, and a
/// page that changes the script later is followed.
pub(crate) fn keep_edited_text(state: &State, host: &Element, text: Option<String>) {
    let Some(text) = text else { return };
    if script_code(host).as_deref().map(str::trim_end) == Some(text.trim_end()) {
        return;
    }
    *state.code.borrow_mut() = Some(text);
}

/// Shows the editor, or the read-only code with `readonly` (or when there is no code).
pub(crate) fn sync_editor(state: &Rc<State>, ui: &Rc<Ui>, host: &Element) {
    let readonly = host.has_attribute("readonly");
    // The editor's own text is code too when it came from the `code` property; when it came
    // from a script child that the page removed since, there is nothing left to run.
    let has_code = script_code(host).is_some()
        || state.code.borrow().is_some()
        || (ui.editor.borrow().is_some() && ui.editor_owns_code.get());
    let show = |on: bool| {
        for id in ["editor", "editor-hint", "reset-code"] {
            if let Some(el) = by_id(&ui.root, id) {
                el.set_hidden(!on);
            }
        }
    };
    if readonly || !has_code {
        let editor = ui.editor.borrow_mut().take();
        if let Some(editor) = editor {
            // Set read-only: the edited text stays the code (`code`, run()). (Without code, the
            // script child was removed: nothing to keep.)
            if readonly {
                keep_edited_text(state, host, editor.text());
            }
            show(false);
            show_code(ui, state, host);
        }
        return;
    }
    if ui.editor.borrow().is_some() || ui.editor_loading.replace(true) {
        return;
    }
    let url = crate::runtime::editor_url();
    let weak_state = Rc::downgrade(state);
    let weak_ui = Rc::downgrade(ui);
    crate::callback::spawn_local(Box::pin(async move {
        let module = JsFuture::from(import_editor(&url)).await;
        let (Some(state), Some(ui)) = (weak_state.upgrade(), weak_ui.upgrade()) else {
            return;
        };
        ui.editor_loading.set(false);
        // The UI may have been replaced or set read-only while the module loaded.
        let current = state.ui().is_some_and(|u| Rc::ptr_eq(&u, &ui));
        let Some(host) = state.host.borrow().clone().filter(|_| current) else {
            return;
        };
        if host.has_attribute("readonly") {
            return;
        }
        let module = match module {
            Ok(m) => m,
            Err(e) => {
                state.ui_status(&format!(
                    "The editor did not load ({}); the code is shown read-only",
                    crate::js::describe(&e)
                ));
                return;
            }
        };
        let Some(create) = get(&module, "createEditor").dyn_into::<Function>().ok() else {
            return;
        };
        let (Some(parent), Some(code)) = (
            by_id(&ui.root, "editor"),
            super::lesson::current_code(&state),
        ) else {
            return;
        };
        let ws = weak_state.clone();
        let on_run = Closure::<dyn FnMut()>::new(move || {
            // As the Run button: a waiting lazy element opens its den for it.
            if let Some(s) = ws.upgrade().filter(|s| !s.busy()) {
                run_script(&s);
            }
        });
        let args = js_sys::Array::of5(
            &parent,
            &code.trim_end().into(),
            &"Python code editor".into(),
            &"editor-hint".into(),
            on_run.as_ref(),
        );
        let handle = match create.apply(&JsValue::UNDEFINED, &args) {
            Ok(h) => h,
            Err(e) => {
                state.ui_status(&format!(
                    "The editor did not start ({})",
                    crate::js::describe(&e)
                ));
                return;
            }
        };
        *ui.editor.borrow_mut() = Some(Editor {
            handle,
            _on_run: on_run,
        });
        // The edited text is the code from now on.
        ui.editor_owns_code
            .set(state.code.borrow_mut().take().is_some());
        parent.set_hidden(false);
        for id in ["editor-hint", "reset-code"] {
            if let Some(el) = by_id(&ui.root, id) {
                el.set_hidden(false);
            }
        }
        show_code(&ui, &state, &host);
    }));
}

/// Listeners of the lesson buttons (owned by the UI with its others).
pub(crate) fn lesson_controls(weak: &Weak<State>, ui: &Rc<Ui>, host: &Element) -> Vec<Listener> {
    let mut ls = Vec::new();
    if let Some(b) = by_id(&ui.root, "reset-code") {
        let w = weak.clone();
        ls.push(Listener::new(b.as_ref(), "click", move |_| {
            let Some(s) = w.upgrade() else { return };
            let original = s.host.borrow().as_ref().and_then(|h| script_code(h));
            s.code.borrow_mut().take();
            if let (Some(ui), Some(code)) = (s.ui(), original) {
                if let Some(ed) = ui.editor.borrow().as_ref() {
                    ed.set_text(code.trim_end());
                }
                ui.editor_owns_code.set(false);
                s.ui_status("Code reset to the original");
            }
        }));
    }
    if let Some(b) = by_id(&ui.root, "stop") {
        let w = weak.clone();
        ls.push(Listener::new(b.as_ref(), "click", move |_| {
            if let Some(s) = w.upgrade() {
                super::stop_run(&s);
            }
        }));
    }
    if let Some(b) = by_id(&ui.root, "reset") {
        let w = weak.clone();
        ls.push(Listener::new(b.as_ref(), "click", move |_| {
            let Some(s) = w.upgrade() else { return };
            let Some(den) = s.den() else { return };
            // A run of this element (one waiting in input(), say) is stopped first: the reset
            // waits for the den's turn, which the run holds.
            s.ui_status(if super::stop_run(&s) {
                "Stopping the run, then starting a new interpreter…"
            } else {
                "Starting a new interpreter…"
            });
            crate::callback::spawn_local(Box::pin(async move {
                match den.reset_impl().await {
                    // The setup log sees the new interpreter (Den::interpreter).
                    Ok(_) => s.ui_status("New interpreter: variables cleared, files kept"),
                    Err(e) => s.emit_error(&e),
                }
            }));
        }));
    }
    let solution = lesson_scripts(host).solution;
    if let (Some(b), Some(pre), Some(code)) = (
        by_id(&ui.root, "solution-button"),
        by_id(&ui.root, "solution"),
        solution,
    ) {
        b.set_hidden(false);
        pre.set_text_content(Some(code.trim_end()));
        let button = b.clone();
        ls.push(Listener::new(b.as_ref(), "click", move |_| {
            let open = !pre.hidden();
            pre.set_hidden(open);
            let _ = button.set_attribute("aria-expanded", if open { "false" } else { "true" });
            button.set_text_content(Some(if open {
                "Show solution"
            } else {
                "Hide solution"
            }));
        }));
    }
    ls
}

/// Reads the element's code (`code` property).
pub(crate) fn get_code(state: &State) -> JsValue {
    super::lesson::current_code(state).map_or(JsValue::NULL, JsValue::from)
}

/// Sets the element's code (`code` property): into the editor if one is shown.
pub(crate) fn set_code(state: &Rc<State>, code: &JsValue) {
    let text = code.as_string();
    let host = state.host.borrow().clone();
    if let Some(ui) = state.ui() {
        if let Some(ed) = ui.editor.borrow().as_ref() {
            // Into the editor: the property's code stays if the page removes the script
            // child. `code = null`: the script child's code is the code again (as Reset code
            // does); without a script child, the editor goes (below).
            let script = host.as_ref().and_then(|h| script_code(h));
            match (text.as_deref(), script) {
                (Some(t), _) => {
                    ed.set_text(t);
                    ui.editor_owns_code.set(true);
                    return;
                }
                (None, Some(s)) => {
                    ed.set_text(s.trim_end());
                    ui.editor_owns_code.set(false);
                    return;
                }
                (None, None) => ui.editor_owns_code.set(false),
            }
        }
    }
    *state.code.borrow_mut() = text;
    if let (Some(ui), Some(host)) = (state.ui(), host) {
        show_code(&ui, state, &host);
        sync_editor(state, &ui, &host);
    }
}
