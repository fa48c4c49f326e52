//! Generated inputs for the unit tests that compare a fast path with the
//! slow one it replaced: a fixed xorshift sequence, so that a failure
//! repeats, and a case count that Miri can run (it runs every unit test,
//! some thousand times slower).

/// The next-number function of a xorshift64 generator started at `seed`
/// (not zero).
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// `n` cases, or a few hundred under Miri.
pub(crate) fn cases(n: usize) -> usize {
    if cfg!(miri) {
        n.min(300)
    } else {
        n
    }
}
