//! The den's Python packages, host side: reads `openDen({ packages })` and the `packages`
//! attribute, fetches each wheel itself (the sandbox can fetch nothing), checks its SHA-256
//! against the pin, and keeps the bytes for every (re)boot. The checks that need no browser are
//! in `foxden_core::packages`; the worker checks the wheels' contents (`den-page/wheels.py`).

use crate::errors::{option_error, package_error};
use crate::js::{self, get_str, is_absent};
use foxden_core::packages::{self as core, PackageError, PinnedUrl, WheelName};
use js_sys::{Array, Uint8Array};
use std::cell::Cell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A wheel as given, checked (file name, tags, pin format), not yet fetched.
#[derive(Clone)]
pub enum PackageSource {
    /// `{ url, sha256 }` or `url#sha256=…`: fetched by the host (URL resolved against the page).
    Url(PinnedUrl),
    /// `{ name, bytes, sha256 }`: the caller's bytes (copied when read).
    Bytes {
        /// The file name, parsed.
        wheel: WheelName,
        /// The pin.
        sha256: [u8; 32],
        /// A copy of the bytes.
        bytes: Uint8Array,
    },
}

impl PackageSource {
    fn wheel(&self) -> &WheelName {
        match self {
            PackageSource::Url(p) => &p.wheel,
            PackageSource::Bytes { wheel, .. } => wheel,
        }
    }
}

/// A wheel the host fetched and checked against its pin; handed to every interpreter.
#[derive(Clone)]
pub struct Wheel {
    /// The file name.
    pub file: String,
    /// The bytes (the host's own copy; the den page gets copies).
    pub data: Uint8Array,
}

/// A pinned URL, resolved against the page.
fn resolve(p: PinnedUrl) -> Result<PinnedUrl, PackageError> {
    let url = super::resolve_url(&p.url).map_err(|why| PackageError {
        package: p.wheel.name.clone(),
        message: format!("{:?} is not a valid URL: {why}", p.url),
    })?;
    Ok(PinnedUrl { url, ..p })
}

/// Reads `openDen`'s `packages` (absent: none). Shapes are `DenError` "bad-option"; a wheel
/// refused by name, tags or pin format is `DenLoadError` stage "package" naming it.
pub fn from_js(v: &JsValue) -> Result<Vec<PackageSource>, JsValue> {
    if is_absent(v) {
        return Ok(Vec::new());
    }
    let bad = || {
        option_error(
            "packages",
            "packages must be a list of { url, sha256 }, { name, bytes, sha256 } or \"url#sha256=<hex>\"",
        )
    };
    let list: Array = v.clone().dyn_into().map_err(|_| bad())?;
    // Read through Reflect: a Proxy's trap that throws is the call's error (Array's own
    // length() and iter() would let it unwind through the wasm module).
    let length = js::opt(&list, "length")?.as_f64().unwrap_or(0.0);
    if length > core::MAX_PACKAGES as f64 {
        return Err(option_error(
            "packages",
            &format!(
                "a den takes at most {} wheels; {} were given",
                core::MAX_PACKAGES,
                foxden_core::decimal::show(length)
            ),
        ));
    }
    let mut out = Vec::new();
    // The caller's own bytes so far: each wheel's size is added before it is copied, so that
    // 64 wheels of 64 MiB are refused at the wheel that passes the budget, not after 4 GiB of
    // copies.
    let mut given = 0u64;
    for i in 0..length as u32 {
        let item = js_sys::Reflect::get_u32(&list, i)?;
        if let Some(s) = item.as_string() {
            for p in core::parse_attribute(&s).map_err(|e| package_error(&e))? {
                out.push(PackageSource::Url(
                    resolve(p).map_err(|e| package_error(&e))?,
                ));
            }
            continue;
        }
        if !item.is_object() {
            return Err(bad());
        }
        let sha = js::opt_str(&item, "sha256")?.ok_or_else(bad)?;
        if let Some(url) = js::opt_str(&item, "url")? {
            let p = core::pinned_url(&url, &sha).and_then(resolve);
            out.push(PackageSource::Url(p.map_err(|e| package_error(&e))?));
            continue;
        }
        let name = js::opt_str(&item, "name")?.ok_or_else(bad)?;
        let wheel = core::parse_wheel_name(&name).map_err(|e| package_error(&e))?;
        wheel.check_tags().map_err(|e| package_error(&e))?;
        let sha256 = core::parse_sha256(&wheel.name, &sha).map_err(|e| package_error(&e))?;
        let raw = js::opt(&item, "bytes")?;
        // The size as JavaScript has it, checked before the copy.
        let mut check_size = || {
            given = core::add_bytes(given, &wheel, js::byte_len(&raw) as u64)
                .map_err(|e| package_error(&e))?;
            Ok::<_, JsValue>(())
        };
        let bytes = if let Some(u) = raw.dyn_ref::<Uint8Array>() {
            check_size()?;
            u.slice(0, u.length())
        } else if let Some(b) = raw.dyn_ref::<js_sys::ArrayBuffer>() {
            check_size()?;
            Uint8Array::new(&b.slice(0))
        } else {
            return Err(option_error(
                "packages",
                &format!("{name}: bytes must be a Uint8Array or an ArrayBuffer"),
            ));
        };
        out.push(PackageSource::Bytes {
            wheel,
            sha256,
            bytes,
        });
    }
    check(&out)?;
    Ok(out)
}

/// Reads the `packages` attribute (URLs resolved against the page).
pub fn from_attribute(value: &str) -> Result<Vec<PackageSource>, PackageError> {
    let mut out = Vec::new();
    for p in core::parse_attribute(value)? {
        out.push(PackageSource::Url(resolve(p)?));
    }
    let wheels: Vec<&WheelName> = out.iter().map(PackageSource::wheel).collect();
    core::check_set(&wheels)?;
    Ok(out)
}

fn check(list: &[PackageSource]) -> Result<(), JsValue> {
    let wheels: Vec<&WheelName> = list.iter().map(PackageSource::wheel).collect();
    core::check_set(&wheels).map_err(|e| package_error(&e))
}

/// Fetches (in parallel) and checks every wheel against its pin and the size limits. Rejects
/// with `DenLoadError` stage "package" naming the first wheel that failed; that ends the other
/// downloads (each is aborted when its future is dropped). The downloads count against the
/// den's budget for wheels together, as their bytes come (with the caller's own bytes), so the
/// page never holds much more than that budget in wheels, however many there are.
pub async fn load(list: &[PackageSource]) -> Result<Vec<Wheel>, JsValue> {
    let held = Cell::new(
        list.iter()
            .map(|p| match p {
                PackageSource::Bytes { bytes, .. } => u64::from(bytes.length()),
                PackageSource::Url(_) => 0,
            })
            .sum::<u64>(),
    );
    let fetched = try_join_all(list.iter().map(|p| fetch_checked(p, &held)).collect()).await?;
    let mut total = 0u64;
    let mut out = Vec::with_capacity(list.len());
    for (p, data) in list.iter().zip(fetched) {
        let wheel = p.wheel();
        total = core::add_bytes(total, wheel, js::byte_len(&data) as u64)
            .map_err(|e| package_error(&e))?;
        out.push(Wheel {
            file: wheel.file.clone(),
            data,
        });
    }
    Ok(out)
}

/// The wheels' downloads, joined (as `futures::future::try_join_all` without its code for
/// more than 30 futures): each time the task is woken, every download not done yet is polled,
/// in the list's order; the first to fail ends the wait at once, whatever the list's length
/// (the others are dropped with it: their fetches aborted).
async fn try_join_all<F>(futs: Vec<F>) -> Result<Vec<Uint8Array>, JsValue>
where
    F: std::future::Future<Output = Result<Uint8Array, JsValue>>,
{
    use std::task::Poll;
    let mut futs: Vec<_> = futs.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut slots: Vec<Option<Uint8Array>> = futs.iter().map(|_| None).collect();
    let failed = std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futs.iter_mut().zip(slots.iter_mut()) {
            let Some(fut) = f else { continue };
            match fut.as_mut().poll(cx) {
                Poll::Ready(Ok(bytes)) => {
                    *f = None;
                    *slot = Some(bytes);
                }
                Poll::Ready(Err(e)) => {
                    *f = None;
                    return Poll::Ready(Some(e));
                }
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(None)
        }
    })
    .await;
    drop(futs);
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(slots.into_iter().flatten().collect())
}

/// One wheel's bytes (fetched, or the caller's), checked against its pin. `held`: the bytes
/// of every wheel of the den held so far.
async fn fetch_checked(p: &PackageSource, held: &Cell<u64>) -> Result<Uint8Array, JsValue> {
    let (wheel, pin, data) = match p {
        PackageSource::Bytes {
            wheel,
            sha256,
            bytes,
        } => (wheel, sha256, bytes.clone()),
        // Each wheel is cut off at the den's whole budget for wheels; all of them together too.
        PackageSource::Url(u) => {
            let over = Cell::new(false);
            let take = |n: u32| {
                let sum = held.get().saturating_add(u64::from(n));
                held.set(sum);
                over.set(sum > core::MAX_PACKAGES_BYTES);
                if over.get() {
                    return Err(JsValue::UNDEFINED);
                }
                Ok(())
            };
            let buf = super::fetch_bytes_capped(&u.url, core::MAX_PACKAGES_BYTES, &take)
                .await
                .map_err(|e| {
                    if over.get() {
                        return package_error(&core::past_budget(&u.wheel));
                    }
                    package_error(&PackageError {
                        package: u.wheel.name.clone(),
                        message: format!(
                            "{} could not be fetched: {}",
                            u.wheel.file,
                            get_str(&e, "message").unwrap_or_else(|| js::describe(&e))
                        ),
                    })
                })?;
            (&u.wheel, &u.sha256, Uint8Array::new(&buf))
        }
    };
    let digest = super::warm::sha256(&data).await;
    core::check_sha256(wheel, &digest, pin).map_err(|e| package_error(&e))?;
    Ok(data)
}

/// The `packages` list of a boot message: `[{ file, data }]` (copied by postMessage).
pub fn to_js(wheels: &[Wheel]) -> Array {
    wheels
        .iter()
        .map(|w| -> JsValue {
            crate::js::obj(&[
                ("file", w.file.as_str().into()),
                ("data", w.data.clone().into()),
            ])
            .into()
        })
        .collect()
}
