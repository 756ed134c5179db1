//! `ScratchBuf` hands no keystream back to the allocator: its buffers are wiped before they
//! are freed, when it is dropped and when it grows. A global allocator looks at every block
//! freed (or moved by `realloc`) on the watching thread and counts those not all zero.
#![cfg(all(feature = "alloc", feature = "zeroize"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use riffpe::{Riffpe, ScratchBuf, ScratchSize, Tweak};

struct Checking;

thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// Blocks freed while watching, and how many of them were not all zero.
    static FREED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

// The allocator is the test's only unsafe code: it forwards to the system's.
#[allow(unsafe_code)]
impl Checking {
    /// Counts the block about to be freed at `ptr` if this thread is watching.
    ///
    /// # Safety
    /// `ptr` points to `size` readable bytes.
    unsafe fn look(ptr: *const u8, size: usize) {
        if WATCHING.with(Cell::get) {
            // SAFETY: the caller's promise; the block is still allocated.
            let block = unsafe { std::slice::from_raw_parts(ptr, size) };
            let dirty = block.iter().any(|&b| b != 0);
            FREED.with(|f| {
                let (freed, dirty_count) = f.get();
                f.set((freed + 1, dirty_count + usize::from(dirty)));
            });
        }
    }
}

// SAFETY: every call goes to the system allocator unchanged; `look` only reads a block the
// caller still owns.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Checking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a live block of `layout.size()` bytes until it is freed here.
        unsafe {
            Self::look(ptr, layout.size());
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`; the block is read before it is moved.
        unsafe {
            Self::look(ptr, layout.size());
            System.realloc(ptr, layout, new_size)
        }
    }
}

#[global_allocator]
static ALLOCATOR: Checking = Checking;

/// Blocks freed by `f`, and how many of them held anything but zeros.
fn freed_by(f: impl FnOnce()) -> (usize, usize) {
    FREED.with(|c| c.set((0, 0)));
    WATCHING.with(|w| w.set(true));
    f();
    WATCHING.with(|w| w.set(false));
    FREED.with(Cell::get)
}

/// A buffer that has run a message, so it holds keystream and keys.
fn used_buffer() -> ScratchBuf {
    let fpe = Riffpe::new(10, 6, &[0x2b; 16], b"tweak").unwrap();
    let mut buf = ScratchBuf::for_message(&fpe);
    let mut digits = [1, 2, 3, 4, 5, 6];
    fpe.encrypt_with(Tweak::Fixed, &mut digits, &mut buf.scratch())
        .unwrap();
    buf
}

#[test]
fn the_checker_sees_a_dirty_block() {
    let data = vec![7u8; 64];
    assert_eq!(freed_by(|| drop(data)), (1, 1));
}

#[test]
fn dropped_scratch_is_wiped() {
    let buf = used_buffer();
    assert_eq!(freed_by(|| drop(buf)), (2, 0));
}

#[test]
fn grown_scratch_wipes_what_it_leaves() {
    let mut buf = used_buffer();
    let larger = ScratchSize {
        keystream_bytes: 1 << 16,
        keys: 1 << 12,
    };
    assert_eq!(freed_by(|| buf.reserve(larger)), (2, 0));
    // Sizes it already has free nothing.
    assert_eq!(freed_by(|| buf.reserve(larger)), (0, 0));
}
