//! Where a den's files live between page loads: memory (default) or IndexedDB.

use crate::errors::option_error;
use crate::js::{is_absent, obj, opt_str};
use foxden_core::files::{FileMap, Op};
use wasm_bindgen::prelude::*;

/// Which store a den uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// Files live in this page's memory only.
    Memory,
    /// Files live in the IndexedDB database of this name (one record set per den name).
    Idb(String),
}

/// Default IndexedDB database name.
pub const DEFAULT_DB: &str = "foxden";

impl StoreSpec {
    pub fn from_js(v: &JsValue) -> Result<Self, JsValue> {
        if is_absent(v) {
            return Ok(StoreSpec::Memory);
        }
        match opt_str(v, "kind")?.as_deref() {
            Some("memory") => Ok(StoreSpec::Memory),
            Some("idb") => Ok(StoreSpec::Idb(
                opt_str(v, "dbName")?.unwrap_or_else(|| DEFAULT_DB.into()),
            )),
            _ => Err(option_error(
                "store",
                "store must come from memoryStore() or idbStore()",
            )),
        }
    }

    pub fn to_js(&self) -> JsValue {
        let o = match self {
            StoreSpec::Memory => obj(&[("kind", "memory".into())]),
            StoreSpec::Idb(db) => obj(&[("kind", "idb".into()), ("dbName", db.as_str().into())]),
        };
        js_sys::Object::freeze(&o).into()
    }
}

/// Write-through persistence of a den's files.
pub enum Persist {
    Idb(crate::idb::IdbDen),
}

impl Persist {
    /// Persists one checked batch in one transaction.
    pub async fn commit(&self, ops: &[Op]) -> Result<(), JsValue> {
        match self {
            Persist::Idb(db) => db.commit(ops).await,
        }
    }

    /// Replaces all of the den's stored files with `ops` (every file), in one transaction.
    pub async fn replace_all(&self, ops: &[Op]) -> Result<(), JsValue> {
        match self {
            Persist::Idb(db) => db.replace_all(ops).await,
        }
    }

    /// Ends the persistence; the promise settles once the den's lock is free.
    pub fn close(self) -> js_sys::Promise {
        match self {
            Persist::Idb(db) => db.close(),
        }
    }
}

/// Opens the store of a den and loads its files (none when `replacing`: they are about to be
/// replaced whole, by the first commit).
pub async fn open(
    spec: &StoreSpec,
    den: &str,
    replacing: bool,
) -> Result<(Option<Persist>, FileMap), JsValue> {
    match spec {
        StoreSpec::Memory => Ok((None, FileMap::new())),
        StoreSpec::Idb(db) => {
            let (idb, files) = crate::idb::IdbDen::open(db, den, replacing).await?;
            Ok((Some(Persist::Idb(idb)), files))
        }
    }
}
