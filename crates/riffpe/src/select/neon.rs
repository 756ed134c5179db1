//! [`I16x16`] in NEON, which every 64-bit ARM core with an FPU has (Cortex-A72, Neoverse,
//! Apple): the constant-time group search on aarch64. The `unsafe` here is the loads and
//! stores of whole vectors.

use core::arch::aarch64::*;

use super::quarter_search::I16x16;

/// Row 0 in the first vector, row 1 in the second.
#[derive(Clone, Copy)]
pub(super) struct Neon([int16x8_t; 2]);

impl Neon {
    /// `f` of row 0 and of row 1, written out: `[0, 1].map` is `core`'s generic code, which
    /// LLVM may leave a call in a large function.
    #[inline(always)]
    fn each_row(f: impl Fn(usize) -> int16x8_t) -> Self {
        Neon([f(0), f(1)])
    }
}

/// Operations that apply an intrinsic to each row.
macro_rules! rowwise {
    ($($name:ident => $intrinsic:expr),* $(,)?) => {$(
        #[inline(always)]
        fn $name(self, other: Self) -> Self {
            // SAFETY: this module is built only where the target has NEON.
            Neon::each_row(|r| unsafe { $intrinsic(self.0[r], other.0[r]) })
        }
    )*};
}

impl I16x16 for Neon {
    rowwise! {
        add => vaddq_s16,
        sub => vsubq_s16,
        gt => |a, b| vreinterpretq_s16_u16(vcgtq_s16(a, b)),
        eq => |a, b| vreinterpretq_s16_u16(vceqq_s16(a, b)),
        and => vandq_s16,
        // `vbicq(b, a)` is `b & !a`.
        and_not => |a, b| vbicq_s16(b, a),
        or => vorrq_s16,
        xor => veorq_s16,
    }

    #[inline(always)]
    fn splat(value: i16) -> Self {
        // SAFETY: as in `rowwise`.
        Neon([unsafe { vdupq_n_s16(value) }; 2])
    }

    #[inline(always)]
    fn from_array(values: [i16; 16]) -> Self {
        let (rows, _) = values.as_chunks::<8>();
        // SAFETY: NEON as in `rowwise`; each row is eight readable i16.
        Neon::each_row(|r| unsafe { vld1q_s16(rows[r].as_ptr()) })
    }

    #[inline(always)]
    fn to_array(self) -> [i16; 16] {
        let mut values = [0i16; 16];
        let (rows, _) = values.as_chunks_mut::<8>();
        for (row, v) in rows.iter_mut().zip(self.0) {
            // SAFETY: NEON as in `rowwise`; each row is eight writable i16.
            unsafe { vst1q_s16(row.as_mut_ptr(), v) }
        }
        values
    }

    #[inline(always)]
    fn load(words: &[u64; 4]) -> Self {
        let (rows, _) = words.as_chunks::<2>();
        // SAFETY: NEON as in `rowwise`; each row is two readable u64.
        Neon::each_row(|r| unsafe { vreinterpretq_s16_u64(vld1q_u64(rows[r].as_ptr())) })
    }

    #[inline(always)]
    fn store(self, words: &mut [u64; 4]) {
        let (rows, _) = words.as_chunks_mut::<2>();
        for (row, v) in rows.iter_mut().zip(self.0) {
            // SAFETY: NEON as in `rowwise`; each row is two writable u64.
            unsafe { vst1q_u64(row.as_mut_ptr(), vreinterpretq_u64_s16(v)) }
        }
    }

    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        // SAFETY: as in `rowwise`.
        Neon::each_row(|r| unsafe { vbslq_s16(vreinterpretq_u16_s16(mask.0[r]), a.0[r], b.0[r]) })
    }

    #[inline(always)]
    fn swap_rows(self) -> Self {
        Neon([self.0[1], self.0[0]])
    }

    #[inline(always)]
    fn sum_all(self) -> Self {
        // SAFETY: as in `rowwise`.
        Neon([unsafe { vdupq_n_s16(vaddvq_s16(vaddq_s16(self.0[0], self.0[1]))) }; 2])
    }
}
