//! The C library's global allocator: mimalloc (the `mimalloc` feature, see
//! Cargo.toml), called the way std's `System` calls glibc.
//!
//! The `mimalloc` crate's `MiMalloc` sends every request through
//! `mi_malloc_aligned`, whatever its alignment. In mimalloc 3 that call has a
//! fast path only while the size class's current page still has a free block
//! at hand; when that list runs dry (every few dozen allocations of a size) it
//! goes the generic aligned way, which for a block size that is not a power of
//! two (24, 40, 48 bytes...) over-allocates into the next size class and marks
//! the page as holding interior pointers, so later frees of it are slower too.
//! Through callgrind that was about a tenth of the library's instructions for a
//! `SELECT 1` through the C ABI. Plain `mi_malloc` refills the page instead.
//!
//! Every mimalloc block of 16 bytes or more is 16-byte aligned and every
//! smaller one 8-byte aligned, so a request whose alignment is at most 16 and
//! at most its size gets plain `mi_malloc`, exactly as std's `System` gives
//! such a request plain `malloc`; the rest (rare: cache-padded cells, zero-size
//! requests never reach an allocator) keeps the aligned calls.
//!
//! Every allocation the library makes it also frees: nothing crosses the C
//! boundary to be freed by the caller's allocator, or the other way round.
#![allow(unsafe_code)]

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment every mimalloc block of at least this size has.
const MIN_ALIGN: usize = 16;

#[inline]
fn plain(align: usize, size: usize) -> bool {
    align <= MIN_ALIGN && align <= size
}

pub(crate) struct MiMalloc;

// SAFETY: each method forwards to the mimalloc call that meets GlobalAlloc's
// contract for the layout: plain calls only where mimalloc's own block
// alignment already satisfies `layout.align()` (see the module's comment),
// aligned calls otherwise; every pointer is freed by `mi_free`, which takes
// any block either kind of call returned.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            mi::mi_malloc(layout.size()) as *mut u8
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            mi::mi_zalloc(layout.size()) as *mut u8
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr as *mut c_void);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(layout.align(), new_size) {
            mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
        } else {
            mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every plain request comes back aligned as its layout asks, across the
    /// small size classes and past them, including after a page's free list
    /// runs dry (many live blocks of one size).
    #[test]
    fn plain_requests_are_aligned_as_asked() {
        let a = MiMalloc;
        for align in [1usize, 2, 4, 8, 16] {
            for size in (align..=2048).step_by(align) {
                let layout = Layout::from_size_align(size, align).unwrap();
                let mut live = Vec::new();
                for _ in 0..64 {
                    // SAFETY: a non-zero-size layout; freed below with it.
                    let p = unsafe { a.alloc(layout) };
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    live.push(p);
                }
                for p in live {
                    // SAFETY: allocated above with the same layout.
                    let q = unsafe { a.realloc(p, layout, size * 3) };
                    assert_eq!(q as usize % align, 0, "realloc: size {size} align {align}");
                    // SAFETY: q holds size * 3 bytes under the same alignment.
                    unsafe { a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap()) };
                }
            }
        }
    }

    /// Alignments past 16 take mimalloc's aligned calls and are honoured.
    #[test]
    fn large_alignments_are_honoured() {
        let a = MiMalloc;
        for align in [32usize, 64, 128, 4096] {
            for size in [1usize, 8, 24, align, 3 * align] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero-size layout; freed right after.
                let p = unsafe { a.alloc_zeroed(layout) };
                assert_eq!(p as usize % align, 0);
                // SAFETY: p holds `size` zeroed bytes.
                assert!(unsafe { std::slice::from_raw_parts(p, size) }
                    .iter()
                    .all(|b| *b == 0));
                // SAFETY: allocated above with this layout.
                unsafe { a.dealloc(p, layout) };
            }
        }
    }
}
