//! wasm-bindgen tests of the Rust glue, run in real browsers:
//! `wasm-pack test --headless --chrome element` and `--firefox` (part of `cargo xtask test`).
#![cfg(target_arch = "wasm32")]
// A test that cannot unwrap has failed: panicking with the value is what it should do.
#![allow(clippy::unwrap_used)]

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn field(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &k.into()).unwrap()
}

#[wasm_bindgen_test]
fn path_errors_are_path_error_instances() {
    let err = foxden::normalize_path("/drop/../x".into()).unwrap_err();
    let classes = foxden::error_classes();
    let class: js_sys::Function = field(&classes, "PathError").into();
    assert!(err.is_instance_of::<js_sys::Error>());
    assert!(Reflect::get(&err, &"constructor".into()).unwrap() == JsValue::from(class));
    assert_eq!(field(&err, "name"), JsValue::from_str("PathError"));
    assert_eq!(field(&err, "rule"), JsValue::from_str("dotdot"));
    assert_eq!(field(&err, "path"), JsValue::from_str("/drop/../x"));
    assert_eq!(
        foxden::normalize_path("//work/./a/".into()).unwrap(),
        "/work/a"
    );
}

#[wasm_bindgen_test]
fn snapshot_round_trip_through_js_values() {
    let files = js_sys::Object::new();
    Reflect::set(&files, &"/drop/a.txt".into(), &"alpha".into()).unwrap();
    let bin = Uint8Array::from(&[0u8, 255, 7][..]);
    Reflect::set(&files, &"/work/b.bin".into(), &bin).unwrap();
    let snap = foxden::encode_snapshot(files.into()).unwrap();
    let back = foxden::decode_snapshot(snap.clone().into(), JsValue::UNDEFINED).unwrap();
    let a: Uint8Array = field(&back, "/drop/a.txt").into();
    assert_eq!(a.to_vec(), b"alpha");
    let b: Uint8Array = field(&back, "/work/b.bin").into();
    assert_eq!(b.to_vec(), vec![0, 255, 7]);
    // One flipped byte: SnapshotError with a code, nothing returned.
    let bad = snap.slice(0, snap.length());
    bad.set_index(700, bad.get_index(700) ^ 1);
    let err = foxden::decode_snapshot(bad.into(), JsValue::UNDEFINED).unwrap_err();
    assert_eq!(field(&err, "name"), JsValue::from_str("SnapshotError"));
    assert!(field(&err, "code").as_string().is_some());
}

#[wasm_bindgen_test]
fn run_shell_over_plain_files() {
    let files = js_sys::Object::new();
    Reflect::set(
        &files,
        &"/drop/sales.csv".into(),
        &"region,amount\nnorth,10\nsouth,20\n".into(),
    )
    .unwrap();
    let out = foxden::run_shell(
        "grep north /drop/sales.csv".into(),
        files.into(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    assert_eq!(field(&out, "stdout"), JsValue::from_str("north,10\n"));
    assert_eq!(field(&out, "code"), JsValue::from_f64(0.0));
}

#[wasm_bindgen_test]
fn pure_helpers_check_their_options_like_the_den_does() {
    let opts = |k: &str, v: JsValue| {
        let o = js_sys::Object::new();
        Reflect::set(&o, &k.into(), &v).unwrap();
        JsValue::from(o)
    };
    let snap = foxden::encode_snapshot(js_sys::Object::new().into()).unwrap();
    for bad in [
        JsValue::from_str("big"),
        JsValue::from_f64(-1.0),
        JsValue::from_f64(f64::NAN),
    ] {
        let err = foxden::decode_snapshot(snap.clone().into(), opts("maxDenBytes", bad.clone()))
            .unwrap_err();
        assert_eq!(field(&err, "code"), JsValue::from_str("bad-option"));
        assert_eq!(field(&err, "option"), JsValue::from_str("maxDenBytes"));
        let err = foxden::run_shell(
            "echo".into(),
            JsValue::UNDEFINED,
            opts("maxOutputBytes", bad.clone()),
        )
        .unwrap_err();
        assert_eq!(field(&err, "option"), JsValue::from_str("maxOutputBytes"));
    }
    let ok = foxden::run_shell(
        "echo hello".into(),
        JsValue::UNDEFINED,
        opts("maxOutputBytes", JsValue::from_f64(3.0)),
    )
    .unwrap();
    assert_eq!(field(&ok, "stdout"), JsValue::from_str("hel"));
    assert_eq!(field(&ok, "truncated"), JsValue::TRUE);
}

#[wasm_bindgen_test]
fn runtime_options_resolve_and_validate() {
    let rt = foxden::iframe_runtime(JsValue::UNDEFINED).unwrap();
    let den_url = field(&rt, "denUrl").as_string().unwrap();
    assert!(den_url.starts_with("http"), "{den_url}");
    assert!(den_url.ends_with("/den/den.html"));
    assert_eq!(field(&rt, "isolation"), JsValue::from_str("auto"));
    let bad = js_sys::Object::new();
    Reflect::set(&bad, &"isolation".into(), &"none".into()).unwrap();
    let err = foxden::iframe_runtime(bad.into()).unwrap_err();
    assert_eq!(field(&err, "name"), JsValue::from_str("DenError"));
    assert_eq!(field(&err, "option"), JsValue::from_str("isolation"));
    let store = foxden::idb_store(JsValue::UNDEFINED).unwrap();
    assert_eq!(field(&store, "dbName"), JsValue::from_str("foxden"));
}

#[wasm_bindgen_test]
fn string_arguments_of_another_type_are_bad_option() {
    for v in [
        JsValue::from_f64(5.0),
        js_sys::Object::new().into(),
        JsValue::NULL,
    ] {
        let err = foxden::normalize_path(v.clone()).unwrap_err();
        assert_eq!(field(&err, "name"), JsValue::from_str("DenError"));
        assert_eq!(field(&err, "code"), JsValue::from_str("bad-option"));
        assert_eq!(field(&err, "option"), JsValue::from_str("path"));
        let err = foxden::run_shell(v.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap_err();
        assert_eq!(field(&err, "option"), JsValue::from_str("command"));
    }
    let err = foxden::idb_store(JsValue::from_f64(1.0)).unwrap_err();
    assert_eq!(field(&err, "option"), JsValue::from_str("dbName"));
    let store = foxden::idb_store("mine".into()).unwrap();
    assert_eq!(field(&store, "dbName"), JsValue::from_str("mine"));
}

/// On wasm32 a `usize` is 32 bits: two list lengths near 2^32 from a hostile den page must not
/// wrap to a small count (found in review: it let such a reply past the count and trapped).
#[wasm_bindgen_test]
fn reply_counts_do_not_wrap_in_wasm32() {
    let l = foxden_core::protocol::ReplyLimits::for_run(1000, 100, 100, Default::default());
    for (c, d) in [
        (u32::MAX, 1),
        (1, u32::MAX),
        (u32::MAX, u32::MAX),
        (1 << 31, 1 << 31),
    ] {
        assert!(l.check_counts(c, d).is_err(), "{c} + {d}");
    }
    assert!(l.check_counts(10_000, 10_000).is_ok());
}
