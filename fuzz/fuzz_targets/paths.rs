#![no_main]
//! The normalizer never panics, and what it accepts is a fixed point under /drop, /out or /work.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(n) = foxden_core::paths::normalize_path(s) {
            assert_eq!(foxden_core::paths::normalize_path(&n).as_deref(), Ok(n.as_str()));
            assert!(!n.split('/').any(|seg| seg == ".."));
        }
    }
});
