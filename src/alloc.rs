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
//! Blocks of [`BIG`] bytes and more (the `mysql` crate's two 4 MiB buffers
//! per connection, and answers as large) get mappings of their own instead
//! (`mmap`, `mremap`, `munmap`), marked `MADV_NOHUGEPAGE`. mimalloc keeps
//! what is freed resident for a while and hands it out again, so the buffers
//! of a connection that was replaced (see `client::CRATE_WALK_MAX`) came back
//! as the new connection's with the old one's pages still resident: 1.1 MB
//! per connection after each had carried one answer of that size, where a
//! mapping of its own is returned at once and its successor starts with no
//! page resident (benches/memory, issue 50). A huge page would also make the
//! first byte a connection touches of a buffer cost 2 MiB. The syscalls are
//! one `mmap` and one `munmap` per connection's buffer and per answer of 4
//! MiB or more, whose own cost dwarfs them.
//!
//! What answers freed goes back to the kernel even in a pool that went
//! quiet: the pool's housekeeper calls [`collect`] every tick (at most a
//! second apart), which purges what mimalloc's purge delay has made due (1 s;
//! 10 s for its arenas). mimalloc purges on its own only while the allocator
//! is busy, so a pool that went quiet after N connections each read a 1 MB
//! answer kept about 50 KB per connection resident for good
//! (benches/memory). A shorter delay costs while answers stream: at 0, a
//! 10,000-row scan cost 1.8 ms more kernel time (20 madvise calls, and the
//! faults that refilled the pages for the next answer: user + system CPU
//! 1.5x); at 100 ms, 0.14 ms. mimalloc's heaps are the library's alone (it
//! does not replace the host's malloc), so none of this changes anything
//! outside it.
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

/// Blocks this large, at an alignment a page meets, get a mapping of their
/// own (see the module's comment).
const BIG: usize = 4 * 1024 * 1024;

/// A page's size on every Linux target this library builds for (mmap's
/// alignment; `big` takes only alignments it meets).
const PAGE: usize = 4096;

#[inline]
fn big(align: usize, size: usize) -> bool {
    size >= BIG && align <= PAGE
}

/// `size` rounded up to whole pages (no overflow: `size` comes from a valid
/// `Layout`, at most isize::MAX).
#[inline]
fn pages(size: usize) -> usize {
    (size + PAGE - 1) & !(PAGE - 1)
}

/// A new mapping of `size` bytes (zeroed), or null.
unsafe fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address the kernel picks.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            pages(size),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // SAFETY: p is the mapping just made, of that length. Advice only: a
    // kernel without THP refuses it, and nothing depends on it.
    unsafe { libc::madvise(p, pages(size), libc::MADV_NOHUGEPAGE) };
    p as *mut u8
}

/// Gives back a mapping `map` made for `size` bytes.
unsafe fn unmap(p: *mut u8, size: usize) {
    // SAFETY: p and pages(size) are a whole mapping `map` made.
    unsafe { libc::munmap(p as *mut c_void, pages(size)) };
}

// Declared here: `libmimalloc-sys` has it only with its `extended` feature
// (and a dependency more). Not part of the C ABI: cbindgen.toml and
// cbindgen-cdef.toml exclude it from the headers.
extern "C" {
    fn mi_collect(force: bool);
}

/// Purges what freed memory is due (program-wide: mimalloc's arenas are
/// shared) and collects the calling thread's heap. Cheap when nothing is
/// due (a clock read and a compare).
pub(crate) fn collect() {
    // SAFETY: mimalloc's non-forcing collect; any thread, any time.
    unsafe { mi_collect(false) };
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
        if big(layout.align(), layout.size()) {
            // SAFETY: a size of at least BIG.
            unsafe { map(layout.size()) }
        } else if plain(layout.align(), layout.size()) {
            mi::mi_malloc(layout.size()) as *mut u8
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if big(layout.align(), layout.size()) {
            // SAFETY: as in alloc; a new anonymous mapping reads as zeroes.
            unsafe { map(layout.size()) }
        } else if plain(layout.align(), layout.size()) {
            mi::mi_zalloc(layout.size()) as *mut u8
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if big(layout.align(), layout.size()) {
            // SAFETY: alloc mapped it for this layout (the same test).
            unsafe { unmap(ptr, layout.size()) }
        } else {
            mi::mi_free(ptr as *mut c_void);
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        match (big(align, layout.size()), big(align, new_size)) {
            (false, false) => {}
            (true, true) => {
                // SAFETY: ptr is a whole mapping of pages(layout.size());
                // the kernel moves it if it cannot grow in place.
                let p = unsafe {
                    libc::mremap(
                        ptr as *mut c_void,
                        pages(layout.size()),
                        pages(new_size),
                        libc::MREMAP_MAYMOVE,
                    )
                };
                return if p == libc::MAP_FAILED {
                    std::ptr::null_mut()
                } else {
                    p as *mut u8
                };
            }
            (from_big, _) => {
                // Across the line: a new block, the bytes both hold, the
                // old one freed the way it was made.
                // SAFETY: new_size comes with the layout's alignment.
                let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, align) };
                // SAFETY: a valid, non-zero-size layout (realloc's contract).
                let q = unsafe { self.alloc(new_layout) };
                if !q.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and
                    // are distinct.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, q, layout.size().min(new_size));
                        if from_big {
                            unmap(ptr, layout.size());
                        } else {
                            mi::mi_free(ptr as *mut c_void);
                        }
                    }
                }
                return q;
            }
        }
        if plain(align, new_size) {
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

    /// Blocks of BIG bytes and more are mappings of their own, zeroed when
    /// asked, page-aligned, and keep their bytes across a realloc in every
    /// direction: within the big ones (mremap), and across the line both
    /// ways.
    #[test]
    fn big_blocks_keep_their_bytes_across_reallocs() {
        let a = MiMalloc;
        let fill = |p: *mut u8, n: usize| {
            for i in (0..n).step_by(4093) {
                // SAFETY: p holds at least n bytes.
                unsafe { *p.add(i) = (i % 251) as u8 };
            }
        };
        let check = |p: *mut u8, n: usize| {
            for i in (0..n).step_by(4093) {
                // SAFETY: p holds at least n bytes.
                assert_eq!(unsafe { *p.add(i) }, (i % 251) as u8, "byte {i}");
            }
        };
        for align in [1usize, 8, 16, 4096] {
            let small = Layout::from_size_align(BIG / 2, align).unwrap();
            // SAFETY: non-zero-size layouts throughout; each block is freed
            // with the layout it has at that point.
            unsafe {
                let p = a.alloc(small);
                fill(p, small.size());
                let p = a.realloc(p, small, BIG + 5);
                assert!(!p.is_null() && p as usize % PAGE == 0);
                check(p, small.size());
                fill(p, BIG + 5);
                let p = a.realloc(p, Layout::from_size_align(BIG + 5, align).unwrap(), 3 * BIG);
                assert!(!p.is_null());
                check(p, BIG + 5);
                let p = a.realloc(p, Layout::from_size_align(3 * BIG, align).unwrap(), 1000);
                assert!(!p.is_null() && p as usize % align == 0);
                check(p, 1000);
                a.dealloc(p, Layout::from_size_align(1000, align).unwrap());

                let z = Layout::from_size_align(BIG, align).unwrap();
                let p = a.alloc_zeroed(z);
                assert!(std::slice::from_raw_parts(p, BIG).iter().all(|b| *b == 0));
                a.dealloc(p, z);
            }
        }
        // An alignment past a page stays with mimalloc's aligned calls.
        let odd = Layout::from_size_align(BIG, 2 * PAGE).unwrap();
        // SAFETY: a valid layout, freed with it.
        unsafe {
            let p = a.alloc(odd);
            assert_eq!(p as usize % (2 * PAGE), 0);
            a.dealloc(p, odd);
        }
    }

    /// A collect with nothing due, and one after big and small blocks were
    /// freed, return; the blocks allocated afterwards are usable.
    #[test]
    fn collect_runs_at_any_time() {
        let a = MiMalloc;
        collect();
        let layouts = [
            Layout::from_size_align(64, 8).unwrap(),
            Layout::from_size_align(BIG, 8).unwrap(),
        ];
        for l in layouts {
            // SAFETY: valid layouts, each block freed with its own.
            unsafe {
                let p = a.alloc(l);
                std::ptr::write_bytes(p, 7, l.size());
                a.dealloc(p, l);
            }
        }
        collect();
        for l in layouts {
            // SAFETY: as above.
            unsafe {
                let p = a.alloc_zeroed(l);
                assert!(std::slice::from_raw_parts(p, l.size())
                    .iter()
                    .all(|b| *b == 0));
                a.dealloc(p, l);
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
