//! The AES floors the latency bench times beside Riffpe do the work their names say.

use riffpe_benches::{KEY, Passes, aes_lanes, aes_lanes_with_passes};

fn cipher() -> riffpe::Aes {
    riffpe::Aes::new_from_slice(&KEY).expect("16-byte key")
}

#[test]
fn without_passes_the_chains_are_aes_lanes() {
    let aes = cipher();
    let (mut lanes, mut with) = ([7u8; 16], [7u8; 16]);
    aes_lanes(&aes, 3 * 5, &mut lanes);
    aes_lanes_with_passes(&aes, (3, 5, 0), Passes::After, &mut with);
    assert_eq!(lanes, with);
}

#[test]
fn passes_between_the_rows_are_the_passes_after_them() {
    let aes = cipher();
    let (mut after, mut between, mut none) = ([7u8; 16], [7u8; 16], [7u8; 16]);
    aes_lanes_with_passes(&aes, (4, 7, 18), Passes::After, &mut after);
    aes_lanes_with_passes(&aes, (4, 7, 18), Passes::Between, &mut between);
    aes_lanes_with_passes(&aes, (4, 7, 0), Passes::Between, &mut none);
    assert_eq!(after, between);
    // The passes' result reaches the output, so they cannot be left out.
    assert_ne!(after, none);
}
