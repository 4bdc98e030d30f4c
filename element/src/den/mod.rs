//! A den: host-owned files plus a runtime that runs Python over them.

//!
//! [`options`] validates `openDen`'s and `run`'s options; [`api`] is the JavaScript-facing
//! method layer; this file holds the den's state and the logic of each operation.

pub(crate) mod adapter;
mod api;
mod events;
mod names;
mod net;
pub(crate) mod options;
mod run;

use crate::errors::{den_error, option_error, path_error, snapshot_error};
use crate::js::{self, bytes_to_js, get_str, obj, str_array};
use crate::runtime::{
    self, Connection, DisplayHandler, Displays, OutputHandler, Progress, RunEnd, RunRequest,
};
pub(crate) use events::error_js;
pub use events::storage_to_js;
use events::{changes_js, display_chunk, outcome_js, output_chunk};
pub use events::{DenEvent, EventSink, InputReply};
use foxden_core::files::{ChangeSet, FileEntry, FileMap, Op, StorageError, WriteRate};
use foxden_core::limits;
use foxden_core::outcome::{lost_den_error, Display, LostDen, RunOutcome};
use foxden_core::paths::normalize_file_path;
use foxden_core::protocol::{Done, HostToDen, OutputBuffer, ReplyLimits, Watchdog};
use foxden_core::sync::SyncState;
use futures::channel::oneshot;
use js_sys::{Array, Function, Object, Promise};
pub(crate) use names::closing_until;
pub(crate) use net::{keep_pristine_fetch, FetchHandler};
pub use options::*;
pub(crate) use run::answer_from_js;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

pub(crate) struct Inner {
    pub opts: DenOptions,
    files: RefCell<FileMap>,
    sync: RefCell<SyncState>,
    conn: RefCell<Option<Rc<Connection>>>,
    closed: Cell<bool>,
    /// Someone holds the den's turn ([`Inner::exclusive`]); `waiters` are next, in call order.
    busy: Cell<bool>,
    waiters: RefCell<Vec<oneshot::Sender<()>>>,
    run_seq: Cell<u32>,
    /// The tag of the run in progress (`RunOptions::tag`), read by the element's event router.
    run_tag: Cell<u32>,
    /// A run said it started (its `run` event) and is not posted yet: a stop asked now (by a
    /// `run` listener) is carried with it.
    starting: Cell<bool>,
    /// The run in progress (or the last one) was asked to stop.
    run_stopped: Cell<bool>,
    persist: RefCell<Option<Rc<crate::store::Persist>>>,
    /// Settles when the IndexedDB transaction in flight (if any) ended: `close()` waits for it
    /// before it releases the den's name and Web Lock.
    persisting: RefCell<Option<Promise>>,
    /// What `close()` returned (a second call returns it again).
    closing: RefCell<Option<Promise>>,
    pub sink: RefCell<Option<EventSink>>,
    info: RefCell<JsValue>,
    /// An adapter den's run or reset in flight: `close()` ends it at once through this (and
    /// `stop()` a run: `adapter_running`).
    adapter_call: RefCell<Option<futures::channel::oneshot::Sender<adapter::Interrupt>>>,
    /// The adapter call in flight is a run (`stop()` ends runs, not resets).
    adapter_running: Cell<bool>,
    /// A fresh den page is being opened ([`Inner::ensure_connection`]): `close()` drops this,
    /// which ends that opening at once (its iframe is removed).
    reopening: RefCell<Option<oneshot::Sender<()>>>,
    /// File writes in the last minute (`maxWritesPerMinute`).
    rate: RefCell<WriteRate>,
    /// `foxden.fetch`: the den's network options and its requests in the last minute.
    broker: RefCell<foxden_core::net::Broker>,
}

/// A den that goes without `close()` (its `Den` object was garbage-collected, with no run or
/// operation of it left) frees its name, and an adapter's `close()` is called, as `close()`
/// does: its name was held for the life of the page. (Its iframe and its IndexedDB handle and
/// Web Lock go with their own values.)
impl Drop for Inner {
    fn drop(&mut self) {
        if self.closed.replace(true) {
            return;
        }
        if let Some(a) = &self.opts.adapter {
            a.close(&self.opts.name);
        }
        release_name(&self.opts.name);
    }
}

/// An open den. See the README for the API.
#[wasm_bindgen]
pub struct Den {
    pub(crate) inner: Rc<Inner>,
}

/// A den's claim on its name in this page: dropped unkept (an opening that failed, or whose
/// future was dropped while loading), it frees the name again.
struct NameClaim {
    name: Option<String>,
}

impl NameClaim {
    fn new(name: &str) -> Result<Self, JsValue> {
        if names::claim(name) {
            Ok(NameClaim {
                name: Some(name.to_owned()),
            })
        } else {
            Err(den_error(
                crate::errors::DenErrorCode::NameInUse,
                &format!("a den named {name:?} is already open in this page; close it first"),
            ))
        }
    }

    /// The den opened: it holds the name until `close()` frees it ([`release_name`]).
    fn keep(mut self) {
        self.name = None;
    }
}

impl Drop for NameClaim {
    fn drop(&mut self) {
        if let Some(n) = self.name.take() {
            release_name(&n);
        }
    }
}

fn release_name(name: &str) {
    names::release(name);
}

/// Opens a den (used by `openDen`, `fork` and the element). `initial`: the files it starts with
/// (a checked snapshot's, or the forked den's), replacing what its store holds.
pub async fn open(
    opts: DenOptions,
    initial: Option<FileMap>,
    progress: Progress,
    sink: Option<EventSink>,
) -> Result<Den, JsValue> {
    names::closed_before(&opts.name).await;
    let claim = NameClaim::new(&opts.name)?;
    let den = open_claimed(opts, initial, progress, sink).await?;
    claim.keep();
    Ok(den)
}

async fn open_claimed(
    opts: DenOptions,
    initial: Option<FileMap>,
    progress: Progress,
    sink: Option<EventSink>,
) -> Result<Den, JsValue> {
    // The iframe runtime puts its den page in a document; Node.js and workers have none.
    if opts.adapter.is_none() && web_sys::window().and_then(|w| w.document()).is_none() {
        return Err(crate::errors::load_error(
            crate::errors::LoadStage::Iframe,
            "the iframe runtime needs a browser page (a document for its iframe); here there \
             is none (Node.js or a worker): pass a runtime adapter as `runtime`",
        ));
    }
    // A den whose files are replaced (a snapshot, a fork) does not read the old ones: a
    // damaged store is repaired this way.
    let (persist, mut files) =
        crate::store::open(&opts.store, &opts.name, initial.is_some()).await?;
    // The starting files (a snapshot's, a fork's) are checked now, but replace what the store
    // holds only once the den opened: a den that fails to open leaves its stored files as they were.
    let initial = match initial {
        Some(restored) => {
            let ops = files.diff_to(&restored);
            let (ops, _) = files
                .check_limits(ops, &opts.write_limits())
                .map_err(|e| storage_to_js(&e))?;
            Some(ops)
        }
        None => None,
    };
    // The den's wheels: fetched and checked once, then handed to every den page and interpreter.
    // A wheel server that never answers fails the open at loadTimeoutMs, like a den page.
    let mut opts = opts;
    if !opts.packages.is_empty() && opts.runtime.packages.is_empty() {
        let deadline = opts.runtime.load_timeout_ms;
        let wheels =
            crate::callback::with_timeout(runtime::packages::load(&opts.packages), deadline)
                .await
                .ok_or_else(|| {
                    crate::errors::load_error(
                        crate::errors::LoadStage::Timeout,
                        &format!(
                            "the den's packages were not fetched within {} ms (loadTimeoutMs)",
                            foxden_core::decimal::show(deadline)
                        ),
                    )
                })??;
        opts.runtime.packages = Rc::new(wheels);
    }
    // An adapter's start(), or the den page and its interpreter.
    let opened = js::now_ms();
    // Once an adapter's start() was called, its close() is called whatever happens next.
    let mut started = None;
    let conn = match &opts.adapter {
        Some(a) => {
            started = Some(adapter::Started::new(a, &opts.name));
            a.start(&opts.name, opts.runtime.load_timeout_ms).await?;
            None
        }
        None => Some(Rc::new(runtime::start(&opts.runtime, progress).await?)),
    };
    if let Some(ops) = initial {
        // The old files were not read (see store::open): all of them go, these come.
        if let Some(p) = &persist {
            p.replace_all(&ops).await?;
        }
        files.apply_checked(ops);
    }
    let info = match &conn {
        Some(c) => info_object(c),
        None => adapter::info(js::now_ms() - opened),
    };
    let inner = Rc::new(Inner {
        rate: RefCell::new(WriteRate::new(opts.max_writes_per_minute)),
        broker: RefCell::new(foxden_core::net::Broker::new(opts.network.clone())),
        opts,
        files: RefCell::new(files),
        sync: RefCell::new(SyncState::new()),
        conn: RefCell::new(conn),
        closed: Cell::new(false),
        busy: Cell::new(false),
        waiters: RefCell::new(Vec::new()),
        run_seq: Cell::new(0),
        run_tag: Cell::new(0),
        starting: Cell::new(false),
        run_stopped: Cell::new(false),
        persist: RefCell::new(persist.map(Rc::new)),
        persisting: RefCell::new(None),
        closing: RefCell::new(None),
        sink: RefCell::new(sink),
        info: RefCell::new(info),
        adapter_call: RefCell::new(None),
        adapter_running: Cell::new(false),
        reopening: RefCell::new(None),
    });
    if let Some(s) = started {
        s.keep();
    }
    Ok(Den { inner })
}

fn info_object(conn: &Connection) -> JsValue {
    let o = obj(&[
        ("kind", "iframe".into()),
        ("isolation", conn.isolation.as_str().into()),
        ("loadMs", conn.load_ms.into()),
        ("interruptible", conn.interruptible.get().into()),
        ("warmStart", conn.warm.get().into()),
        ("stages", stages_object(&conn.stages)),
    ]);
    Object::freeze(&o).into()
}

/// `info.stages`: where the load time went (ms), frozen.
fn stages_object(st: &crate::runtime::LoadStages) -> JsValue {
    let o = obj(&[
        ("assets", st.assets_ms.into()),
        ("warm", st.warm_ms.into()),
        ("hello", st.hello_ms.into()),
        ("den", st.den_ms.into()),
        ("boot", st.boot_ms.into()),
        ("ready", st.ready_ms.into()),
    ]);
    Object::freeze(&o).into()
}

impl Inner {
    fn check_open(&self) -> Result<(), JsValue> {
        if self.closed.get() {
            Err(self.closed_error())
        } else {
            Ok(())
        }
    }

    fn closed_error(&self) -> JsValue {
        den_error(
            crate::errors::DenErrorCode::Closed,
            &format!("the den {:?} is closed", self.opts.name),
        )
    }

    fn emit(&self, event: &DenEvent) {
        let sink = self.sink.borrow().clone();
        if let Some(s) = sink {
            s(event);
        }
    }

    /// Serializes operations on the den: runs and file operations never interleave, and take
    /// their turns in call order (first come, first served: a turn that ends is handed to the
    /// next waiter, so a call made meanwhile cannot slip in before those already waiting).
    async fn exclusive(&self) -> Exclusive<'_> {
        while self.busy.get() {
            let (tx, rx) = oneshot::channel();
            self.waiters.borrow_mut().push(tx);
            let mut waiting = Waiting {
                inner: self,
                rx,
                done: false,
            };
            let handed = (&mut waiting.rx).await.is_ok();
            waiting.done = true;
            if handed {
                // The turn is ours: busy stayed set for us.
                return Exclusive { inner: self };
            }
            // Our place was dropped without the turn (cannot happen while the den lives: only
            // its queue holds the senders): wait again rather than take a turn someone holds.
        }
        self.busy.set(true);
        Exclusive { inner: self }
    }

    /// Hands the turn to the next waiter still waiting, or frees the den.
    fn pass_turn(&self) {
        loop {
            let next = {
                let mut w = self.waiters.borrow_mut();
                (!w.is_empty()).then(|| w.remove(0))
            };
            match next {
                // A waiter whose future was dropped refuses it: the one after gets it.
                Some(tx) => {
                    if tx.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    self.busy.set(false);
                    return;
                }
            }
        }
    }

    /// Commits a batch: checks it, persists it (one IndexedDB transaction), then applies it.
    async fn commit(&self, ops: Vec<Op>, source: &str) -> Result<ChangeSet, CommitError> {
        let (ops, changes) = self
            .files
            .borrow()
            .check_limits(ops, &self.opts.write_limits())?;
        // Nothing to do, or only new times of unchanged files (a restore): those are kept,
        // but are no change to report.
        if ops.is_empty() {
            return Ok(changes);
        }
        // Every file written counts, new times of unchanged files too (each is a store write).
        let writes = u32::try_from(ops.len()).unwrap_or(u32::MAX);
        // A monotonic clock: a wall clock set back would refuse writes for as long.
        self.rate.borrow_mut().check(js::now_ms(), writes)?;
        let persist = self.persist.borrow().clone();
        if let Some(p) = persist {
            let gate = Gate::new();
            *self.persisting.borrow_mut() = Some(gate.promise.clone());
            let kept = p.commit(&ops).await;
            // The transaction ended: close() may now release the Web Lock (it waits for this).
            drop(p);
            *self.persisting.borrow_mut() = None;
            drop(gate);
            kept.map_err(CommitError::Store)?;
        }
        self.rate.borrow_mut().record(js::now_ms(), writes);
        // A new time alone is not shipped by content: the worker gets the file again.
        for op in &ops {
            if let Op::Put { path, .. } = op {
                let changed = |l: &Vec<String>| l.binary_search(path).is_ok();
                if !changed(&changes.created) && !changed(&changes.changed) {
                    self.sync.borrow_mut().set(path, None);
                }
            }
        }
        self.files.borrow_mut().apply_checked(ops);
        if !changes.is_empty() {
            self.emit(&DenEvent::FileChange {
                source,
                changes: &changes,
            });
        }
        Ok(changes)
    }

    /// Numbers a run of this den and says it started (its `run` event).
    fn start_run(&self, code: &str, tag: u32) -> u32 {
        let seq = self.run_seq.get() + 1;
        self.run_seq.set(seq);
        self.run_tag.set(tag);
        self.run_stopped.set(false);
        // Until the run is posted (`posted`), a stop is kept for it.
        self.starting.set(true);
        self.emit(&DenEvent::RunStart { id: seq, code });
        seq
    }

    /// The run that started is being handed to the runtime: whether it is to be stopped at once.
    fn posted(&self) -> bool {
        self.starting.set(false);
        self.run_stopped.get()
    }

    /// Says a run ended (its `run` event) and gives its result object.
    fn end_run(&self, seq: u32, code: &str, out: &RunOutcome) -> JsValue {
        let result = outcome_js(out);
        self.emit(&DenEvent::RunEnd {
            id: seq,
            code,
            outcome: out,
            result: &result,
        });
        result
    }

    fn connection(&self) -> Option<Rc<Connection>> {
        self.conn.borrow().clone()
    }

    /// Drops the den page (its iframe is removed): the next call opens a fresh one. The worker
    /// that held the den's files goes with it.
    fn forget_den_page(&self) {
        *self.conn.borrow_mut() = None;
        self.sync.borrow_mut().reset();
    }

    /// Stops the run in flight (`stop()`, the Stop button, a run's `signal`): the den page
    /// interrupts or restarts its worker; an adapter's run ends at once, its signal aborted.
    /// `false` when no run is in flight.
    pub(crate) fn stop_run(&self) -> bool {
        let stopped = if self.starting.get() {
            true
        } else if self.opts.adapter.is_some() {
            self.adapter_running.get()
                && self
                    .adapter_call
                    .borrow_mut()
                    .take()
                    .is_some_and(|tx| tx.send(adapter::Interrupt::Stopped).is_ok())
        } else {
            self.connection().is_some_and(|conn| conn.stop_runs())
        };
        if stopped {
            self.run_stopped.set(true);
        }
        stopped
    }

    /// Opens a new den page in the background (after the host dropped one), before the next
    /// call needs it; the next call waits for it through the exclusive guard.
    fn reopen_soon(this: &Rc<Inner>) {
        let inner = this.clone();
        crate::callback::spawn_local(Box::pin(async move {
            let _guard = inner.exclusive().await;
            if !inner.closed.get() {
                let _ = inner.ensure_connection().await;
            }
        }));
    }

    async fn ensure_connection(&self) -> Result<Rc<Connection>, JsValue> {
        match self.connection() {
            Some(c) if !c.is_lost() => return Ok(c),
            // Its den page reloaded: nothing there answers.
            Some(_) => self.forget_den_page(),
            None => {}
        }
        self.check_open()?;
        // The previous den page stopped answering: start a fresh one (files are host-owned).
        // close() ends the opening at once (it drops `reopening`), not at its load timeout.
        let (tx, closed) = oneshot::channel::<()>();
        *self.reopening.borrow_mut() = Some(tx);
        let start = runtime::start(&self.opts.runtime, Rc::new(|_, _| {}));
        let started = match futures::future::select(Box::pin(start), closed).await {
            futures::future::Either::Left((conn, _)) => Some(conn),
            futures::future::Either::Right(_) => None,
        };
        self.reopening.borrow_mut().take();
        // close() may have come while the den page loaded: then it must not stay.
        self.check_open()?;
        let conn = Rc::new(started.ok_or_else(|| self.closed_error())??);
        *self.info.borrow_mut() = info_object(&conn);
        self.sync.borrow_mut().reset();
        *self.conn.borrow_mut() = Some(conn.clone());
        Ok(conn)
    }
}

/// Why a batch was not kept: refused by the den's rules, or IndexedDB failed (a `DenError`
/// with code `storage`, from the store).
enum CommitError {
    Refused(StorageError),
    Store(JsValue),
}

impl From<StorageError> for CommitError {
    fn from(e: StorageError) -> Self {
        CommitError::Refused(e)
    }
}

impl CommitError {
    fn to_js(&self) -> JsValue {
        match self {
            CommitError::Refused(e) => storage_to_js(e),
            CommitError::Store(e) => e.clone(),
        }
    }

    fn message(&self) -> String {
        match self {
            CommitError::Refused(e) => e.to_string(),
            CommitError::Store(e) => get_str(e, "message").unwrap_or_else(|| js::describe(e)),
        }
    }
}

/// A promise that settles when this value is dropped (however the holder's future ends).
struct Gate {
    promise: Promise,
    resolve: Option<Function>,
}

impl Gate {
    fn new() -> Self {
        let mut resolve: Option<Function> = None;
        let promise = Promise::new(&mut |res, _| resolve = Some(res));
        Gate { promise, resolve }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        if let Some(r) = self.resolve.take() {
            let _ = r.call0(&JsValue::UNDEFINED);
        }
    }
}

/// A run whose den was closed before its file changes were committed: they are not kept (the
/// den's lock and name may already be another's), and the run ends `DenClosed` as `close()`
/// ends a run in flight.
fn closed_before_commit(out: &mut RunOutcome, timeout_ms: f64, cap: usize) {
    if out.error.is_none() {
        out.error = Some(lost_den_error(LostDen::Closed, timeout_ms, ""));
    }
    out.note(
        "foxden: the run's file changes were not kept: the den was closed\n",
        cap,
    );
}

/// The den's turn ([`Inner::exclusive`], [`Den::turn`]): other operations wait until it is
/// dropped, which hands the turn to the next waiter in call order.
pub(crate) struct Exclusive<'a> {
    inner: &'a Inner,
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        self.inner.pass_turn();
    }
}

/// A call waiting for the den's turn. Dropped before it took the turn (its future was dropped,
/// e.g. by `close()`), it gives up its place, and a turn already handed to it goes on.
struct Waiting<'a> {
    inner: &'a Inner,
    rx: oneshot::Receiver<()>,
    /// The wait ended (the turn was taken, or the place dropped): nothing to give up.
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.rx.close();
            if let Ok(Some(())) = self.rx.try_recv() {
                self.inner.pass_turn();
            }
        }
    }
}

impl Den {
    /// The tag of the run in progress (0: none), for the element's event router
    /// (`foxden_core::lesson::RunRouter`): set before the run's first event.
    pub(crate) fn run_tag(&self) -> u32 {
        self.inner.run_tag.get()
    }

    /// The run in progress (or the last one) was asked to stop (`stop()`, the Stop button, its
    /// `signal`): its end says so.
    pub(crate) fn run_stopped(&self) -> bool {
        self.inner.run_stopped.get()
    }

    /// Someone holds the den's turn (a run, a file operation): a new call waits for it.
    pub(crate) fn turn_taken(&self) -> bool {
        self.inner.busy.get()
    }

    /// Runs `code` tagged `tag` (see [`Self::run_tag`]); `opts` as `run()` takes them.
    /// A run of the element's (`tag`: see `foxden_core::lesson::RunTag`), in a turn the caller
    /// took with [`Den::turn`].
    pub(crate) async fn run_tagged(
        &self,
        code: String,
        opts: JsValue,
        tag: u32,
    ) -> Result<JsValue, JsValue> {
        let mut ro = run_options(&opts)?;
        ro.tag = tag;
        self.run_in_turn(code, ro).await
    }

    /// Stops the run in flight (`stop()`, the element's Stop button, a run's `signal`). On a
    /// cross-origin isolated den Python gets `KeyboardInterrupt` and keeps its variables (the
    /// worker is restarted if the run goes on 1 s later); otherwise the worker is restarted: the
    /// run ends with `error.kind` "crashed", type "Stopped" and `restarted`, files kept. A run
    /// still waiting for its worker never starts (none of its code runs; variables kept); an
    /// adapter den's run ends at once (its signal aborted). `false` when no run is in flight.
    pub(crate) fn stop_impl(&self) -> bool {
        self.inner.stop_run()
    }

    /// Shares the den (for the element, which keeps its own handle).
    pub(crate) fn share(&self) -> Den {
        Den {
            inner: self.inner.clone(),
        }
    }

    pub(crate) async fn run_impl(&self, code: String, opts: JsValue) -> Result<JsValue, JsValue> {
        let ro = run_options(&opts)?;
        self.run_outcome(code, ro).await
    }

    pub(crate) async fn write_impl(&self, path: String, data: JsValue) -> Result<JsValue, JsValue> {
        let (path, bytes) = self.prepare_write(&path, &data)?;
        self.commit_write(path, bytes).await
    }

    /// The checks of a write and its copy of the bytes, at once: the caller may reuse, fill or
    /// transfer its buffer as soon as `writeFile` returns (as with `Blob` or IndexedDB's `put`).
    pub(crate) fn prepare_write(
        &self,
        path: &str,
        data: &JsValue,
    ) -> Result<(String, std::sync::Arc<[u8]>), JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        let path = normalize_file_path(path).map_err(|e| path_error(&e))?;
        if js::is_detached(data) {
            return Err(den_error(
                crate::errors::DenErrorCode::BadData,
                "writeFile data is a detached ArrayBuffer: its bytes were transferred elsewhere",
            ));
        }
        // Too big is refused before the bytes are copied (js::sized_view), then copied in once.
        let max = inner.opts.max_file_bytes;
        let (view, _) = js::sized_view(data, max).map_err(|e| match e {
            js::NotSized::TooBig(size) => storage_to_js(&StorageError::FileTooBig {
                path: path.clone(),
                size: size as u64,
                max,
            }),
            js::NotSized::Encode(e) => den_error(
                crate::errors::DenErrorCode::BadData,
                &format!(
                    "writeFile could not encode the string as UTF-8: {}",
                    js::describe(&e)
                ),
            ),
            js::NotSized::NotData => den_error(
                crate::errors::DenErrorCode::BadData,
                "writeFile data must be a string, Uint8Array, ArrayBuffer or typed array",
            ),
        })?;
        let bytes = js::shared_bytes(&view).map_err(|e| storage_to_js(&e))?;
        Ok((path, bytes))
    }

    /// Commits a write made by [`Den::prepare_write`].
    pub(crate) async fn commit_write(
        &self,
        path: String,
        bytes: std::sync::Arc<[u8]>,
    ) -> Result<JsValue, JsValue> {
        let inner = &self.inner;
        let _guard = inner.exclusive().await;
        inner.check_open()?;
        let changes = inner
            .commit(
                vec![Op::Put {
                    path,
                    entry: FileEntry::new(bytes, js::wall_ms()),
                }],
                "write",
            )
            .await
            .map_err(|e| e.to_js())?;
        Ok(changes_js(&changes))
    }

    pub(crate) async fn delete_impl(&self, path: String) -> Result<JsValue, JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        let path = normalize_file_path(&path).map_err(|e| path_error(&e))?;
        let _guard = inner.exclusive().await;
        inner.check_open()?;
        if inner.files.borrow().get(&path).is_none() {
            return Err(den_error(
                crate::errors::DenErrorCode::NotFound,
                &format!("no file at {path}"),
            ));
        }
        let changes = inner
            .commit(vec![Op::Delete { path }], "delete")
            .await
            .map_err(|e| e.to_js())?;
        Ok(changes_js(&changes))
    }

    pub(crate) fn read_impl(&self, path: String, opts: JsValue) -> Result<JsValue, JsValue> {
        self.inner.check_open()?;
        let path = normalize_file_path(&path).map_err(|e| path_error(&e))?;
        let files = self.inner.files.borrow();
        let entry = files.get(&path).ok_or_else(|| {
            den_error(
                crate::errors::DenErrorCode::NotFound,
                &format!("no file at {path}"),
            )
        })?;
        let encoding = if let Some(s) = opts.as_string() {
            Some(s)
        } else {
            js::opt_str(&opts, "encoding")?
        };
        match encoding.as_deref() {
            None => Ok(bytes_to_js(&entry.data).into()),
            Some("utf-8") | Some("utf8") | Some("text") => {
                Ok(String::from_utf8_lossy(&entry.data).into_owned().into())
            }
            Some(other) => Err(option_error(
                "encoding",
                &format!("unsupported encoding {other:?}: use \"utf-8\" or none for bytes"),
            )),
        }
    }

    /// Every file, or (`path` given) the file at `path` or the files under the folder `path`.
    pub(crate) fn list_impl(&self, path: &JsValue) -> Result<JsValue, JsValue> {
        self.inner.check_open()?;
        let folder = if js::is_absent(path) {
            None
        } else {
            let p = js::path_arg(path, "path")?;
            Some(foxden_core::paths::normalize_path(&p).map_err(|e| path_error(&e))?)
        };
        let out = Array::new();
        for (path, e) in self
            .inner
            .files
            .borrow()
            .under(folder.as_deref().unwrap_or(""))
        {
            out.push(&obj(&[
                ("path", path.as_str().into()),
                ("size", (e.data.len() as f64).into()),
                ("sha256", foxden_core::hex(&e.sha256).into()),
                ("mtime", e.mtime_ms.into()),
            ]));
        }
        Ok(out.into())
    }

    pub(crate) fn sh_impl(&self, command: String) -> Result<JsValue, JsValue> {
        self.inner.check_open()?;
        Ok(crate::shell(
            &command,
            &self.inner.files.borrow(),
            limits::DEFAULT_MAX_OUTPUT_BYTES as usize,
        ))
    }

    /// The files of an open den, shared, not copied (their data is immutable).
    pub(crate) fn files_now(&self) -> Option<FileMap> {
        self.inner.check_open().ok()?;
        Some(self.inner.files.borrow().clone())
    }

    pub(crate) fn snapshot_impl(&self) -> Result<JsValue, JsValue> {
        self.inner.check_open()?;
        let files = self.inner.files.borrow();
        Ok(crate::js::pieces_to_js(&foxden_core::snapshot::snapshot_pieces(&files))?.into())
    }

    pub(crate) async fn restore_impl(&self, data: JsValue) -> Result<JsValue, JsValue> {
        let restored = self.decode_restore(&data)?;
        self.commit_restore(restored).await
    }

    /// A restore's check of the snapshot, at once (the caller may reuse its buffer after).
    pub(crate) fn decode_restore(&self, data: &JsValue) -> Result<FileMap, JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        js::JsSnapshot::new(data)
            .ok_or_else(|| {
                snapshot_error(
                    "format",
                    "restore needs the snapshot bytes (Uint8Array or ArrayBuffer)",
                )
            })?
            .decode_over(inner.opts.max_den_bytes, &inner.files.borrow())
            .map_err(|e| snapshot_error(e.code(), &e.to_string()))
    }

    /// Replaces the files with those of a snapshot checked by [`Den::decode_restore`].
    pub(crate) async fn commit_restore(&self, restored: FileMap) -> Result<JsValue, JsValue> {
        let inner = &self.inner;
        let _guard = inner.exclusive().await;
        inner.check_open()?;
        let ops = inner.files.borrow().diff_to(&restored);
        let changes = inner.commit(ops, "restore").await.map_err(|e| e.to_js())?;
        Ok(changes_js(&changes))
    }

    pub(crate) async fn fork_impl(&self, opts: JsValue) -> Result<Den, JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        let name = js::opt_str(&opts, "name")?
            .ok_or_else(|| option_error("name", "fork needs { name }"))?;
        // The fork has the den's store, limits and options: any other key would be silently
        // ignored (a `store: memoryStore()` on an IndexedDB den would replace a stored den of
        // that name), so it is refused.
        if opts.is_object() {
            // (Reflect.ownKeys: what a Proxy's trap throws is the call's error.)
            for key in js_sys::Reflect::own_keys(&opts)?.iter() {
                let Some(key) = key.as_string() else { continue };
                // (A key left undefined sets nothing: `fork({ ...opts, name })` is fine.)
                if key != "name"
                    && !js_sys::Reflect::get(&opts, &key.as_str().into())?.is_undefined()
                {
                    return Err(option_error(
                        &key,
                        &format!("fork takes only {{ name }}: the fork keeps this den's store, limits and options ({key:?} is not one fork sets)"),
                    ));
                }
            }
        }
        let mut o = inner.opts.clone();
        o.name = name;
        limits::validate_den_name(&o.name).map_err(|e| option_error("name", &e.to_string()))?;
        // A forked idb den gets its own records (the store is keyed by den name). The files are
        // shared, not copied: their data is immutable (`Arc`), a change replaces an entry.
        // After the file operations and the run called before it (an IndexedDB write still in
        // flight would otherwise be missing from the copy, yet succeed).
        let files = {
            let _guard = inner.exclusive().await;
            inner.check_open()?;
            inner.files.borrow().clone()
        };
        open(o, Some(files), Rc::new(|_, _| {}), None).await
    }

    pub(crate) async fn reset_impl(&self) -> Result<JsValue, JsValue> {
        let inner = &self.inner;
        inner.check_open()?;
        let _guard = inner.exclusive().await;
        inner.check_open()?;
        if let Some(a) = &inner.opts.adapter {
            // close() ends the reset at once, as it ends a run.
            let r = inner
                .unless_interrupted(a.reset(&inner.opts.name, inner.opts.runtime.load_timeout_ms))
                .await
                .ok();
            // A new interpreter, as far as the den can tell (the lesson's setup runs again),
            // once the adapter's reset() was called: without one, nothing was reset.
            if a.can_reset() {
                inner.sync.borrow_mut().reset();
            }
            inner.check_open()?;
            return r.unwrap_or_else(|| Err(inner.closed_error()));
        }
        let load_ms = inner.opts.runtime.load_timeout_ms;
        let mut r = inner.ensure_connection().await?.reset(load_ms).await;
        if matches!(r, Err(runtime::ResetError::Gone)) {
            // The den page is gone (its iframe was removed or reloaded): a fresh one, reset.
            inner.forget_den_page();
            r = inner.ensure_connection().await?.reset(load_ms).await;
        }
        inner.sync.borrow_mut().reset();
        // close() during the reset ends it: say so, not that the interpreter failed.
        inner.check_open()?;
        let (from, boot_ms, packages_ms) = r.map_err(|e| {
            let why = match e {
                runtime::ResetError::Gone => "the den page is gone".to_owned(),
                runtime::ResetError::Failed(why) => why,
            };
            den_error(
                crate::errors::DenErrorCode::Reset,
                &format!("the interpreter did not restart: {why}"),
            )
        })?;
        let out = obj(&[("from", from.into()), ("bootMs", boot_ms.into())]);
        if let Some(ms) = packages_ms {
            let _ = js_sys::Reflect::set(&out, &"packagesMs".into(), &ms.into());
        }
        Ok(out.into())
    }

    /// Closes the den; the promise settles once its name and Web Lock are free (after an
    /// IndexedDB transaction in flight ended), so that it can be opened again at once.
    pub(crate) fn close_impl(&self) -> Promise {
        let inner = &self.inner;
        if inner.closed.replace(true) {
            let again = inner.closing.borrow().clone();
            return again.unwrap_or_else(|| Promise::resolve(&JsValue::UNDEFINED));
        }
        // A run in flight ends now (as "crashed", the den was closed), not at its watchdog; a
        // den page being opened in its place is dropped.
        if let Some(conn) = inner.conn.borrow_mut().take() {
            conn.cancel_pending();
        }
        inner.reopening.borrow_mut().take();
        if let Some(a) = &inner.opts.adapter {
            // A run in flight ends now, as closed; its signal tells the adapter to stop.
            if let Some(tx) = inner.adapter_call.borrow_mut().take() {
                let _ = tx.send(adapter::Interrupt::Closed);
            }
            a.close(&inner.opts.name);
        }
        *inner.sink.borrow_mut() = None;
        // Closes the IndexedDB connection and releases the den's Web Lock: a commit in flight
        // holds them until its transaction ends, and the name is freed once the lock is free.
        let persist = inner.persist.borrow_mut().take();
        let name = inner.opts.name.clone();
        let pending = inner.persisting.borrow().clone();
        let done = match (persist, pending) {
            (None, None) => {
                release_name(&name);
                Promise::resolve(&JsValue::UNDEFINED)
            }
            (persist, pending) => {
                let closing = name.clone();
                let done = js::promise(async move {
                    if let Some(p) = pending {
                        let _ = wasm_bindgen_futures::JsFuture::from(p).await;
                    }
                    // The commit's own handle went with its transaction (see commit).
                    if let Some(unlocked) = persist
                        .and_then(|p| Rc::try_unwrap(p).ok())
                        .map(crate::store::Persist::close)
                    {
                        let _ = wasm_bindgen_futures::JsFuture::from(unlocked).await;
                    }
                    release_name(&name);
                    Ok(JsValue::UNDEFINED)
                });
                closing_until(&closing, done.clone());
                done
            }
        };
        *inner.closing.borrow_mut() = Some(done.clone());
        done
    }
}
