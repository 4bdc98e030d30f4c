//! The optional `controls` UI in a shadow root.

use super::*;
use crate::callback::Listener;
use crate::errors::den_error;
use crate::js::{get, get_f64, get_str, obj};
use foxden_core::outcome::{Display, DisplayData};
use foxden_core::phase::PhaseName;
use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Element, HtmlElement, ShadowRoot};

/// What an HTML display's document starts with: a policy that loads nothing from anywhere
/// (images and fonts only from `data:` URLs in the HTML itself, inline styles), no referrer,
/// no DNS prefetching. Parsed before the display's own HTML, which (without scripts) cannot
/// remove it; a later policy could only narrow it.
const HTML_DISPLAY_HEAD: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\"><meta name=\"referrer\" content=\"no-referrer\"><meta http-equiv=\"x-dns-prefetch-control\" content=\"off\">";

// ---------------------------------------------------------------------------------------------
// The controls UI

/// A blob URL that revokes itself on drop.
pub(crate) struct ObjectUrl(String);

impl Drop for ObjectUrl {
    fn drop(&mut self) {
        revoke_object_url(&self.0);
    }
}

pub(crate) const UI_HTML: &str = r#"<style>
:host { display: block; font: var(--foxden-font, 14px/1.45 system-ui, sans-serif); color: var(--foxden-fg, #1c1b22); }
:host([hidden]) { display: none; }
.panel { display: grid; gap: .6em; padding: var(--foxden-padding, .8em); background: var(--foxden-bg, #fbfbfe); border: 1px solid var(--foxden-border, #cfcfd8); border-radius: var(--foxden-radius, 8px); }
.bar { display: flex; align-items: center; gap: .75em; flex-wrap: wrap; }
button { font: inherit; padding: .35em 1.1em; border-radius: var(--foxden-radius, 8px); border: 1px solid var(--foxden-accent, #0b57d0); background: var(--foxden-accent, #0b57d0); color: var(--foxden-accent-fg, #fff); cursor: pointer; }
button:disabled, button[aria-disabled="true"] { opacity: .5; cursor: default; }
button:focus-visible, input:focus-visible, a:focus-visible, pre:focus-visible { outline: 3px solid var(--foxden-focus, #f9a825); outline-offset: 2px; }
progress { width: 100%; accent-color: var(--foxden-accent, #0b57d0); }
pre { margin: 0; padding: .6em; overflow: auto; white-space: pre-wrap; font: var(--foxden-mono-font, 13px/1.4 ui-monospace, monospace); border-radius: calc(var(--foxden-radius, 8px) / 2); }
.code { background: var(--foxden-code-bg, #f0f0f4); }
.output { min-height: 3em; max-height: var(--foxden-output-max-height, 20em); background: var(--foxden-output-bg, #1c1b22); color: var(--foxden-output-fg, #f0f0f4); }
.output img, .output iframe { display: block; margin: .4em 0; max-width: 100%; background: var(--foxden-display-bg, #fff); border: 1px solid var(--foxden-border, #cfcfd8); border-radius: 4px; }
.output iframe { width: 100%; height: var(--foxden-display-html-height, 10em); }
.stderr { color: var(--foxden-stderr, #ff8a80); }
.result { color: var(--foxden-result, #a5d6a7); }
.drop { border: 2px dashed var(--foxden-border, #cfcfd8); border-radius: var(--foxden-radius, 8px); padding: .8em; text-align: center; }
.drop.over { border-color: var(--foxden-accent, #0b57d0); background: var(--foxden-drop-bg, #e8f0fe); }
ul { margin: 0; padding-left: 1.2em; }
a { color: var(--foxden-link, #0b57d0); }
button.secondary { background: transparent; color: var(--foxden-secondary-fg, var(--foxden-accent, #0b57d0)); }
.hint { margin: 0; font-size: .85em; color: var(--foxden-hint-fg, #55545c); }
.check { padding: .5em .7em; border-radius: calc(var(--foxden-radius, 8px) / 2); border: 1px solid; }
.check.pass { color: var(--foxden-pass-fg, #0b5a27); background: var(--foxden-pass-bg, #e6f4ea); }
.check.fail { color: var(--foxden-fail-fg, #a50e0e); background: var(--foxden-fail-bg, #fce8e6); }
.stdin input { font: var(--foxden-mono-font, 13px/1.4 ui-monospace, monospace); width: min(30em, 100%); }
@media (prefers-color-scheme: dark) {
  :host { color: var(--foxden-fg, #ececf1); }
  .panel { background: var(--foxden-bg, #1f1e25); border-color: var(--foxden-border, #4a4950); }
  .code { background: var(--foxden-code-bg, #2b2a33); }
  .hint { color: var(--foxden-hint-fg, #b0afb8); }
  button.secondary { color: var(--foxden-secondary-fg, #a8c7fa); border-color: var(--foxden-secondary-fg, #a8c7fa); }
  a { color: var(--foxden-link, #a8c7fa); }
  .drop.over { background: var(--foxden-drop-bg, #2a3350); }
  .output { border: 1px solid var(--foxden-border, #4a4950); }
  .check.pass { color: var(--foxden-pass-fg, #a8dab5); background: var(--foxden-pass-bg, #0f3320); }
  .check.fail { color: var(--foxden-fail-fg, #f6aea9); background: var(--foxden-fail-bg, #41100d); }
}
</style>
<div class="panel" part="panel">
<div class="bar" part="toolbar"><button type="button" id="run" part="run-button" disabled>Run</button><button type="button" id="stop" class="secondary" part="stop-button" disabled>Stop</button><button type="button" id="reset-code" class="secondary" part="reset-code-button" hidden>Reset code</button><button type="button" id="reset" class="secondary" part="reset-button" disabled>Reset interpreter</button><span id="status" part="status" role="status" aria-live="polite">Loading Python…</span></div>
<progress id="progress" part="progress" max="1" value="0" aria-label="Loading Python"></progress>
<pre id="code" class="code" part="code" aria-label="Python code" tabindex="0"></pre>
<div id="editor" class="editor" part="editor" hidden></div>
<p id="editor-hint" class="hint" part="editor-hint" hidden>Ctrl+Enter (⌘+Enter on a Mac) runs the code. Tab indents; press Esc, then Tab, to leave the editor.</p>
<div id="check" class="check" part="check" role="status" aria-live="polite" hidden></div>
<div class="bar"><button type="button" id="solution-button" class="secondary" part="solution-button" aria-expanded="false" aria-controls="solution" hidden>Show solution</button></div>
<pre id="solution" class="code" part="solution" aria-label="Solution" tabindex="0" hidden></pre>
<label class="stdin" part="stdin-label">Input (what <code>input()</code> reads; Enter answers a waiting <code>input()</code>): <input id="stdin" type="text" part="stdin" autocomplete="off" spellcheck="false"></label>
<div id="drop" class="drop" part="dropzone"><label part="file-label">Add files to /drop: <input id="file" type="file" multiple part="file-input"></label> <span>or drop them here</span></div>
<pre id="output" class="output" part="output" role="log" aria-live="polite" aria-label="Output" tabindex="0"></pre>
<ul id="files" part="files" aria-label="Files"></ul>
</div>
<slot></slot>"#;

pub(crate) struct Ui {
    pub(crate) root: ShadowRoot,
    pub(crate) run: HtmlElement,
    pub(crate) status: HtmlElement,
    pub(crate) progress: HtmlElement,
    pub(crate) output: HtmlElement,
    pub(crate) files: HtmlElement,
    /// The file list's blob URLs in path order, with the SHA-256 of the content each holds.
    pub(crate) urls: RefCell<Vec<(String, [u8; 32], ObjectUrl)>>,
    /// Blob URLs of the displayed images (freed when the output is cleared).
    pub(crate) display_urls: RefCell<Vec<ObjectUrl>>,
    /// Images shown since the output was last cleared (their `alt` numbers).
    pub(crate) images_shown: Cell<usize>,
    /// The output is to be scrolled to its end once the current batch is in (see
    /// [`Ui::scroll_soon`]).
    scroll_pending: Rc<Cell<bool>>,
    pub(crate) listeners: RefCell<Vec<Listener>>,
    /// The code editor, once its module has loaded (none with `readonly`).
    pub(crate) editor: RefCell<Option<super::editor::Editor>>,
    pub(crate) editor_loading: Cell<bool>,
    /// The editor's text came from the `code` property (not the script child): it stays when
    /// there is no script child.
    pub(crate) editor_owns_code: Cell<bool>,
}

impl Drop for Ui {
    fn drop(&mut self) {
        // Listeners and blob URLs go by their own Drop; the shadow root keeps only the slot.
        self.listeners.borrow_mut().clear();
        self.editor.borrow_mut().take();
        self.urls.borrow_mut().clear();
        self.display_urls.borrow_mut().clear();
        self.root.set_inner_html("<slot></slot>");
    }
}

pub(crate) fn by_id(root: &ShadowRoot, id: &str) -> Option<HtmlElement> {
    root.get_element_by_id(id)?.dyn_into().ok()
}

impl Ui {
    pub(crate) fn build(host: &HtmlElement) -> Option<Ui> {
        let root = match host.shadow_root() {
            Some(r) => r,
            None => host
                .attach_shadow(&web_sys::ShadowRootInit::new(web_sys::ShadowRootMode::Open))
                .ok()?,
        };
        root.set_inner_html(UI_HTML);
        Some(Ui {
            run: by_id(&root, "run")?,
            status: by_id(&root, "status")?,
            progress: by_id(&root, "progress")?,
            output: by_id(&root, "output")?,
            files: by_id(&root, "files")?,
            root,
            urls: RefCell::new(Vec::new()),
            display_urls: RefCell::new(Vec::new()),
            images_shown: Cell::new(0),
            scroll_pending: Rc::new(Cell::new(false)),
            listeners: RefCell::new(Vec::new()),
            editor: RefCell::new(None),
            editor_loading: Cell::new(false),
            editor_owns_code: Cell::new(false),
        })
    }

    /// Disabled while there is no den to run in.
    pub(crate) fn set_run_enabled(&self, on: bool) {
        let _ = self.run.toggle_attribute_with_force("disabled", !on);
        if let Some(b) = by_id(&self.root, "reset") {
            let _ = b.toggle_attribute_with_force("disabled", !on);
        }
    }

    /// The editor's text, if an editor is shown.
    pub(crate) fn editor_text(&self) -> Option<String> {
        self.editor.borrow().as_ref().and_then(|e| e.text())
    }

    /// A run's `input()` waits: the input line asks the reader (Enter answers).
    pub(crate) fn ask_input(&self, prompt: &str) {
        let shown = if prompt.trim().is_empty() {
            "input()"
        } else {
            prompt.trim_end()
        };
        self.status.set_text_content(Some(&format!(
            "Waiting for input: {shown} (type the answer in the input line, then Enter)"
        )));
        if let Some(line) = by_id(&self.root, "stdin") {
            let _ = line.set_attribute("aria-label", &format!("Answer to: {shown}"));
            // The line takes the focus only from inside this element (its Run button, say) or
            // from nowhere: a program that asks must not take what the reader types elsewhere
            // on the page (Enter would send it to the sandbox), nor scroll the page to itself.
            let here = self.root.host().matches(":focus-within").unwrap_or(false);
            let nowhere = self
                .root
                .owner_document()
                .and_then(|d| d.active_element())
                .is_none_or(|a| a.tag_name().eq_ignore_ascii_case("body"));
            if here || nowhere {
                if let Ok(focus) = get(&line, "focus").dyn_into::<Function>() {
                    let _ = focus.call1(&line, &obj(&[("preventScroll", true.into())]));
                }
            }
        }
    }

    /// No request waits any more: the input line stops naming a prompt.
    pub(crate) fn stop_asking(&self) {
        if let Some(line) = by_id(&self.root, "stdin") {
            if line.has_attribute("aria-label") {
                let _ = line.remove_attribute("aria-label");
            }
        }
    }

    /// The input line's text as stdin (with a final newline), if it is not empty.
    pub(crate) fn stdin_text(&self) -> Option<String> {
        let v = by_id(&self.root, "stdin").and_then(|i| get_str(&i, "value"))?;
        (!v.is_empty()).then(|| format!("{v}\n"))
    }

    /// Shows an exercise's result (`None` hides it).
    pub(crate) fn show_check(&self, r: Option<&foxden_core::lesson::CheckResult>) {
        let Some(el) = by_id(&self.root, "check") else {
            return;
        };
        el.set_hidden(r.is_none());
        if let Some(r) = r {
            el.set_class_name(if r.passed { "check pass" } else { "check fail" });
            let mark = if r.passed { "✔" } else { "✘" };
            el.set_text_content(Some(&format!("{mark} {}", r.message)));
        }
    }

    /// While a run goes on the button stays focusable (a disabled button would drop the
    /// keyboard focus) and says it is busy; clicks are ignored.
    pub(crate) fn set_busy(&self, busy: bool) {
        let _ = self
            .run
            .set_attribute("aria-disabled", if busy { "true" } else { "false" });
        if let Some(b) = by_id(&self.root, "stop") {
            // Stop pressed from the keyboard ends the run and is disabled: the focus goes to
            // Run rather than to the page's body.
            let had_focus = self.root.active_element().is_some_and(|a| a == *b.as_ref());
            let _ = b.toggle_attribute_with_force("disabled", !busy);
            if had_focus && !busy {
                let _ = self.run.focus();
            }
        }
    }

    pub(crate) fn show_progress(&self, loaded: f64, total: f64) {
        let p = &self.progress;
        p.set_hidden(false);
        let _ = p.set_attribute("max", &foxden_core::decimal::show(total.max(1.0)));
        let _ = p.set_attribute(
            "value",
            &foxden_core::decimal::show(loaded.min(total.max(1.0))),
        );
        let pct = if total > 0.0 {
            (loaded / total * 100.0).floor()
        } else {
            0.0
        };
        let _ = p.set_attribute(
            "aria-valuetext",
            &format!(
                "{}% of the Python runtime loaded",
                foxden_core::decimal::show(pct)
            ),
        );
    }

    pub(crate) fn hide_progress(&self) {
        self.progress.set_hidden(true);
    }

    /// Appends a chunk of output: to the last span when it is of the same stream, else in a
    /// span of its own.
    pub(crate) fn append_output(&self, text: &str, stream: &str) {
        let Some(doc) = self.root.owner_document() else {
            return;
        };
        let last = self
            .output
            .last_element_child()
            .filter(|e| e.tag_name().eq_ignore_ascii_case("span") && e.class_name() == stream);
        if let Some(span) = last {
            let _ = span.append_with_str_1(text);
        } else if let Ok(span) = doc.create_element("span") {
            span.set_class_name(stream);
            span.set_text_content(Some(text));
            let _ = self.output.append_child(&span);
        }
        self.scroll_soon();
    }

    /// Scrolls the output to its end once the chunks of the message being handled are in (a
    /// microtask later): reading `scrollHeight` lays the page out, and output that switches
    /// stream at every character comes as up to 1 024 chunks per message.
    fn scroll_soon(&self) {
        if self.scroll_pending.replace(true) {
            return;
        }
        let pending = self.scroll_pending.clone();
        let output = self.output.clone();
        crate::callback::spawn_local(Box::pin(async move {
            pending.set(false);
            output.set_scroll_top(output.scroll_height());
        }));
    }
}

impl Ui {
    /// Clears the output (and frees the blob URLs of its images).
    pub(crate) fn clear_output(&self) {
        self.output.set_text_content(None);
        self.display_urls.borrow_mut().clear();
        self.images_shown.set(0);
    }

    /// Shows a display: its richest representation the element can show without running any
    /// of it. PNG and JPEG become `<img>` from blob URLs; SVG becomes `<img>` from a `data:` URL
    /// (an SVG in `<img>` runs no script, but a blob URL has this page's origin, so "open image
    /// in new tab" would run its scripts as this page; a `data:` document's origin is opaque);
    /// HTML goes into an `<iframe sandbox="">` (no scripts, an opaque origin), without its links
    /// ([`without_navigation`]); other types are
    /// shown as text.
    pub(crate) fn append_display(&self, display: &Display) {
        let Some(doc) = self.root.owner_document() else {
            return;
        };
        let n = self.images_shown.get() + 1;
        let pick = display
            .iter()
            .find(|(m, _)| m.starts_with("image/") || m == "text/html")
            .or_else(|| display.iter().find(|(m, _)| m == "text/markdown"))
            .or_else(|| display.iter().find(|(m, _)| m == "text/plain"))
            .or_else(|| display.first());
        let Some((mime, data)) = pick else { return };
        let node: Option<web_sys::Element> = match (mime.as_str(), data) {
            (m, data) if m.starts_with("image/") => {
                let src = if m == "image/svg+xml" {
                    // Base64: a third longer than the SVG (percent-encoding can triple it).
                    let encoded = foxden_core::base64(match data {
                        DisplayData::Bytes(b) => b,
                        DisplayData::Text(s) => s.as_bytes(),
                    });
                    format!("data:image/svg+xml;base64,{encoded}")
                } else {
                    let part: JsValue = match data {
                        DisplayData::Bytes(b) => js_sys::Uint8Array::from(b.as_slice()).into(),
                        DisplayData::Text(s) => s.as_str().into(),
                    };
                    let blob = JsBlob::new(&Array::of1(&part), &obj(&[("type", m.into())]).into());
                    let url = ObjectUrl(create_object_url(&blob));
                    let src = url.0.clone();
                    self.display_urls.borrow_mut().push(url);
                    src
                };
                let img = doc.create_element("img").ok();
                if let Some(img) = &img {
                    let _ = img.set_attribute("src", &src);
                    let _ = img.set_attribute("alt", &format!("Output image {n}"));
                    let _ = img.set_attribute("part", "display-image");
                }
                self.images_shown.set(n);
                img
            }
            ("text/html", DisplayData::Text(html)) => {
                let Some(html) = without_navigation(html) else {
                    // Not made safe in a few passes (a parser quirk): shown as text.
                    self.show_text(&doc, html);
                    return;
                };
                let frame = doc.create_element("iframe").ok();
                if let Some(f) = &frame {
                    // No token: no scripts, no forms, no popups, an opaque origin. A sandbox
                    // does not stop loads (an <img>, a stylesheet, a CSS url()), which would
                    // carry the den's data out: the policy in front of the HTML allows none.
                    let _ = f.set_attribute("sandbox", "");
                    let _ = f.set_attribute("srcdoc", &format!("{HTML_DISPLAY_HEAD}{html}"));
                    let _ = f.set_attribute("title", &format!("HTML output {n}"));
                    let _ = f.set_attribute("part", "display-html");
                }
                frame
            }
            (_, DisplayData::Text(s)) => {
                self.show_text(&doc, s);
                return;
            }
            (_, DisplayData::Bytes(_)) => None,
        };
        if let Some(node) = node {
            let _ = self.output.append_child(&node);
            self.scroll_soon();
        }
    }

    /// A display shown as its text.
    fn show_text(&self, doc: &web_sys::Document, text: &str) {
        if let Ok(span) = doc.create_element("span") {
            span.set_class_name("display");
            span.set_text_content(Some(&format!("{text}\n")));
            let _ = self.output.append_child(&span);
            self.scroll_soon();
        }
    }
}

/// An HTML display without anything that navigates its frame. The sandbox (no token) and the
/// policy stop scripts, forms, popups and loads, but not the frame following a link or a
/// refresh: one click on a link the code made (`https://…/?d=<the den's data>`) would carry
/// data out. So links (`href` on `a`, `area` and MathML elements), refreshes (`meta`), `base`,
/// `link` (a preconnect names a host without a click), `template` (one with `shadowrootmode`
/// becomes a shadow root only in the frame's parser), nested frames and objects, SVG animations
/// that could set a link later, `srcdoc`, `ping`, `action` and `formaction` go. Parsed, cleaned and written out again
/// until a parse of the text finds nothing to remove (a quirk of the parser could make a second
/// parse differ from the first); `None` when that takes more than three passes.
fn without_navigation(html: &str) -> Option<String> {
    const MATHML: &str = "http://www.w3.org/1998/Math/MathML";
    let parser = web_sys::DomParser::new().ok()?;
    let mut text = html.to_owned();
    for _ in 0..3 {
        let doc = parser
            .parse_from_string(&text, web_sys::SupportedType::TextHtml)
            .ok()?;
        let all = doc.query_selector_all("*").ok()?;
        let mut changed = false;
        for i in 0..all.length() {
            let Some(el) = all.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
                continue;
            };
            let tag = el.local_name().to_ascii_lowercase();
            let animates_link = matches!(tag.as_str(), "set" | "animate")
                && el
                    .get_attribute("attributeName")
                    .is_some_and(|a| a.to_ascii_lowercase().contains("href"));
            // (`template`: its content is not in this document's tree, and one with
            // `shadowrootmode` becomes a shadow root in the frame's parser, not in this one's;
            // `link`: a preconnect or DNS prefetch names a host without a click.)
            if animates_link
                || matches!(
                    tag.as_str(),
                    "meta"
                        | "base"
                        | "link"
                        | "template"
                        | "iframe"
                        | "frame"
                        | "frameset"
                        | "object"
                        | "embed"
                        | "portal"
                        | "fencedframe"
                )
            {
                el.remove();
                changed = true;
                continue;
            }
            let link = matches!(tag.as_str(), "a" | "area")
                || el.namespace_uri().as_deref() == Some(MATHML);
            for name in el.get_attribute_names().iter() {
                let Some(name) = name.as_string() else {
                    continue;
                };
                let lower = name.to_ascii_lowercase();
                // (Even an in-page `#` link: in a srcdoc frame it resolves against the host
                // page's address, and loads that page into the frame.)
                let navigates = match lower.as_str() {
                    "srcdoc" | "ping" | "action" | "formaction" | "shadowrootmode" => true,
                    "href" | "xlink:href" => link,
                    _ => false,
                };
                if navigates {
                    let _ = el.remove_attribute(&name);
                    changed = true;
                }
            }
        }
        if !changed {
            return Some(text);
        }
        text = doc.document_element()?.outer_html();
    }
    None
}

/// Builds or removes the UI to match the `controls` attribute.
pub(crate) fn sync_ui(state: &Rc<State>, host: &HtmlElement) {
    let want = host.has_attribute("controls");
    let have = state.ui.borrow().is_some();
    if want == have {
        if let (true, Some(ui)) = (want, state.ui()) {
            show_code(&ui, state, host);
            super::editor::sync_editor(state, &ui, host);
        }
        return;
    }
    if !want {
        // A request the input line was asking the reader for gets end of input.
        state
            .input
            .cancel(true, "the controls that asked for input() were removed");
        // The edited text stays the code (`code`, run()) when the editor goes.
        let text = state.ui().and_then(|ui| ui.editor_text());
        super::editor::keep_edited_text(state, host, text);
        state.ui.borrow_mut().take();
        return;
    }
    let Some(ui) = Ui::build(host).map(Rc::new) else {
        return;
    };
    show_code(&ui, state, host);
    let weak = Rc::downgrade(state);
    let mut ls = Vec::new();
    // The browser's own `input` events (typing in the editor or the input line, picking a
    // file) are composed: they would reach the page as the element's `input` event, which is
    // the input() request (a CustomEvent with `prompt` and `respond`). They stop at the root.
    // (Only those of the UI's own fields: a field the page slotted into the element is the
    // page's, and its events go on.)
    let root: web_sys::Node = ui.root.clone().into();
    ls.push(Listener::new(ui.root.as_ref(), "input", move |e| {
        let inside = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Node>().ok())
            .is_some_and(|n| n.get_root_node() == root);
        if inside {
            e.stop_propagation();
        }
    }));
    {
        let w = weak.clone();
        ls.push(Listener::new(ui.run.as_ref(), "click", move |_| {
            if let Some(s) = w.upgrade().filter(|s| !s.busy()) {
                run_script(&s);
            }
        }));
    }
    if let Some(input) = by_id(&ui.root, "file") {
        let w = weak.clone();
        let inp = input.clone();
        ls.push(Listener::new(input.as_ref(), "change", move |_| {
            if let Some(s) = w.upgrade() {
                add_files(&s, get(&inp, "files"));
                let _ = Reflect::set(&inp, &"value".into(), &"".into());
            }
        }));
    }
    if let Some(drop_zone) = by_id(&ui.root, "drop") {
        for kind in ["dragenter", "dragover"] {
            let z = drop_zone.clone();
            ls.push(Listener::new(drop_zone.as_ref(), kind, move |e| {
                e.prevent_default();
                let _ = z.class_list().add_1("over");
            }));
        }
        let z = drop_zone.clone();
        ls.push(Listener::new(drop_zone.as_ref(), "dragleave", move |_| {
            let _ = z.class_list().remove_1("over");
        }));
        let z = drop_zone.clone();
        let w = weak.clone();
        ls.push(Listener::new(drop_zone.as_ref(), "drop", move |e| {
            e.prevent_default();
            let _ = z.class_list().remove_1("over");
            if let Some(s) = w.upgrade() {
                add_files(&s, get(&get(&e, "dataTransfer"), "files"));
            }
        }));
    }
    if let Some(line) = by_id(&ui.root, "stdin") {
        // Enter in the input line answers a waiting input() (interactive runs).
        let w = weak.clone();
        let l = line.clone();
        ls.push(Listener::new(line.as_ref(), "keydown", move |e| {
            let Some(s) = w.upgrade() else { return };
            if get_str(&e, "key").as_deref() != Some("Enter") || !s.input.waiting() {
                return;
            }
            e.prevent_default();
            let text = get(&l, "value");
            if s.input.answer_pending(&text) {
                let _ = Reflect::set(&l, &"value".into(), &"".into());
                let _ = l.remove_attribute("aria-label");
                s.ui_status("Running…");
            }
        }));
    }
    ls.extend(super::editor::lesson_controls(&weak, &ui, host));
    *ui.listeners.borrow_mut() = ls;
    let phase = state.phase.borrow().name();
    let live = phase == PhaseName::Live;
    ui.set_run_enabled(live);
    ui.set_busy(state.busy());
    if live {
        ui.hide_progress();
        ui.status.set_text_content(Some("Ready"));
        refresh_files(state, &ui);
    } else if phase != PhaseName::Opening {
        ui.hide_progress();
        ui.status.set_text_content(Some("Not loaded"));
    }
    *state.ui.borrow_mut() = Some(ui.clone());
    if phase == PhaseName::Waiting {
        super::lifecycle::show_waiting(state);
    }
    super::editor::sync_editor(state, &ui, host);
}

/// Shows the code Run executes (the `code` property, else the script child) read-only, unless
/// the editor shows it.
pub(crate) fn show_code(ui: &Ui, state: &State, host: &Element) {
    if let Some(code) = by_id(&ui.root, "code") {
        match state.code.borrow().clone().or_else(|| script_code(host)) {
            Some(c) => {
                code.set_hidden(ui.editor.borrow().is_some());
                code.set_text_content(Some(c.trim_end()));
            }
            None => code.set_hidden(true),
        }
    }
}

/// Writes dropped or picked files to /drop/<name>.
pub(crate) fn add_files(state: &Rc<State>, files: JsValue) {
    let n = get_f64(&files, "length").unwrap_or(0.0) as u32;
    let list: Vec<JsValue> = (0..n)
        .map(|i| Reflect::get_u32(&files, i).unwrap_or(JsValue::UNDEFINED))
        .collect();
    if list.is_empty() {
        return;
    }
    let s = state.clone();
    crate::callback::spawn_local(Box::pin(async move {
        for f in list {
            let name = get_str(&f, "name").unwrap_or_default();
            let buf = match Reflect::get(&f, &"arrayBuffer".into())
                .ok()
                .and_then(|m| m.dyn_into::<Function>().ok())
                .and_then(|m| m.call0(&f).ok())
            {
                Some(p) => JsFuture::from(Promise::from(p)).await,
                None => Err(den_error(
                    crate::errors::DenErrorCode::BadData,
                    "not a file",
                )),
            };
            // Dropped while Python loads: the write waits for the den, as `writeFile` does.
            let result = async {
                let bytes = Uint8Array::new(&buf?);
                let den = super::live_den(s.clone()).await?;
                den.write_impl(format!("/drop/{name}"), bytes.into()).await
            }
            .await;
            match result {
                Ok(_) => s.ui_status(&format!("Added /drop/{name}")),
                Err(e) => s.emit_error(&e),
            }
        }
    }));
}

/// Redraws the file list with download links.
pub(crate) fn refresh_files(state: &Rc<State>, ui: &Ui) {
    let Some(files) = state.den().and_then(|den| den.files_now()) else {
        return;
    };
    let Some(doc) = ui.root.owner_document() else {
        return;
    };
    ui.files.set_text_content(None);
    // A file's blob URL is kept while its content is the same (by SHA-256): a change to one
    // file copies that file, not the whole den. URLs of files gone or changed are revoked.
    // Both lists are in path order: one pass matches them.
    let mut before = std::mem::take(&mut *ui.urls.borrow_mut())
        .into_iter()
        .peekable();
    let mut urls = Vec::new();
    for (path, entry) in files.iter() {
        while before.next_if(|(p, _, _)| p < path).is_some() {}
        let url = match before.next_if(|(p, _, _)| p == path) {
            Some((_, sha, url)) if sha == entry.sha256 => url,
            _ => {
                let blob = JsBlob::new(
                    &Array::of1(&Uint8Array::from(&entry.data[..])),
                    &obj(&[("type", "application/octet-stream".into())]).into(),
                );
                ObjectUrl(create_object_url(&blob))
            }
        };
        let (Ok(li), Ok(a)) = (doc.create_element("li"), doc.create_element("a")) else {
            continue;
        };
        let _ = li.set_attribute("part", "file");
        let _ = a.set_attribute("part", "file-link");
        let _ = a.set_attribute("href", &url.0);
        let base = path.rsplit('/').next().unwrap_or("file");
        let _ = a.set_attribute("download", base);
        // Shown with invisible and reordering characters written out: a name cannot pass
        // for another (e.g. a right-to-left override turning "txt.exe" into "exe.txt").
        a.set_text_content(Some(&foxden_core::paths::visible_path(path)));
        let _ = li.append_child(&a);
        let _ = li.append_with_str_1(&format!(" ({} bytes)", entry.data.len()));
        let _ = ui.files.append_child(&li);
        urls.push((path.clone(), entry.sha256, url));
    }
    *ui.urls.borrow_mut() = urls;
}
