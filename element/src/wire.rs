//! Reading what a den page sends, field by field, into `foxden_core::protocol` types.
//!
//! Everything here treats the message as hostile: types are checked before use, list lengths
//! and byte counts are bounded before anything is read or copied, and long strings are sliced
//! in JS before they cross into wasm memory. (Messages arrive through structured clone, so they
//! are plain data: no getters or proxies survive the trip; sparse arrays and huge values do.)

use crate::js::{get, is_absent};
use foxden_core::net::{Request, MAX_HEADERS, MAX_HEADER_BYTES, MAX_URL_BYTES};
use foxden_core::outcome::{display_mime, Display, DisplayData, MAX_DISPLAY_ITEMS};
use foxden_core::paths::normalize_file_path;
use foxden_core::protocol::{
    clip, run_id, ChangedFile, Done, ErrorKind, ReplyError, ReplyLimits, RunError, Stream,
    MAX_ERROR_TYPE_BYTES, MAX_OUT_PARTS,
};
use js_sys::{Array, JsString, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

/// A string field, at most `cap` UTF-8 bytes: (text, was cut). `None` if not a string.
pub fn text(v: &JsValue, cap: usize) -> Option<(String, bool)> {
    let s = v.dyn_ref::<JsString>()?;
    let units = s.length() as usize;
    // Every UTF-16 unit is at least one UTF-8 byte: slicing to `cap` units first bounds the copy.
    let (mut out, sliced) = if units > cap {
        (String::from(s.slice(0, cap as u32)), true)
    } else {
        (String::from(s), false)
    };
    let cut = clip(&mut out, cap);
    Some((out, sliced || cut))
}

/// [`text`] of a field's value, or an error naming the field; the flag says it was cut.
fn field_text(v: &JsValue, field: &'static str, cap: usize) -> Result<(String, bool), ReplyError> {
    text(v, cap).ok_or(ReplyError::Field {
        field,
        expected: "text",
    })
}

fn flag(msg: &JsValue, key: &'static str, field: &'static str) -> Result<bool, ReplyError> {
    let v = get(msg, key);
    if is_absent(&v) {
        return Ok(false);
    }
    v.as_bool().ok_or(ReplyError::Field {
        field,
        expected: "true or false",
    })
}

fn list(msg: &JsValue, key: &'static str, field: &'static str) -> Result<Array, ReplyError> {
    let v = get(msg, key);
    if is_absent(&v) {
        return Ok(Array::new());
    }
    if !Array::is_array(&v) {
        return Err(ReplyError::Field {
            field,
            expected: "a list",
        });
    }
    Ok(v.unchecked_into())
}

/// Reads a run's `error` (`null` or `{kind, type, message, traceback}`); the flag is true when
/// its message or traceback was cut at `cap`.
pub(crate) fn error(v: &JsValue, cap: usize) -> Result<(Option<RunError>, bool), ReplyError> {
    if is_absent(v) {
        return Ok((None, false));
    }
    let bad = ReplyError::Field {
        field: "error",
        expected: "null or {kind, type, message, traceback}",
    };
    if !v.is_object() {
        return Err(bad);
    }
    let kind = crate::js::get_tag(v, "kind", 16)
        .and_then(|k| ErrorKind::parse(&k))
        .ok_or(ReplyError::Field {
            field: "error.kind",
            expected: "python, javascript, timeout, crashed or storage",
        })?;
    let (ty, _) = field_text(&get(v, "type"), "error.type", MAX_ERROR_TYPE_BYTES)?;
    let (message, cut) = field_text(&get(v, "message"), "error.message", cap)?;
    // Optional, so read strictly: a getter that throws must not pass for "no traceback" (the
    // other fields are required, and a throw there reads as missing, which is refused).
    let traceback =
        js_sys::Reflect::get(v, &crate::js::key("traceback")).map_err(|_| ReplyError::Field {
            field: "error.traceback",
            expected: "text",
        })?;
    let (traceback, cut_tb) = if is_absent(&traceback) {
        (String::new(), false)
    } else {
        field_text(&traceback, "error.traceback", cap)?
    };
    Ok((
        Some(RunError {
            kind,
            ty,
            message,
            traceback,
        }),
        cut || cut_tb,
    ))
}

/// Reads a `done` message. Lists are bounded before they are walked, every file's size is
/// counted before any byte is copied, and texts are clipped to the limits.
pub fn done(msg: &JsValue, id: u32, limits: &ReplyLimits) -> Result<Done, ReplyError> {
    let result_v = get(msg, "result");
    let mut truncated = flag(msg, "truncated", "truncated")?;
    let result = if is_absent(&result_v) {
        None
    } else {
        let (s, cut) = text(&result_v, limits.max_text_bytes).ok_or(ReplyError::Field {
            field: "result",
            expected: "text or null",
        })?;
        truncated |= cut;
        Some(s)
    };
    let (error, cut) = error(&get(msg, "error"), limits.max_text_bytes)?;
    truncated |= cut;
    let changed = list(msg, "changed", "changed")?;
    let deleted = list(msg, "deleted", "deleted")?;
    limits.check_counts(changed.length(), deleted.length())?;
    // First pass: types and sizes only. Past the byte cap nothing is copied (over_cap).
    // (path, data, whether its content is copied)
    let mut files: Vec<(JsString, Uint8Array, bool)> =
        Vec::with_capacity(changed.length() as usize);
    let mut total = 0u64;
    let mut over_cap = None;
    let mut too_big = None;
    let mut units = 0u64;
    for f in changed.iter() {
        if !f.is_object() {
            return Err(ReplyError::Field {
                field: "changed[]",
                expected: "{path, data}",
            });
        }
        let path: JsString = get(&f, "path").dyn_into().map_err(|_| ReplyError::Field {
            field: "changed[].path",
            expected: "a path string",
        })?;
        limits.check_path_len("changed[].path", path.length(), &mut units)?;
        let data: Uint8Array = get(&f, "data").dyn_into().map_err(|_| ReplyError::Field {
            field: "changed[].data",
            expected: "a Uint8Array",
        })?;
        // byteLength as a double: `byte_length()` is a u32 and would wrap at 4 GiB. (A file of
        // 4 GiB or more within a larger cap is refused by the copy below, `shared_bytes`, as
        // wasm cannot hold it.)
        let len = crate::js::get_f64(&data, "byteLength").unwrap_or(0.0);
        // A file over maxFileBytes refuses the run's changes, before anything is copied,
        // unless it would not be kept anyway (a path that breaks a rule, or a read-only one:
        // noted by the sync, which needs no content for that).
        let mut copy = true;
        if len > limits.max_file_bytes as f64 {
            copy = false;
            let raw = String::from(&path);
            let kept = normalize_file_path(&raw)
                .ok()
                .filter(|p| !limits.read_only.guards_file(p));
            if let (Some(p), None) = (kept, &too_big) {
                too_big = Some((p, len as u64));
            }
        }
        // Only what is copied counts against the reply's bytes.
        if copy {
            if let Err(ReplyError::TooManyBytes { bytes, .. }) =
                limits.add_bytes(&mut total, len as u64)
            {
                over_cap = Some(bytes);
            }
        }
        files.push((path, data, copy));
    }
    let mut gone = Vec::with_capacity(deleted.length() as usize);
    for p in deleted.iter() {
        let p: JsString = p.dyn_into().map_err(|_| ReplyError::Field {
            field: "deleted[]",
            expected: "a path string",
        })?;
        limits.check_path_len("deleted[]", p.length(), &mut units)?;
        gone.push(String::from(p));
    }
    // Second pass: copy (under the cap), stopping at the first file the page's memory cannot
    // take: then the reply is `no_room` and none of it is kept.
    let copied: Option<Vec<_>> = match (&over_cap, &too_big) {
        (None, None) => files
            .iter()
            .map(|(_, data, copy)| match copy {
                true => crate::js::shared_bytes(data).ok().map(Some),
                false => Some(None),
            })
            .collect(),
        _ => None,
    };
    let no_room = (over_cap.is_none() && too_big.is_none() && copied.is_none()).then_some(total);
    let mut data = copied.into_iter().flatten();
    let changed = files
        .into_iter()
        .map(|(path, _, _)| ChangedFile {
            path: String::from(path),
            data: data.next().flatten(),
        })
        .collect();
    let too_many_files = get(msg, "tooManyFiles")
        .as_f64()
        .filter(|n| *n >= 0.0 && *n <= 9_007_199_254_740_991.0 && n.fract() == 0.0)
        .ok_or(ReplyError::Field {
            field: "tooManyFiles",
            expected: "a whole number",
        })?;
    let duration_ms = get(msg, "durationMs")
        .as_f64()
        .filter(|d| d.is_finite() && *d >= 0.0)
        .unwrap_or(0.0);
    Ok(Done {
        id,
        result,
        error,
        truncated,
        changed,
        deleted: gone,
        restarted: flag(msg, "restarted", "restarted")?,
        duration_ms,
        over_cap,
        too_big,
        no_room,
        too_many_files: (too_many_files > 0.0).then_some(too_many_files as u64),
    })
}

/// Reads an `out` message's parts (stream and text, in print order), cut to `room` bytes in
/// all: (parts, cut). `None`, and nothing kept, if it has more than [`MAX_OUT_PARTS`] parts or
/// a malformed one before the cap; parts past the cap are not read (the output ends there).
pub fn out(msg: &JsValue, room: usize) -> Option<(Vec<(Stream, String)>, bool)> {
    let list = get(msg, "parts").dyn_into::<Array>().ok()?;
    let n = list.length() as usize;
    if n == 0 || n > MAX_OUT_PARTS {
        return None;
    }
    let mut parts = Vec::with_capacity(n);
    let mut left = room;
    for i in 0..n {
        if left == 0 {
            return Some((parts, true));
        }
        let part = list.get(i as u32);
        let stream = crate::js::get_tag(&part, "stream", 8).and_then(|s| Stream::parse(&s))?;
        let (text, cut) = text(&get(&part, "text"), left)?;
        left -= text.len();
        parts.push((stream, text));
        if cut {
            return Some((parts, true));
        }
    }
    Some((parts, false))
}

/// A `display` message's bundle, within `room` bytes in all: `None` if it is malformed, has an
/// unknown MIME type, too many items, or does not fit (a display is kept whole or not at all).
pub fn display(msg: &JsValue, room: usize) -> Option<Display> {
    let list = get(msg, "bundle").dyn_into::<Array>().ok()?;
    if list.length() == 0 || list.length() as usize > MAX_DISPLAY_ITEMS {
        return None;
    }
    let mut used = 0usize;
    let mut out = Display::new();
    for item in list.iter() {
        let mime = crate::js::get_tag(&item, "mime", 64)?;
        let binary = display_mime(&mime)?;
        let data = if binary {
            let b = get(&item, "bytes").dyn_into::<Uint8Array>().ok()?;
            if crate::js::byte_len(&b) > room.saturating_sub(used) as f64 {
                return None;
            }
            DisplayData::Bytes(b.to_vec())
        } else {
            let (s, cut) = text(&get(&item, "text"), room.saturating_sub(used))?;
            if cut {
                return None;
            }
            DisplayData::Text(s)
        };
        used += data.len();
        out.push((mime, data));
    }
    Some(out)
}

/// Reads a `fetch` message: (request number, the request, the body). The url, method and
/// headers are sliced before they are copied (a text over its cap stays over it, so the broker
/// refuses it); the body stays in JS (only its length is read). `None` when the request number
/// is not a whole number: such a message cannot be answered. Fields of the wrong type become a
/// request the broker refuses (`bad-url`, `method`, `bad-request`).
pub fn fetch_request(msg: &JsValue) -> Option<(u32, Request, Option<Uint8Array>)> {
    let req = get(msg, "req").as_f64().and_then(run_id)?;
    let url = text(&get(msg, "url"), MAX_URL_BYTES + 1).map_or_else(String::new, |(s, _)| s);
    let method = text(&get(msg, "method"), 16).map_or_else(String::new, |(s, _)| s);
    let mut headers = Vec::new();
    let mut malformed = false;
    match get(msg, "headers").dyn_into::<Array>() {
        Ok(list) => {
            // One more than the cap is enough for the broker to refuse.
            for h in list.iter().take(MAX_HEADERS + 1) {
                let n = text(&get(&h, "name"), MAX_HEADER_BYTES + 1);
                let v = text(&get(&h, "value"), MAX_HEADER_BYTES + 1);
                match (n, v) {
                    (Some((n, _)), Some((v, _))) => headers.push((n, v)),
                    _ => malformed = true,
                }
            }
        }
        Err(v) => malformed = !is_absent(&v),
    }
    if malformed {
        // A header the broker refuses by name: the request ends as `bad-request`.
        headers.push((String::from("malformed header"), String::new()));
    }
    let body_v = get(msg, "body");
    let (body, body_len) = match body_v.dyn_into::<Uint8Array>() {
        Ok(b) => {
            // A saturating cast: past usize::MAX is over every cap.
            let len = crate::js::byte_len(&b) as usize;
            (Some(b), len)
        }
        // Anything else than bytes or null: over every cap, so refused as `bad-request`.
        Err(v) if !is_absent(&v) => (None, usize::MAX),
        Err(_) => (None, 0),
    };
    Some((
        req,
        Request {
            url,
            method,
            headers,
            body_len,
        },
        body,
    ))
}
