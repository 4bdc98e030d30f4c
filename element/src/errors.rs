//! The four error classes of the API, created as real JS `Error` subclasses.

use crate::js::obj;
use foxden_core::PathError as CorePathError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/errors.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeError)]
    fn make_error(kind: &str, message: &str, fields: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = errorClasses)]
    pub fn error_classes() -> JsValue;
}

/// `PathError` with `path` and `rule`.
pub fn path_error(e: &CorePathError) -> JsValue {
    make_error(
        "PathError",
        &e.to_string(),
        &obj(&[
            ("path", e.path.as_str().into()),
            ("rule", e.rule.code().into()),
        ])
        .into(),
    )
}

/// `SnapshotError` with a stable `code`.
pub fn snapshot_error(code: &str, message: &str) -> JsValue {
    make_error(
        "SnapshotError",
        message,
        &obj(&[("code", code.into())]).into(),
    )
}

/// `DenError` with a stable `code` (and optional extra fields).
pub fn den_error(code: &str, message: &str) -> JsValue {
    make_error("DenError", message, &obj(&[("code", code.into())]).into())
}

/// `DenError` naming an option or attribute.
pub fn option_error(option: &str, message: &str) -> JsValue {
    make_error(
        "DenError",
        message,
        &obj(&[("code", "bad-option".into()), ("option", option.into())]).into(),
    )
}

/// `DenLoadError` with the `stage` that failed.
pub fn load_error(stage: &str, message: &str) -> JsValue {
    make_error(
        "DenLoadError",
        message,
        &obj(&[("stage", stage.into())]).into(),
    )
}
