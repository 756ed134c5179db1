//! The counting allocator counts every allocation call and nothing else. Alone in its test
//! binary, so that no other test allocates while the counter is read.

use std::hint::black_box;

use riffpe_benches::{CountingAllocator, allocations_made as made};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn counts_alloc_alloc_zeroed_and_realloc() {
    let mut v: Vec<u64> = Vec::new();
    let mut grow = |capacity| {
        made(|| {
            v.reserve_exact(capacity);
            black_box(&mut v);
        })
    };
    assert_eq!(grow(4), 1, "alloc");
    assert_eq!(grow(64), 1, "realloc");
    assert_eq!(grow(8), 0, "within capacity");
    assert_eq!(made(|| drop(black_box(vec![0u8; 4096]))), 1, "alloc_zeroed");
    assert_eq!(made(|| drop(black_box(v))), 0, "dealloc");
    assert_eq!(made(|| drop(black_box(Box::new(7u32)))), 1, "box");
}
