//! The iframe runtime: creates the sandboxed den page, fetches the Pyodide assets on the host,
//! hands them over with window messages (source-checked), and relays runs.
//!
//! [`options`] reads `iframeRuntime`'s options, [`assets`] fetches and checks the Pyodide files;
//! this file owns the connection: the iframe, its messages both ways, and every message from the
//! den page.

mod assets;
mod connect;
mod options;
pub mod packages;
pub mod warm;

use crate::callback::{with_timeout, Listener, Ticker};
use crate::js::{self, get, get_f64, obj};
use crate::wire;
pub(crate) use assets::AbortOnDrop;
use assets::*;
pub use connect::start;
use connect::*;
use foxden_core::input::{Answer, RunClock, MAX_PROMPT_CHARS, NO_HANDLER};
use foxden_core::outcome::{Display, MAX_DISPLAY_BYTES};
use foxden_core::protocol::{
    run_id, DenToHost, Done, HostToDen, OutputBuffer, ReplyError, ReplyLimits, Stream, Watchdog,
};
use foxden_core::vecmap::VecMap;
use futures::channel::oneshot;
use js_sys::{Array, Uint8Array};
pub use options::*;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlIFrameElement, MessageEvent};

/// Progress of asset loading: (loaded bytes, total bytes).
pub type Progress = Rc<dyn Fn(f64, f64)>;

/// Handler for streamed output of a run: (stream, the text the host kept).
pub type OutputHandler = Rc<dyn Fn(&str, &str)>;

/// Asks whoever answers `input()` for this run (`onInput`, or the element's `input` event):
/// prompt -> the answer, when it comes.
pub type InputHandler = Rc<dyn Fn(&str) -> futures::future::LocalBoxFuture<'static, Answer>>;

/// How a run's slot ended: the den page's reply (read by `wire`), or the watchdog.
enum SlotEnd {
    Reply(Box<Result<Done, ReplyError>>),
    Silent { started: bool },
}

/// How often the watchdog looks at the runs in flight (it runs only while there are some).
const WATCHDOG_TICK_MS: i32 = 100;

struct RunSlot {
    done: oneshot::Sender<SlotEnd>,
    output: Rc<RefCell<OutputBuffer>>,
    on_output: OutputHandler,
    displays: Rc<RefCell<Displays>>,
    on_display: DisplayHandler,
    limits: ReplyLimits,
    on_input: Option<InputHandler>,
    /// The watchdog's clock, from posting (or from `started`, for a `queued` run; `None` until
    /// then); it stops while an `input()` waits for its answer.
    clock: Option<RunClock>,
    /// When the run was posted ([`js::now_ms`]): a `queued` run must say `started` within
    /// `watchdog.start_ms` of it.
    posted_at: f64,
    /// The den page said the run is `queued` (at most once).
    queued: bool,
    /// An `input` request is being answered (one at a time; more are ignored).
    asking: bool,
    /// Stop was asked for: from then on the clock runs, even while an `input()` waits (a den
    /// page that ignores the stop is then ended by the watchdog, not held by the question).
    stopped: bool,
    watchdog: Watchdog,
    on_fetch: crate::den::FetchHandler,
}

impl RunSlot {
    /// `Some(started)` when the den page is silent past the run's deadline at `now`: its clock
    /// ran out, or (a `queued` run) it did not say `started` within `start_ms` of posting.
    fn silent(&self, now: f64) -> Option<bool> {
        match &self.clock {
            Some(c) => c.remaining(now).filter(|ms| *ms <= 0.0).map(|_| true),
            None => (now >= self.posted_at + self.watchdog.start_ms).then_some(false),
        }
    }
}

/// The watchdog, every [`WATCHDOG_TICK_MS`] while runs are in flight: ends the runs whose den
/// page is silent past their deadline, and stops once no run is left. One repeating timer per
/// connection instead of one per run: a run then costs no timer calls (a timer and its closure
/// cost Chromium ≈ 0.08 ms per run on a slow machine).
fn watchdog_tick(shared: &std::rc::Weak<RefCell<Shared>>) {
    let Some(shared) = shared.upgrade() else {
        return;
    };
    let now = js::now_ms();
    let mut sh = shared.borrow_mut();
    let late: Vec<(u32, bool)> = sh
        .runs
        .iter()
        .filter_map(|(id, s)| s.silent(now).map(|started| (*id, started)))
        .collect();
    for (id, started) in late {
        if let Some(slot) = sh.runs.remove(&id) {
            let _ = slot.done.send(SlotEnd::Silent { started });
        }
    }
    if sh.runs.is_empty() {
        if let Some(t) = sh.watchdog.as_mut() {
            t.stop();
        }
    }
}

#[derive(Default)]
struct Shared {
    /// The way to the den page (for answers the message handler sends itself).
    link: Option<DenLink>,
    loader: Option<oneshot::Sender<JsValue>>,
    runs: VecMap<u32, RunSlot>,
    resets: VecMap<u32, oneshot::Sender<JsValue>>,
    /// The warm cache key, while the host still wants the den page's snapshot (taken once).
    warm_key: Option<String>,
    /// The runs' watchdog ([`watchdog_tick`]), started when a run is posted.
    watchdog: Option<Ticker>,
}

impl Shared {
    /// Ends every pending run and reset, and an opening's wait for `hello` or `ready` (their
    /// futures see the channel closed).
    fn cancel_pending(&mut self) {
        self.runs.clear();
        self.resets.clear();
        self.loader = None;
    }
}

/// Posts to the den page: window messages to the iframe's window, with target "*" (an opaque
/// origin cannot be named). Window messages, not a `MessageChannel`: a `MessagePort` costs
/// Firefox ~0.15 ms per message, a window message ~0.02 ms, and every run takes two. What
/// comes back is read only from that window (`event.source`, see [`create`]).
#[derive(Clone)]
pub struct DenLink {
    frame: HtmlIFrameElement,
    /// The page that was connected to is gone from the iframe (it loaded again, e.g. because
    /// the iframe was moved in the document): nothing posted now would be read.
    lost: Rc<std::cell::Cell<bool>>,
}

impl DenLink {
    /// Posts `msg`, transferring `transfer`.
    pub fn post_message_with_transferable(
        &self,
        msg: &JsValue,
        transfer: &JsValue,
    ) -> Result<(), JsValue> {
        if self.lost.get() {
            return Err(JsValue::from_str("the den page was reloaded"));
        }
        let w = self
            .frame
            .content_window()
            .ok_or_else(|| JsValue::from_str("the den iframe has no window"))?;
        w.post_message_with_transfer(msg, "*", transfer)
    }

    /// Posts `msg`.
    pub fn post_message(&self, msg: &JsValue) -> Result<(), JsValue> {
        self.post_message_with_transferable(msg, &Array::new())
    }

    /// `event` came from the den page's window.
    fn sent(&self, event: &MessageEvent) -> bool {
        match (event.source(), self.frame.content_window()) {
            (Some(src), Some(w)) => JsValue::from(src) == JsValue::from(w),
            _ => false,
        }
    }
}

/// How a run ended, as far as the host can tell.
// One per run, moved once: boxing the reply would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum RunEnd {
    /// The den page answered with a well-formed reply.
    Done(Done),
    /// The den page answered with a reply the host refused.
    Refused(ReplyError),
    /// The den page did not answer in time (`started`: it had said the run started).
    Silent { started: bool },
    /// The connection was closed (`close()`, or the den page could not be posted to).
    Closed,
}

/// A run to post: the message, its transfer list, and how the host bounds it.
pub struct RunRequest {
    pub msg: js_sys::Object,
    pub transfer: Array,
    pub output: Rc<RefCell<OutputBuffer>>,
    pub on_output: OutputHandler,
    pub displays: Rc<RefCell<Displays>>,
    pub on_display: DisplayHandler,
    pub limits: ReplyLimits,
    pub watchdog: Watchdog,
    /// Who answers `input()`; `None`: the run is not interactive.
    pub on_input: Option<InputHandler>,
    /// Called with each `fetch` message of the run (`foxden.fetch`).
    pub on_fetch: crate::den::FetchHandler,
    /// Stop the run as soon as it is posted (a stop asked while it was starting).
    pub stop: bool,
}

/// Handler for each display of a run, as it arrives.
pub type DisplayHandler = Rc<dyn Fn(&Display)>;

/// The displays of one run, within [`MAX_DISPLAY_BYTES`] in all.
#[derive(Default)]
pub struct Displays {
    pub list: Vec<Display>,
    pub used: usize,
    /// A display was dropped: it was malformed or did not fit.
    pub dropped: bool,
}

impl Displays {
    /// Keeps the display `read` gives for the room left, within the run's caps (at most
    /// [`MAX_DISPLAYS_PER_RUN`](foxden_core::outcome::MAX_DISPLAYS_PER_RUN), [`MAX_DISPLAY_BYTES`]
    /// in all), and returns it; `None`, and the run's displays are `dropped`, when it has as many
    /// as it may or `read` refused (malformed, or too large for the room). No borrow is held
    /// while `read` runs: it reads JS values, and a JS exception crossing wasm would leave a
    /// borrow held for good.
    pub fn keep(
        cell: &RefCell<Self>,
        read: impl FnOnce(usize) -> Option<Display>,
    ) -> Option<Display> {
        let room = {
            let mut me = cell.borrow_mut();
            if me.list.len() >= foxden_core::outcome::MAX_DISPLAYS_PER_RUN {
                me.dropped = true;
                return None;
            }
            MAX_DISPLAY_BYTES.saturating_sub(me.used)
        };
        let read = read(room);
        let mut me = cell.borrow_mut();
        let Some(display) = read else {
            me.dropped = true;
            return None;
        };
        let size = display.iter().map(|(_, data)| data.len()).sum::<usize>();
        // Another display may have been kept meanwhile (only if `read` re-entered): recheck.
        if me.list.len() >= foxden_core::outcome::MAX_DISPLAYS_PER_RUN
            || size > MAX_DISPLAY_BYTES.saturating_sub(me.used)
        {
            me.dropped = true;
            return None;
        }
        me.used += size;
        me.list.push(display.clone());
        Some(display)
    }
}

/// Posts `connect` to the den page once, after the iframe loaded *and* the host allowed it
/// (denUrl checked). An opaque origin cannot be named as target, so it is posted to "*"; the den
/// page reads its parent's messages only after it.
struct ConnectGate {
    link: DenLink,
    posted: std::cell::Cell<bool>,
    loaded: std::cell::Cell<bool>,
    allowed: std::cell::Cell<bool>,
}

impl ConnectGate {
    fn allow(&self) {
        self.allowed.set(true);
        self.try_post();
    }
    fn try_post(&self) {
        if !self.loaded.get() || !self.allowed.get() || self.posted.get() {
            return;
        }
        let msg = obj(&[("foxden", "connect".into())]);
        self.posted.set(self.link.post_message(&msg).is_ok());
    }
}

/// Where a den's load time went, in ms (`den.info.stages`). The asset fetch, the warm cache's
/// read and the den page's handshake run side by side; the assets are handed over when fetched
/// (the den page compiles the wasm), and the worker boots once the warm cache answered.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoadStages {
    /// Fetching (or taking from the HTTP cache) and checking the three Pyodide files.
    pub assets_ms: f64,
    /// The warm cache's part after the assets were handed over: what was left of hashing them
    /// for its key and of reading and verifying its snapshot (both start beside the fetch).
    pub warm_ms: f64,
    /// From the start to the den page's `hello` (iframe load, isolation check).
    pub hello_ms: f64,
    /// In the den page, from `boot` to `ready` (compiling the wasm, starting the worker).
    pub den_ms: f64,
    /// In the worker: booting Pyodide, or resuming it from the snapshot.
    pub boot_ms: f64,
    /// From handing over the assets to `ready`, as the host sees it.
    pub ready_ms: f64,
}

/// A live den page. Dropping it removes its message listener and the iframe.
pub struct Connection {
    iframe: HtmlIFrameElement,
    link: DenLink,
    shared: Rc<RefCell<Shared>>,
    _on_message: Listener,
    _on_load: Listener,
    gate: Rc<ConnectGate>,
    next_id: std::cell::Cell<u32>,
    hello_rx: RefCell<Option<oneshot::Receiver<JsValue>>>,
    pub isolation: Isolation,
    pub load_ms: f64,
    /// Where the load time went (`den.info.stages`).
    pub stages: LoadStages,
    /// The den page is cross-origin isolated: a timeout first interrupts Python
    /// (KeyboardInterrupt, variables kept) and kills the worker only if that fails.
    pub interruptible: std::cell::Cell<bool>,
    /// The warm start: "hit" (resumed from the cached snapshot), "miss", "rejected" (a cached
    /// snapshot did not load and was replaced) or "off".
    pub warm: std::cell::Cell<&'static str>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.iframe.remove();
        crate::leak_check::connection_dropped();
    }
}

impl Connection {
    fn next_id(&self) -> u32 {
        let id = self.next_id.get().wrapping_add(1);
        self.next_id.set(id);
        id
    }

    /// Posts a run and waits for its end, under the host's watchdog: the den page must answer
    /// within `watchdog.run_ms` of posting, or, for a run it says is `queued` (its worker is
    /// booting), say `started` within `watchdog.start_ms` of posting and then answer within
    /// `watchdog.run_ms`.
    pub async fn run(&self, req: RunRequest) -> RunEnd {
        let id = self.next_id();
        let _ = js_sys::Reflect::set(&req.msg, &js::key("id"), &id.into());
        let (tx, rx) = oneshot::channel();
        let now = js::now_ms();
        self.shared.borrow_mut().runs.insert(
            id,
            RunSlot {
                done: tx,
                output: req.output,
                on_output: req.on_output,
                displays: req.displays,
                on_display: req.on_display,
                limits: req.limits,
                on_input: req.on_input,
                clock: Some(RunClock::start(&req.watchdog, now)),
                posted_at: now,
                queued: false,
                asking: false,
                stopped: false,
                watchdog: req.watchdog,
                on_fetch: req.on_fetch,
            },
        );
        // The den page forwards the run to its worker and times it; one stopped while it was
        // being posted (`stop`) it never starts.
        let _ = js_sys::Reflect::set(&req.msg, &"stopped".into(), &req.stop.into());
        if self
            .link
            .post_message_with_transferable(&req.msg, &req.transfer)
            .is_err()
        {
            self.shared.borrow_mut().runs.remove(&id);
            return RunEnd::Closed;
        }
        if let Some(t) = self.shared.borrow_mut().watchdog.as_mut() {
            t.start();
        }
        // The slot ends with the reply, or by the watchdog: its clock stops while an `input()`
        // waits for a person, so that time is never counted.
        let end = match rx.await {
            Ok(SlotEnd::Reply(reply)) => match *reply {
                Ok(done) => RunEnd::Done(done),
                Err(e) => RunEnd::Refused(e),
            },
            Ok(SlotEnd::Silent { started }) => RunEnd::Silent { started },
            Err(_) => RunEnd::Closed,
        };
        self.shared.borrow_mut().runs.remove(&id);
        end
    }

    /// The way to the den page (the run's `fetch-reply` messages go on it).
    pub fn link(&self) -> DenLink {
        self.link.clone()
    }

    /// Asks the den page to stop the runs in flight (interrupt, or restart the worker); a run
    /// still `queued` (its worker booting, or another run ahead) is not started: the den page
    /// hands its files to the worker without its code and ends it as `Stopped`. `false` when no
    /// run is in flight.
    pub fn stop_runs(&self) -> bool {
        let ids: Vec<u32> = {
            let mut shared = self.shared.borrow_mut();
            let now = js::now_ms();
            for slot in shared.runs.values_mut() {
                slot.stopped = true;
                if let Some(c) = slot.clock.as_mut() {
                    c.resume(now);
                }
            }
            shared.runs.keys().copied().collect()
        };
        for id in &ids {
            post_stop(&self.link, *id);
        }
        !ids.is_empty()
    }

    /// The den page connected to is gone from its iframe (it reloaded): nothing posted to it
    /// is read any more.
    pub fn is_lost(&self) -> bool {
        self.link.lost.get()
    }

    /// Ends every pending run and reset at once (their futures see the channel closed).
    pub fn cancel_pending(&self) {
        self.shared.borrow_mut().cancel_pending();
    }

    /// Restarts the interpreter; resolves when the new one is ready, with how it booted:
    /// `("snapshot" | "scratch", boot ms, ms its packages took to install)`.
    pub async fn reset(
        &self,
        timeout_ms: f64,
    ) -> Result<(&'static str, f64, Option<f64>), ResetError> {
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        self.shared.borrow_mut().resets.insert(id, tx);
        let posted = self.link.post_message(&obj(&[
            ("t", HostToDen::Reset.as_str().into()),
            ("id", id.into()),
        ]));
        if posted.is_err() {
            // The den page is gone (its iframe removed, or reloaded): nothing will answer.
            self.shared.borrow_mut().resets.remove(&id);
            return Err(ResetError::Gone);
        }
        let out = with_timeout(rx, timeout_ms).await;
        self.shared.borrow_mut().resets.remove(&id);
        match out {
            Some(Ok(msg)) => match wire::text(&get(&msg, "error"), 4096) {
                Some((e, _)) => Err(ResetError::Failed(e)),
                None => Ok((
                    if js::get_tag(&msg, "from", 16).as_deref() == Some("snapshot") {
                        "snapshot"
                    } else {
                        "scratch"
                    },
                    get_f64(&msg, "bootMs")
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .unwrap_or(0.0),
                    get_f64(&msg, "packagesMs").filter(|v| v.is_finite() && *v >= 0.0),
                )),
            },
            // The wait was ended by the host: the den page reloaded (or the den closed).
            Some(Err(_)) => Err(ResetError::Gone),
            None => Err(ResetError::Failed(
                "the den page did not answer the reset".into(),
            )),
        }
    }
}

/// Why [`Connection::reset`] failed.
pub enum ResetError {
    /// The den page could not be posted to: it is gone (a fresh one is needed).
    Gone,
    /// The den page answered with this error, or did not answer in time.
    Failed(String),
}

/// The id of a message, if it is a whole number in range.
fn msg_id(msg: &JsValue) -> Option<u32> {
    get_f64(msg, "id").and_then(run_id)
}

/// Applies `f` to the slot of the run the message names (if its id is valid and the run live).
/// Asks the den page to stop run `id`.
fn post_stop(link: &DenLink, id: u32) {
    let _ = link.post_message(&obj(&[
        ("t", HostToDen::Stop.as_str().into()),
        ("id", id.into()),
    ]));
}

fn with_slot<T>(
    shared: &Rc<RefCell<Shared>>,
    msg: &JsValue,
    f: impl FnOnce(&mut RunSlot) -> T,
) -> Option<T> {
    let id = msg_id(msg)?;
    shared.borrow_mut().runs.get_mut(&id).map(f)
}

/// Every message from the den page goes through here. It may come from hostile code: unknown
/// kinds, wrong types, stale or future ids are ignored; replies are read by `wire` with bounds.
fn on_den_message(shared: &Rc<RefCell<Shared>>, ev: MessageEvent) {
    let msg = ev.data();
    let Some(kind) = js::get_tag(&msg, "t", 16).and_then(|t| DenToHost::parse(&t)) else {
        return;
    };
    match kind {
        DenToHost::Hello | DenToHost::Ready | DenToHost::LoadError => {
            let tx = shared.borrow_mut().loader.take();
            if let Some(tx) = tx {
                let _ = tx.send(msg);
            }
        }
        DenToHost::Queued => {
            // The run waits for its worker: no clock until `started`, which must come within
            // `start_ms` of posting. Once per run, so that it cannot be used to stretch it.
            with_slot(shared, &msg, |s| {
                if !s.queued {
                    s.queued = true;
                    s.clock = None;
                }
            });
        }
        DenToHost::Started => {
            // A queued run's clock starts here (an `input` may follow at once).
            with_slot(shared, &msg, |s| {
                if s.queued && s.clock.is_none() {
                    s.clock = Some(RunClock::start(&s.watchdog, js::now_ms()));
                }
            });
        }
        DenToHost::Out => {
            let slot = with_slot(shared, &msg, |s| (s.output.clone(), s.on_output.clone()));
            let Some((output, handler)) = slot else {
                return;
            };
            let room = output.borrow().room();
            let Some((parts, cut)) = wire::out(&msg, room) else {
                return;
            };
            // All kept first, then the handlers, in print order (a handler may close the den).
            let kept: Vec<(Stream, String)> = {
                let mut o = output.borrow_mut();
                let kept = parts
                    .into_iter()
                    .map(|(stream, text)| (stream, o.push(stream, &text)))
                    .filter(|(_, k)| !k.is_empty())
                    .collect();
                o.truncated |= cut;
                kept
            };
            for (stream, text) in &kept {
                handler(stream.as_str(), text);
            }
        }
        DenToHost::Display => {
            let slot = with_slot(shared, &msg, |s| (s.displays.clone(), s.on_display.clone()));
            let Some((displays, handler)) = slot else {
                return;
            };
            // Kept first, then the handler, with no borrow held (it may run user code).
            let kept = Displays::keep(&displays, |room| wire::display(&msg, room));
            if let Some(display) = kept {
                handler(&display);
            }
        }
        DenToHost::Input => on_input_request(shared, &msg),
        DenToHost::Done => {
            let Some(id) = msg_id(&msg) else { return };
            let slot = shared.borrow_mut().runs.remove(&id);
            if let Some(slot) = slot {
                let _ =
                    slot.done
                        .send(SlotEnd::Reply(Box::new(wire::done(&msg, id, &slot.limits))));
            }
        }
        DenToHost::Snapshot => {
            // Offered once by the den page's maker worker (which runs no user code); kept for
            // later visits. Anything else, or a second one, is ignored.
            let Some(key) = shared.borrow_mut().warm_key.take() else {
                return;
            };
            let Ok(bytes) = get(&msg, "snapshot").dyn_into::<Uint8Array>() else {
                return;
            };
            if bytes.length() == 0 || bytes.length() > warm::MAX_SNAPSHOT_BYTES {
                return;
            }
            crate::callback::spawn_local(Box::pin(async move { warm::store(&key, bytes).await }));
        }
        DenToHost::Fetch => {
            // Only for a live run; the handler reads the message with bounds and always answers.
            if let Some(handler) = with_slot(shared, &msg, |s| s.on_fetch.clone()) {
                handler(&msg);
            }
        }
        DenToHost::ResetDone => {
            let Some(id) = msg_id(&msg) else { return };
            let tx = shared.borrow_mut().resets.remove(&id);
            if let Some(tx) = tx {
                let _ = tx.send(msg);
            }
        }
    }
}

/// A run's `input()` asks for a line. The request may be hostile: it counts only for a live,
/// started run, one at a time, with a text prompt (cut to [`MAX_PROMPT_CHARS`]). The clock stops
/// until the answer is posted (unless Stop was asked for: then it goes on); a run nobody
/// answers for gets `EOFError` at once.
fn on_input_request(shared: &Rc<RefCell<Shared>>, msg: &JsValue) {
    let Some(id) = msg_id(msg) else { return };
    let Some((prompt, _)) = wire::text(&get(msg, "prompt"), MAX_PROMPT_CHARS * 3) else {
        return;
    };
    let prompt: String = prompt.chars().take(MAX_PROMPT_CHARS).collect();
    let handler = {
        let mut sh = shared.borrow_mut();
        let Some(slot) = sh.runs.get_mut(&id) else {
            return;
        };
        if slot.asking || slot.clock.is_none() {
            return;
        }
        let Some(h) = slot.on_input.clone() else {
            drop(sh);
            post_answer(shared, id, &Answer::Failed(NO_HANDLER.into()));
            return;
        };
        slot.asking = true;
        if !slot.stopped {
            if let Some(c) = slot.clock.as_mut() {
                c.pause(js::now_ms());
            }
        }
        h
    };
    let shared = shared.clone();
    crate::callback::spawn_local(Box::pin(async move {
        let answer = handler(&prompt).await;
        // The run may have ended meanwhile (timeout is paused, but close/reset are not).
        let live = match shared.borrow_mut().runs.get_mut(&id) {
            Some(slot) => {
                slot.asking = false;
                if let Some(c) = slot.clock.as_mut() {
                    c.resume(js::now_ms());
                }
                true
            }
            None => false,
        };
        if live {
            post_answer(&shared, id, &answer);
        }
    }));
}

/// Posts `input-reply` for run `id`.
fn post_answer(shared: &Rc<RefCell<Shared>>, id: u32, answer: &Answer) {
    let (text, error) = match answer {
        Answer::Text(t) => (JsValue::from(t.as_str()), JsValue::NULL),
        Answer::Eof => (JsValue::NULL, JsValue::NULL),
        Answer::Failed(why) => (JsValue::NULL, JsValue::from(why.as_str())),
    };
    let link = shared.borrow().link.clone();
    if let Some(link) = link {
        let _ = link.post_message(&obj(&[
            ("t", HostToDen::InputReply.as_str().into()),
            ("id", id.into()),
            ("text", text),
            ("error", error),
        ]));
    }
}
