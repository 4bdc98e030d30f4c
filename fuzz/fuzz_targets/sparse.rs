#![no_main]
//! The warm cache's packed snapshot form: reading any bytes never panics; what it accepts
//! unpacks to the bytes it describes, whose canonical packing is never longer; and any bytes
//! packed unpack to themselves.
use foxden_core::sparse::{pack, unpack, Layout};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Any bytes as a packed form. (A header may declare up to 512 MiB of zeros: unpack only
    // the small ones, to keep the fuzzer fast; parsing is checked for all.)
    if let Ok(layout) = Layout::parse(data, data.len() as u64) {
        if layout.total() <= 1 << 20 {
            let out = unpack(data).expect("parse accepted it");
            assert_eq!(out.len() as u64, layout.total());
            let again = pack(&out);
            assert!(again.len() <= data.len(), "the canonical form is never longer");
            assert_eq!(unpack(&again).expect("canonical"), out);
        }
    }
    // Any bytes as a snapshot.
    let packed = pack(data);
    assert_eq!(unpack(&packed).expect("packed by us"), data);
});
