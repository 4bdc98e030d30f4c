//! The host side of `foxden.fetch`: each `fetch` message of a run is read (bounded), decided by
//! the den's [`Broker`] (foxden-core: allowlist, method, headers, body, rate), made by this page
//! with `credentials: "omit"` and `redirect: "manual"`, its answer read as a stream and cut at
//! `maxResponseBytes`, and answered with a `fetch-reply`. Every request, allowed or refused, is
//! recorded (`run.requests`) and reported (`onRequest`, the `request` event).
//!
//! A run's requests are owned by its [`RunFetches`]: when the run ends (or the value is
//! dropped), every request still pending is aborted through its `AbortController` and recorded
//! as `aborted`; answers arriving later are dropped.

use super::*;
use crate::js::get;
use crate::runtime::AbortOnDrop;
use crate::runtime::DenLink;
use crate::wire;
use foxden_core::net::{
    Checked, Refusal, Refused, RequestRecord, ResponseCap, MAX_RECORDS_PER_RUN,
    MAX_RESPONSE_HEADERS, MAX_RESPONSE_HEADER_BYTES,
};
use foxden_core::vecmap::VecMap;
use js_sys::Uint8Array;
use std::rc::Weak;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

thread_local! {
    /// The browser's own `fetch` and `Headers`, as foxden.js found them when it was evaluated
    /// (or, loaded otherwise, as the module found them when it started): a page (or a library
    /// on it: error reporting, an auth interceptor) may wrap `window.fetch` later, and such a
    /// wrapper could add the page's token or cookies (`credentials`), or follow a redirect, on
    /// a den's request. Wrappers installed before foxden loaded still apply.
    static PRISTINE: RefCell<Option<(js_sys::Function, js_sys::Function)>> = const { RefCell::new(None) };
}

/// Keeps `fetch` and `Headers` for den requests (see [`PRISTINE`]) if both are functions:
/// those given, or with `None` the window's current ones, unless some are kept already.
pub(crate) fn keep_pristine_fetch(given: Option<(JsValue, JsValue)>) {
    let replace = given.is_some();
    let found = given.or_else(|| {
        let w = web_sys::window()?;
        Some((get(&w, "fetch"), get(&w, "Headers")))
    });
    let Some((fetch, headers)) = found else {
        return;
    };
    let (Ok(fetch), Ok(headers)) = (fetch.dyn_into(), headers.dyn_into()) else {
        return;
    };
    PRISTINE.with(|p| {
        let mut p = p.borrow_mut();
        if replace || p.is_none() {
            *p = Some((fetch, headers));
        }
    });
}

/// Handler of a run's `fetch` messages (the runtime calls it with each message of the run).
pub(crate) type FetchHandler = Rc<dyn Fn(&JsValue)>;

/// A request in flight: its abort handle and what its record will say if it is aborted.
struct Pending {
    abort: AbortOnDrop,
    url: String,
    method: &'static str,
    started: f64,
    /// Its body's bytes, held by the host until the request is made.
    body_bytes: u64,
}

/// The requests of one run.
pub(crate) struct RunFetches {
    den: Weak<Inner>,
    run_id: u32,
    link: DenLink,
    on_request: Option<Function>,
    pending: VecMap<u32, Pending>,
    records: Vec<RequestRecord>,
    /// The run ended: nothing more is made, answered or recorded.
    closed: bool,
    /// Requests being made now (at most [`MAX_CONCURRENT`]), and those waiting for a slot.
    in_flight: usize,
    waiting: Vec<futures::channel::oneshot::Sender<()>>,
}

/// The most requests of one run the host makes at once (each may hold up to twice
/// `maxResponseBytes` while its answer comes); later ones wait for a slot, in order, as a
/// browser queues requests to one server.
pub(crate) const MAX_CONCURRENT: usize = 6;

/// The most bytes of request bodies the requests of one run under way (made, or waiting for a
/// slot) hold in the host page: past it, a request is refused (`rate`) before it is checked.
/// (The code may start requests without awaiting them: 1 000 POSTs of 1 MiB would otherwise
/// sit in the host page's memory.)
const MAX_HELD_BODY_BYTES: u64 = 16 << 20;

/// A request's slot among the [`MAX_CONCURRENT`]; dropping it hands the slot to the next
/// request waiting, if any.
struct Slot(Weak<RefCell<RunFetches>>);

impl Slot {
    /// Waits for a slot; `None` when the run ended meanwhile.
    async fn acquire(this: &Weak<RefCell<RunFetches>>) -> Option<Slot> {
        let wait = {
            let rc = this.upgrade()?;
            let mut me = rc.borrow_mut();
            if me.closed {
                return None;
            }
            if me.in_flight < MAX_CONCURRENT {
                me.in_flight += 1;
                None
            } else {
                let (tx, rx) = futures::channel::oneshot::channel();
                me.waiting.push(tx);
                Some(rx)
            }
        };
        if let Some(rx) = wait {
            // Handed over by a request that ended; cancelled when the run ends.
            rx.await.ok()?;
        }
        Some(Slot(this.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(rc) = self.0.upgrade() else { return };
        let Ok(mut me) = rc.try_borrow_mut() else {
            return;
        };
        while !me.waiting.is_empty() {
            if me.waiting.remove(0).send(()).is_ok() {
                return;
            }
        }
        me.in_flight = me.in_flight.saturating_sub(1);
    }
}

impl Drop for RunFetches {
    fn drop(&mut self) {
        // AbortOnDrop aborts each pending request.
        self.pending.clear();
    }
}

impl RunFetches {
    /// The requests of run `run_id` of this den, answered through `link`.
    pub(crate) fn new(
        den: &Rc<Inner>,
        run_id: u32,
        link: DenLink,
        on_request: Option<Function>,
    ) -> Rc<RefCell<Self>> {
        Rc::new(RefCell::new(RunFetches {
            den: Rc::downgrade(den),
            run_id,
            link,
            on_request,
            pending: VecMap::new(),
            records: Vec::new(),
            closed: false,
            in_flight: 0,
            waiting: Vec::new(),
        }))
    }

    /// The handler the runtime calls with each `fetch` message of the run.
    pub(crate) fn handler(this: &Rc<RefCell<Self>>) -> FetchHandler {
        let weak = Rc::downgrade(this);
        Rc::new(move |msg: &JsValue| {
            if let Some(this) = weak.upgrade() {
                on_fetch(&this, msg);
            }
        })
    }

    /// Ends the run's requests: the pending ones are aborted and recorded as `aborted`. Returns
    /// the run's records, in order.
    pub(crate) fn finish(this: &Rc<RefCell<Self>>) -> Vec<RequestRecord> {
        let mut pending: Vec<(u32, Pending)> = this.borrow_mut().pending.take_all();
        foxden_core::order::sort_by_key(&mut pending, |(req, _)| *req);
        let now = js::now_ms();
        for (_, p) in pending {
            drop(p.abort);
            RunFetches::record(
                this,
                RequestRecord {
                    url: p.url,
                    method: p.method.into(),
                    status: None,
                    refused: Some(Refusal::Aborted),
                    message: "the run ended before the answer came; the request was aborted".into(),
                    bytes: 0,
                    duration_ms: now - p.started,
                },
            );
        }
        let mut me = this.borrow_mut();
        me.closed = true;
        // Requests still waiting for a slot are not made (they are recorded as aborted above).
        me.waiting.clear();
        std::mem::take(&mut me.records)
    }

    /// Records a request and reports it (`onRequest`, the `request` event).
    fn record(this: &Rc<RefCell<Self>>, rec: RequestRecord) {
        let (run_id, user, den) = {
            let mut me = this.borrow_mut();
            if me.closed {
                return;
            }
            me.records.push(rec.clone());
            (me.run_id, me.on_request.clone(), me.den.upgrade())
        };
        if let Some(f) = user {
            let _ = f.call1(&JsValue::UNDEFINED, &request_chunk(run_id, &rec));
        }
        if let Some(d) = den {
            d.emit(&DenEvent::Request {
                run_id,
                record: &rec,
            });
        }
    }

    /// Posts the answer of request `req` to the den page (if the run is still on).
    fn reply(&self, id: &JsValue, req: u32, answer: Answer) {
        if self.closed {
            return;
        }
        let (status, headers, body, refused, message) = match answer {
            Answer::Ok {
                status,
                headers,
                body,
            } => (
                JsValue::from(status),
                headers,
                body,
                JsValue::NULL,
                String::new(),
            ),
            Answer::Refused { status, refused } => (
                status.map_or(JsValue::NULL, JsValue::from),
                Array::new(),
                JsValue::NULL,
                JsValue::from(refused.reason.as_str()),
                refused.message,
            ),
        };
        let transfer = Array::new();
        if let Some(b) = body.dyn_ref::<Uint8Array>() {
            transfer.push(&b.buffer());
        }
        let msg = obj(&[
            ("t", HostToDen::FetchReply.as_str().into()),
            ("id", id.clone()),
            ("req", req.into()),
            ("status", status),
            ("headers", headers.into()),
            ("body", body),
            ("refused", refused),
            ("message", message.into()),
        ]);
        let _ = self.link.post_message_with_transferable(&msg, &transfer);
    }
}

/// What the host answers a request.
enum Answer {
    Ok {
        status: u16,
        headers: Array,
        body: JsValue,
    },
    Refused {
        status: Option<u16>,
        refused: Refused,
    },
}

/// One `fetch` message: decide, then make the request (or refuse it).
fn on_fetch(this: &Rc<RefCell<RunFetches>>, msg: &JsValue) {
    // A message that is not even a request (no request number) cannot be answered: dropped.
    let Some((req_no, req, body)) = wire::fetch_request(msg) else {
        return;
    };
    let id = get(msg, "id");
    let refuse = |this: &Rc<RefCell<RunFetches>>, r: Refused, record: bool| {
        if record {
            RunFetches::record(this, RequestRecord::refused(&req, &r));
        }
        this.borrow().reply(
            &id,
            req_no,
            Answer::Refused {
                status: None,
                refused: r,
            },
        );
    };
    let body_bytes = body.as_ref().map_or(0, |b| u64::from(b.length()));
    {
        let me = this.borrow();
        if me.closed || me.pending.contains_key(&req_no) {
            return;
        }
        if me.records.len() + me.pending.len() >= MAX_RECORDS_PER_RUN {
            drop(me);
            let r = Refused::new(
                Refusal::Rate,
                format!("a run may make at most {MAX_RECORDS_PER_RUN} requests"),
            );
            return refuse(this, r, false);
        }
        let held: u64 = me.pending.iter().map(|(_, p)| p.body_bytes).sum();
        if held + body_bytes > MAX_HELD_BODY_BYTES {
            drop(me);
            let r = Refused::new(
                Refusal::Rate,
                format!(
                    "the run's requests under way hold {} MiB of bodies at most: await some of them first",
                    MAX_HELD_BODY_BYTES >> 20
                ),
            );
            return refuse(this, r, true);
        }
    }
    let Some(den) = this.borrow().den.upgrade() else {
        return;
    };
    let decided = den.broker.borrow_mut().check(&req, js::now_ms());
    let checked = match decided {
        Ok(c) => c,
        Err(r) => return refuse(this, r, true),
    };
    let max = den.broker.borrow().max_response_bytes();
    let abort = AbortOnDrop::new();
    let signal = abort.signal();
    this.borrow_mut().pending.insert(
        req_no,
        Pending {
            abort,
            url: checked.url.href(),
            method: checked.method,
            started: js::now_ms(),
            body_bytes,
        },
    );
    let weak = Rc::downgrade(this);
    crate::callback::spawn_local(Box::pin(async move {
        let started = js::now_ms();
        let href = checked.url.href();
        let method = checked.method;
        let Some(slot) = Slot::acquire(&weak).await else {
            return;
        };
        let (answer, status, bytes) = make(&checked, body, signal, max).await;
        drop(slot);
        let Some(this) = weak.upgrade() else { return };
        // Aborted by the end of the run: finish() has recorded it.
        if this.borrow_mut().pending.remove(&req_no).is_none() {
            return;
        }
        let (refused, message) = match &answer {
            Answer::Refused { refused, .. } => (Some(refused.reason), refused.message.clone()),
            Answer::Ok { .. } => (None, String::new()),
        };
        RunFetches::record(
            &this,
            RequestRecord {
                url: href,
                method: method.into(),
                status,
                refused,
                message,
                bytes,
                duration_ms: js::now_ms() - started,
            },
        );
        this.borrow().reply(&id, req_no, answer);
    }));
}

/// Makes the request; returns the answer, the HTTP status (if one came) and the bytes delivered.
async fn make(
    c: &Checked,
    body: Option<Uint8Array>,
    signal: JsValue,
    max: u64,
) -> (Answer, Option<u16>, u64) {
    let href = c.url.href();
    let refused = |status: Option<u16>, reason, message: String| {
        (
            Answer::Refused {
                status,
                refused: Refused::new(reason, message),
            },
            status,
            0,
        )
    };
    let (Some(window), Some((fetch, headers_class))) =
        (web_sys::window(), PRISTINE.with(|p| p.borrow().clone()))
    else {
        return refused(None, Refusal::Failed, "this page has no fetch".into());
    };
    let init = web_sys::RequestInit::new();
    let headers = match js_sys::Reflect::construct(&headers_class, &js_sys::Array::new()) {
        Ok(h) => h.unchecked_into::<web_sys::Headers>(),
        Err(e) => return refused(None, Refusal::Failed, js::describe(&e)),
    };
    for (name, value) in &c.headers {
        if let Err(e) = headers.append(name, value) {
            return refused(
                None,
                Refusal::BadRequest,
                format!("the header {name:?}: {}", js::describe(&e)),
            );
        }
    }
    // Never the page's cookies or credentials, never a followed redirect (its target may not be
    // in the allowlist, and a browser does not say where it points), no referrer.
    for (k, v) in [
        ("method", JsValue::from(c.method)),
        ("headers", headers.into()),
        ("credentials", "omit".into()),
        ("redirect", "manual".into()),
        ("mode", "cors".into()),
        ("cache", "no-store".into()),
        ("referrerPolicy", "no-referrer".into()),
        ("signal", signal),
        // An empty body is no body (the browser refuses any body on a GET or HEAD).
        (
            "body",
            body.filter(|b| b.length() > 0)
                .map_or(JsValue::UNDEFINED, JsValue::from),
        ),
    ] {
        let _ = js_sys::Reflect::set(&init, &k.into(), &v);
    }
    let sent = fetch
        .call2(&window, &JsValue::from_str(&href), &init)
        .map(|p| {
            p.dyn_into::<js_sys::Promise>()
                .unwrap_or_else(|v| js_sys::Promise::resolve(&v))
        })
        .unwrap_or_else(|e| js_sys::Promise::reject(&e));
    let resp = match JsFuture::from(sent).await {
        Ok(r) => match r.dyn_into::<web_sys::Response>() {
            Ok(r) => r,
            Err(_) => {
                return refused(
                    None,
                    Refusal::Failed,
                    "fetch did not answer with a Response".into(),
                )
            }
        },
        Err(e) => {
            let why = js::describe(&e);
            if foxden_core::find_str(&why, "AbortError").is_some() {
                return refused(None, Refusal::Aborted, "the request was aborted".into());
            }
            return refused(
                None,
                Refusal::Failed,
                format!(
                    "the request to {href} failed ({why}): the server is unreachable, or it does not allow this page's origin (CORS)"
                ),
            );
        }
    };
    if resp.type_() == web_sys::ResponseType::Opaqueredirect || resp.redirected() {
        return refused(
            None,
            Refusal::Redirect,
            format!(
                "{href} answered with a redirect, which foxden does not follow (its target was not checked against the allowlist and was not contacted); fetch the final URL instead"
            ),
        );
    }
    let status = resp.status();
    let mut cap = ResponseCap::new(max);
    let announced = resp
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| s.trim().parse::<u64>().ok());
    // A HEAD answer has no body, whatever length it announces.
    if let Err(r) = cap.announced(announced.filter(|_| c.method != "HEAD")) {
        return refused(Some(status), r.reason, r.message);
    }
    let headers = response_headers(&resp.headers());
    let mut chunks: Vec<Uint8Array> = Vec::new();
    if let Some(stream) = resp.body() {
        let reader: web_sys::ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
        loop {
            let r = match JsFuture::from(reader.read()).await {
                Ok(r) => r,
                Err(e) => {
                    return refused(
                        Some(status),
                        Refusal::Failed,
                        format!("reading the answer of {href} failed: {}", js::describe(&e)),
                    )
                }
            };
            if get(&r, "done").as_bool().unwrap_or(true) {
                break;
            }
            let Ok(chunk) = get(&r, "value").dyn_into::<Uint8Array>() else {
                break;
            };
            if let Err(e) = cap.add(chunk.length() as u64) {
                // Cut: nothing more is read, and nothing of it is delivered.
                let _ = reader.cancel();
                return refused(Some(status), e.reason, e.message);
            }
            chunks.push(chunk);
        }
    }
    let out = Uint8Array::new_with_length(cap.used as u32);
    let mut off = 0;
    for c in chunks {
        out.set(&c, off);
        off += c.length();
    }
    (
        Answer::Ok {
            status,
            headers,
            body: out.into(),
        },
        Some(status),
        cap.used,
    )
}

/// The answer's headers the browser exposes, within the caps.
fn response_headers(h: &web_sys::Headers) -> Array {
    let out = Array::new();
    let mut used = 0;
    let Ok(Some(iter)) = js_sys::try_iter(h) else {
        return out;
    };
    for pair in iter.flatten() {
        let name = js_sys::Reflect::get_u32(&pair, 0)
            .ok()
            .and_then(|v| v.as_string());
        let value = js_sys::Reflect::get_u32(&pair, 1)
            .ok()
            .and_then(|v| v.as_string());
        let (Some(name), Some(value)) = (name, value) else {
            continue;
        };
        used += name.len() + value.len();
        if out.length() as usize >= MAX_RESPONSE_HEADERS || used > MAX_RESPONSE_HEADER_BYTES {
            break;
        }
        out.push(&obj(&[("name", name.into()), ("value", value.into())]));
    }
    out
}

/// A `NetworkRequest` (`run.requests`).
pub(crate) fn request_info(r: &RequestRecord) -> JsValue {
    obj(&[
        ("url", r.url.as_str().into()),
        ("method", r.method.as_str().into()),
        ("status", r.status.map_or(JsValue::NULL, JsValue::from)),
        (
            "refusedBecause",
            r.refused.map_or(JsValue::NULL, |x| x.as_str().into()),
        ),
        ("message", r.message.as_str().into()),
        ("bytes", (r.bytes as f64).into()),
        ("durationMs", r.duration_ms.into()),
    ])
    .into()
}

/// A `NetworkRequestChunk` (`onRequest`, the `request` event): the info with the run's number.
pub(crate) fn request_chunk(run_id: u32, r: &RequestRecord) -> JsValue {
    let o = request_info(r);
    let _ = js_sys::Reflect::set(&o, &"runId".into(), &run_id.into());
    o
}
