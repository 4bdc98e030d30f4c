//! IndexedDB persistence: one object store `files`, keyed by `[den name, path]`.
//!
//! Every batch (one run's changes, one write, one restore) is written in one readwrite
//! transaction, and the in-memory map changes only after that transaction completes, so a
//! reload or crash leaves the store as it was before or after a batch, never between.
//! Hashes are computed before the transaction opens (transactions auto-commit when control
//! returns to the event loop without a pending request).

use crate::callback::Listener;
use crate::errors::den_error;
use crate::js::{self, bytes_to_js, get, get_f64, obj};
use foxden_core::files::{FileEntry, FileMap, Op};
use futures::channel::oneshot;
use js_sys::{Array, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{IdbDatabase, IdbRequest, IdbTransactionMode};

const STORE: &str = "files";

/// One den's records in one database.
pub struct IdbDen {
    db: IdbDatabase,
    den: String,
    lock: Option<crate::locks::HeldLock>,
    /// Closes the connection when another script deletes or upgrades the database (which
    /// would otherwise wait, with every later opening of it, until this den closes).
    _versionchange: Listener,
    /// The connection was closed for that reason: writes are refused with a clear error.
    closed_by_other: Rc<std::cell::Cell<bool>>,
}

impl IdbDen {
    /// Closes the database and releases the den's lock; the promise settles once the lock is
    /// free.
    pub fn close(mut self) -> js_sys::Promise {
        self.db.close();
        match self.lock.take() {
            Some(l) => l.release(),
            None => js_sys::Promise::resolve(&JsValue::UNDEFINED),
        }
    }
}

impl Drop for IdbDen {
    fn drop(&mut self) {
        self.db.close();
    }
}

fn idb_err(what: &str, e: &JsValue) -> JsValue {
    den_error(
        crate::errors::DenErrorCode::Storage,
        &format!("IndexedDB {what} failed: {}", js::describe(e)),
    )
}

/// Waits for a request's success (its result) or error, with listeners dropped afterwards.
async fn request(req: &IdbRequest) -> Result<JsValue, JsValue> {
    let (tx, rx) = oneshot::channel::<Result<(), ()>>();
    let tx = Rc::new(RefCell::new(Some(tx)));
    let t1 = tx.clone();
    let _ok = Listener::new(req.as_ref(), "success", move |_| {
        if let Some(t) = t1.borrow_mut().take() {
            let _ = t.send(Ok(()));
        }
    });
    let t2 = tx.clone();
    let _err = Listener::new(req.as_ref(), "error", move |e| {
        e.prevent_default();
        if let Some(t) = t2.borrow_mut().take() {
            let _ = t.send(Err(()));
        }
    });
    match rx.await {
        Ok(Ok(())) => req.result(),
        _ => Err(req
            .error()
            .ok()
            .flatten()
            .map(JsValue::from)
            .unwrap_or_else(|| "request failed".into())),
    }
}

/// An `indexedDB.open` request in flight. Dropped before it settles (its opening was cancelled:
/// an element removed while it loads), it is watched until it does: its upgrade still creates
/// the store (else the database would be left without it, for every later opening), and the
/// connection it opens is closed (one that nobody holds would block every later upgrade and
/// deletion of the database).
struct Opening {
    req: web_sys::IdbOpenDbRequest,
    /// Creates the store when the database is made or upgraded; `None` once settled.
    upgrade: Option<Listener>,
}

impl Opening {
    /// Opens `name` at its current version (creating it at 1), or at `version`.
    fn start(
        factory: &web_sys::IdbFactory,
        name: &str,
        version: Option<u32>,
    ) -> Result<Self, JsValue> {
        let req = match version {
            Some(v) => factory.open_with_u32(name, v),
            None => factory.open(name),
        }
        .map_err(|e| idb_err("open", &e))?;
        let upgrade = Listener::new(req.as_ref(), "upgradeneeded", {
            let r = req.clone();
            move |_| {
                if let Ok(db) = r.result() {
                    let db: IdbDatabase = db.unchecked_into();
                    if !db.object_store_names().contains(STORE) {
                        let _ = db.create_object_store(STORE);
                    }
                }
            }
        });
        Ok(Opening {
            req,
            upgrade: Some(upgrade),
        })
    }

    async fn done(mut self) -> Result<IdbDatabase, JsValue> {
        let out = request(self.req.as_ref()).await;
        self.upgrade = None;
        out.map(JsCast::unchecked_into)
            .map_err(|e| idb_err("open", &e))
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        let Some(upgrade) = self.upgrade.take() else {
            return;
        };
        let req = self.req.clone();
        // Settled already (its answer not yet taken): only its connection is left to close.
        if js::get_tag(&req, "readyState", 8).as_deref() == Some("done") {
            if let Ok(db) = req.result() {
                db.unchecked_into::<IdbDatabase>().close();
            }
            return;
        }
        crate::callback::spawn_local(Box::pin(async move {
            if let Ok(db) = request(req.as_ref()).await {
                db.unchecked_into::<IdbDatabase>().close();
            }
            drop(upgrade);
        }));
    }
}

fn key(den: &str, path: &str) -> JsValue {
    Array::of2(&den.into(), &path.into()).into()
}

impl IdbDen {
    /// Opens (creating if needed) the database and loads the den's files.
    /// `replacing`: the den's files are about to be replaced whole (a snapshot given to
    /// `openDen`, a fork, by [`IdbDen::replace_all`]): its records are not read, so that a
    /// damaged record cannot stop the den that replaces it.
    pub async fn open(
        db_name: &str,
        den: &str,
        replacing: bool,
    ) -> Result<(IdbDen, FileMap), JsValue> {
        let factory = web_sys::window()
            .ok_or_else(|| {
                den_error(
                    crate::errors::DenErrorCode::Storage,
                    "idbStore() needs a browser page with IndexedDB; here there is no page \
                     (Node.js or a worker): use memoryStore()",
                )
            })?
            .indexed_db()
            .map_err(|e| idb_err("access", &e))?
            .ok_or_else(|| {
                den_error(
                    crate::errors::DenErrorCode::Storage,
                    "IndexedDB is not available in this page",
                )
            })?;
        // One tab at a time per den: a second page gets a clear DenError instead of racing.
        let lock = crate::locks::acquire(&format!("foxden:{db_name}:{den}"), den).await?;
        let db = Opening::start(&factory, db_name, None)?.done().await?;
        let db = if db.object_store_names().contains(STORE) {
            db
        } else {
            // A database without the store: its creation was cut short (before foxden 0.1.4
            // an opening cancelled then lost its upgrade listener) or another script made it.
            // Upgraded one version up, which creates the store (and touches nothing else).
            let next = (db.version() as u32).saturating_add(1);
            db.close();
            let db = Opening::start(&factory, db_name, Some(next))?
                .done()
                .await?;
            if !db.object_store_names().contains(STORE) {
                db.close();
                return Err(idb_err(
                    "open",
                    &"the database has no object store \"files\"".into(),
                ));
            }
            db
        };
        let closed_by_other = Rc::new(std::cell::Cell::new(false));
        let versionchange = Listener::new(db.as_ref(), "versionchange", {
            let (db, flag) = (db.clone(), closed_by_other.clone());
            move |_| {
                flag.set(true);
                db.close();
            }
        });
        let me = IdbDen {
            db,
            den: den.to_owned(),
            lock: Some(lock),
            _versionchange: versionchange,
            closed_by_other,
        };
        let files = if replacing {
            FileMap::new()
        } else {
            me.load().await?
        };
        Ok((me, files))
    }

    /// Every key of this den's records.
    fn range(&self) -> Result<web_sys::IdbKeyRange, JsValue> {
        web_sys::IdbKeyRange::bound(&key(&self.den, ""), &key(&self.den, "\u{10FFFF}"))
    }

    async fn load(&self) -> Result<FileMap, JsValue> {
        let tx = self
            .db
            .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readonly)
            .map_err(|e| idb_err("read", &e))?;
        let store = tx.object_store(STORE).map_err(|e| idb_err("read", &e))?;
        let range = self.range().map_err(|e| idb_err("read", &e))?;
        // The records and their keys (both in key order), read in one transaction: a record
        // counts only under its own key, `[den, path]`, with `path` already normal. (Any
        // script of the page's origin can write this database.)
        let all = store
            .get_all_with_key(&range)
            .map_err(|e| idb_err("read", &e))?;
        let keys = store
            .get_all_keys_with_key(&range)
            .map_err(|e| idb_err("read", &e))?;
        let all = request(&all).await.map_err(|e| idb_err("read", &e))?;
        let keys = Array::from(&request(&keys).await.map_err(|e| idb_err("read", &e))?);
        let damaged = |what: &str| {
            den_error(
                crate::errors::DenErrorCode::Storage,
                &format!("IndexedDB {what}; the store is damaged (openDen with a snapshot, or a fork onto this name, replaces its files)"),
            )
        };
        let all = Array::from(&all);
        if keys.length() != all.length() {
            return Err(damaged("changed while it was read"));
        }
        // Strings are read with bounds (copied into this page's memory, which never shrinks):
        // a path is at most MAX_PATH_BYTES, a SHA-256 64 hex digits.
        let bounded = |v: &JsValue, cap: usize| {
            crate::wire::text(v, cap).and_then(|(t, cut)| (!cut).then_some(t))
        };
        let mut ops = Vec::new();
        for (i, rec) in all.iter().enumerate() {
            let path = bounded(&get(&rec, "path"), foxden_core::paths::MAX_PATH_BYTES)
                .ok_or_else(|| damaged("holds a record without a valid path"))?;
            // Exactly `[den, path]` (a longer array key also lies in the den's range).
            let key = keys.get(i as u32);
            let keyed = Array::is_array(&key)
                .then(|| Array::from(&key))
                .filter(|k| k.length() == 2)
                .and_then(|k| bounded(&k.get(1), foxden_core::paths::MAX_PATH_BYTES));
            let normal = foxden_core::paths::normalize_file_path(&path).ok();
            if keyed.as_deref() != Some(path.as_str()) || normal.as_deref() != Some(path.as_str()) {
                return Err(damaged(&format!("record {path} is not under its own path")));
            }
            let data: Uint8Array = get(&rec, "data")
                .dyn_into()
                .map_err(|_| damaged(&format!("record {path} holds no bytes")))?;
            let mtime = get_f64(&rec, "mtime")
                .filter(|t| t.is_finite())
                .ok_or_else(|| damaged(&format!("record {path} has no valid time")))?;
            let sha = bounded(&get(&rec, "sha256"), 64);
            let bytes =
                crate::js::shared_bytes(&data).map_err(|e| crate::den::storage_to_js(&e))?;
            let entry = FileEntry::new(bytes, mtime);
            // Records are checked on load too: a record whose hash does not match is refused.
            if sha.as_deref() != Some(foxden_core::hex(&entry.sha256).as_str()) {
                return Err(damaged(&format!(
                    "record {path} does not match its SHA-256"
                )));
            }
            ops.push(Op::Put { path, entry });
        }
        let mut files = FileMap::new();
        files.apply(ops, u64::MAX).map_err(|e| {
            den_error(
                crate::errors::DenErrorCode::Storage,
                &format!("IndexedDB holds an invalid den: {e}"),
            )
        })?;
        Ok(files)
    }

    /// Writes a checked batch in one transaction; resolves when it committed.
    pub async fn commit(&self, ops: &[Op]) -> Result<(), JsValue> {
        self.write(ops, false).await
    }

    /// Replaces every record of the den with `ops` (all its files): one transaction deletes
    /// them all and writes these.
    pub async fn replace_all(&self, ops: &[Op]) -> Result<(), JsValue> {
        self.write(ops, true).await
    }

    async fn write(&self, ops: &[Op], wipe: bool) -> Result<(), JsValue> {
        if self.closed_by_other.get() {
            return Err(den_error(
                crate::errors::DenErrorCode::Storage,
                "IndexedDB write refused: another script of this page's origin deleted or upgraded the database, so the den's connection to it was closed (nothing was written; close the den and open it again)",
            ));
        }
        // Build every record (and its bytes) before the transaction opens.
        let mut records = Vec::with_capacity(ops.len());
        for op in ops {
            match op {
                Op::Put { path, entry } => records.push((
                    key(&self.den, path),
                    Some(obj(&[
                        ("den", self.den.as_str().into()),
                        ("path", path.as_str().into()),
                        ("data", bytes_to_js(&entry.data).into()),
                        ("sha256", foxden_core::hex(&entry.sha256).into()),
                        ("mtime", entry.mtime_ms.into()),
                    ])),
                )),
                Op::Delete { path } => records.push((key(&self.den, path), None)),
            }
        }
        // Durability "strict": `complete` comes once the data is on disk (browsers default to
        // "relaxed" or their own choice, where a write reported as saved can be lost to a crash
        // of the system, never half-written).
        let tx: web_sys::IdbTransaction = get(&self.db, "transaction")
            .dyn_into::<js_sys::Function>()
            .and_then(|f| {
                f.call3(
                    &self.db,
                    &STORE.into(),
                    &"readwrite".into(),
                    &obj(&[("durability", "strict".into())]),
                )
            })
            .and_then(|t| t.dyn_into())
            .map_err(|e| idb_err("write", &e))?;
        let store = tx.object_store(STORE).map_err(|e| idb_err("write", &e))?;
        if wipe {
            // In the same transaction as the new records: all of it, or nothing.
            if let Err(e) = self.range().and_then(|r| store.delete(&r)) {
                let _ = tx.abort();
                return Err(idb_err("write", &e));
            }
        }
        for (k, rec) in &records {
            let r = match rec {
                Some(rec) => store.put_with_key(rec, k),
                None => store.delete(k),
            };
            if let Err(e) = r {
                let _ = tx.abort();
                return Err(idb_err("write", &e));
            }
        }
        let (sender, rx) = oneshot::channel::<Result<(), String>>();
        let sender = Rc::new(RefCell::new(Some(sender)));
        let s1 = sender.clone();
        let _done = Listener::new(tx.as_ref(), "complete", move |_| {
            if let Some(s) = s1.borrow_mut().take() {
                let _ = s.send(Ok(()));
            }
        });
        let s2 = sender.clone();
        let t2 = tx.clone();
        let _abort = Listener::new(tx.as_ref(), "abort", move |_| {
            if let Some(s) = s2.borrow_mut().take() {
                let why = t2
                    .error()
                    .map(|e| e.message())
                    .unwrap_or_else(|| "aborted".into());
                let _ = s.send(Err(why));
            }
        });
        match rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(den_error(
                crate::errors::DenErrorCode::Storage,
                &format!("IndexedDB transaction aborted: {why}; nothing was changed"),
            )),
            Err(_) => Err(den_error(
                crate::errors::DenErrorCode::Storage,
                "IndexedDB transaction vanished",
            )),
        }
    }
}
