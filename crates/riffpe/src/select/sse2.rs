//! [`I16x16`] in SSE2, which every x86-64 CPU has: the constant-time group search on CPUs
//! without AVX2. The `unsafe` here is the unaligned loads and stores of whole vectors.

use core::arch::x86_64::*;

use super::quarter_search::I16x16;

/// Row 0 in the first vector, row 1 in the second.
#[derive(Clone, Copy)]
pub(super) struct Sse2([__m128i; 2]);

impl Sse2 {
    /// `f` of row 0 and of row 1, written out: `[0, 1].map` is `core`'s generic code, which
    /// LLVM may leave a call in a large function.
    #[inline(always)]
    fn each_row(f: impl Fn(usize) -> __m128i) -> Self {
        Sse2([f(0), f(1)])
    }
}

/// Operations that apply an intrinsic to each row.
macro_rules! rowwise {
    ($($name:ident => $intrinsic:ident),* $(,)?) => {$(
        #[inline(always)]
        fn $name(self, other: Self) -> Self {
            // SAFETY: SSE2 is part of x86-64, so every CPU that runs this code has it.
            Sse2::each_row(|r| unsafe { $intrinsic(self.0[r], other.0[r]) })
        }
    )*};
}

impl I16x16 for Sse2 {
    rowwise! {
        add => _mm_add_epi16,
        sub => _mm_sub_epi16,
        gt => _mm_cmpgt_epi16,
        eq => _mm_cmpeq_epi16,
        and => _mm_and_si128,
        and_not => _mm_andnot_si128,
        or => _mm_or_si128,
        xor => _mm_xor_si128,
    }

    #[inline(always)]
    fn splat(value: i16) -> Self {
        // SAFETY: as in `rowwise`.
        Sse2([unsafe { _mm_set1_epi16(value) }; 2])
    }

    #[inline(always)]
    fn from_array(values: [i16; 16]) -> Self {
        let (rows, _) = values.as_chunks::<8>();
        // SAFETY: each row is 16 readable bytes, and the loads are unaligned.
        Sse2::each_row(|r| unsafe { _mm_loadu_si128(rows[r].as_ptr().cast()) })
    }

    #[inline(always)]
    fn to_array(self) -> [i16; 16] {
        let mut values = [0i16; 16];
        let (rows, _) = values.as_chunks_mut::<8>();
        for (row, v) in rows.iter_mut().zip(self.0) {
            // SAFETY: each row is 16 writable bytes, and the stores are unaligned.
            unsafe { _mm_storeu_si128(row.as_mut_ptr().cast(), v) }
        }
        values
    }

    #[inline(always)]
    fn load(words: &[u64; 4]) -> Self {
        let (rows, _) = words.as_chunks::<2>();
        // SAFETY: as in `from_array`.
        Sse2::each_row(|r| unsafe { _mm_loadu_si128(rows[r].as_ptr().cast()) })
    }

    #[inline(always)]
    fn store(self, words: &mut [u64; 4]) {
        let (rows, _) = words.as_chunks_mut::<2>();
        for (row, v) in rows.iter_mut().zip(self.0) {
            // SAFETY: as in `to_array`.
            unsafe { _mm_storeu_si128(row.as_mut_ptr().cast(), v) }
        }
    }

    #[inline(always)]
    fn swap_rows(self) -> Self {
        Sse2([self.0[1], self.0[0]])
    }

    #[inline(always)]
    fn sum_all(self) -> Self {
        // SAFETY: as in `rowwise`.
        let sum = unsafe {
            let sum = _mm_add_epi16(self.0[0], self.0[1]);
            let sum = _mm_add_epi16(sum, _mm_shuffle_epi32::<0b01_00_11_10>(sum));
            let sum = _mm_add_epi16(sum, _mm_shuffle_epi32::<0b10_11_00_01>(sum));
            _mm_add_epi16(
                sum,
                _mm_shufflelo_epi16::<0b10_11_00_01>(_mm_shufflehi_epi16::<0b10_11_00_01>(sum)),
            )
        };
        Sse2([sum; 2])
    }
}
