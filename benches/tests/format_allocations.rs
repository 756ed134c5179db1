//! Allocations per value of the format layer, counted by the counting allocator (alone in this
//! test binary, one test, so that nothing else allocates while it counts).

use std::hint::black_box;

use riffpe_benches::{CountingAllocator, KEY, allocations_made as made};
use riffpe_format::{BulkScratch, Format, FormatCipher};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn formatted_values_cost_an_allocation_each_in_bulk() {
    let card = FormatCipher::new(&KEY, Format::named("card").unwrap()).unwrap();
    let cards: Vec<String> = (0..1000u64)
        .map(|i| {
            let digits = format!("{:016}", i * 7_919_000_013 % 10_000_000_000_000_000);
            let groups: Vec<&str> = (0..4).map(|g| &digits[4 * g..4 * g + 4]).collect();
            groups.join(if i % 2 == 0 { " " } else { "-" })
        })
        .collect();
    // Per value: its token. Characters, symbols, radices, digits and tweaks share buffers
    // that grow per call.
    let bulk = made(|| drop(black_box(card.encrypt_many(&cards).unwrap())));
    assert!(
        bulk <= 1000 + 64,
        "encrypt_many: {bulk} allocations for 1000 cards"
    );
    // With buffers kept from an earlier call, only the tokens and a few per shape group.
    let mut scratch = BulkScratch::default();
    drop(card.encrypt_many_in(&cards, &mut scratch).unwrap());
    let warm = made(|| {
        drop(black_box(
            card.encrypt_many_in(&cards, &mut scratch).unwrap(),
        ))
    });
    assert!(
        warm <= 1000 + 16 && warm < bulk,
        "encrypt_many_in: {warm} allocations for 1000 cards, {bulk} without kept buffers"
    );
    let one = made(|| drop(black_box(card.encrypt(&cards[1]).unwrap())));
    assert!(one <= 9, "encrypt: {one} allocations for one card");
    println!("encrypt_many: {bulk} for 1000 cards, {warm} in kept buffers; encrypt: {one}");
}
