//! The four error classes of the API, created as real JS `Error` subclasses.

use crate::js::obj;
pub use foxden_core::codes::{DenErrorCode, LoadStage};
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
pub fn den_error(code: DenErrorCode, message: &str) -> JsValue {
    make_error(
        "DenError",
        message,
        &obj(&[("code", code.as_str().into())]).into(),
    )
}

/// `DenError` naming an option or attribute.
pub fn option_error(option: &str, message: &str) -> JsValue {
    make_error(
        "DenError",
        message,
        &obj(&[
            ("code", DenErrorCode::BadOption.as_str().into()),
            ("option", option.into()),
        ])
        .into(),
    )
}

/// `DenLoadError` with stage `package` and the `package` at fault.
pub fn package_error(e: &foxden_core::packages::PackageError) -> JsValue {
    load_error_for_package(&e.package, &e.to_string())
}

/// `DenLoadError` with stage `package`, naming `package`.
pub fn load_error_for_package(package: &str, message: &str) -> JsValue {
    make_error(
        "DenLoadError",
        message,
        &obj(&[
            ("stage", LoadStage::Package.as_str().into()),
            ("package", package.into()),
        ])
        .into(),
    )
}

/// `DenLoadError` with the `stage` that failed.
pub fn load_error(stage: LoadStage, message: &str) -> JsValue {
    make_error(
        "DenLoadError",
        message,
        &obj(&[("stage", stage.as_str().into())]).into(),
    )
}
