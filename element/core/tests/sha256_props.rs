//! Our SHA-256 against the `sha2` crate: random data, fed in random pieces.

use proptest::prelude::*;
use sha2::Digest;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn agrees_with_sha2(data in proptest::collection::vec(any::<u8>(), 0..2000), cuts in proptest::collection::vec(0usize..2000, 0..6)) {
        let want: [u8; 32] = sha2::Sha256::digest(&data).into();
        prop_assert_eq!(foxden_core::sha256(&data), want);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        cuts.sort_unstable();
        let mut h = foxden_core::sha256::Sha256::new();
        let mut at = 0;
        for c in cuts.into_iter().chain([data.len()]) {
            h.update(&data[at..c]);
            at = c;
        }
        prop_assert_eq!(h.finalize(), want);
    }
}
