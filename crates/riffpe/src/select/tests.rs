//! Every selection path against a plain sort of the pairs.

/// A property's config: `cases` cases, unless `PROPTEST_CASES` gives the number (runs under
/// CPU emulation give fewer).
fn cases(cases: u32) -> proptest::prelude::ProptestConfig {
    extern crate std;
    match std::env::var_os("PROPTEST_CASES") {
        Some(_) => proptest::prelude::ProptestConfig::default(),
        None => proptest::prelude::ProptestConfig::with_cases(cases),
    }
}

pub(crate) mod per_lane {
    //! Ties of leading bits cannot be reached through AES output in any test's lifetime
    //! (2^-44 per step at radix 100), so these tests draw keystreams from a tiny alphabet, full
    //! of them, and check every selection path against a plain sort of the pairs.

    extern crate std;

    use super::group::noise_from;
    use crate::select::constant_time::{Arrivals, LARGEST_SEARCHED_RADIX, LeadRanks};
    use crate::select::{
        KeyLayout, MAX_BUCKETS, Quarters, RANKED_RADIX, RankedLeads, Ranks, SLOTS, Selection,
        Slotted,
    };
    use proptest::prelude::*;
    use std::vec::Vec;

    /// π as SPEC defines it: the indices of the pairs (value, index) in sorted order.
    pub(crate) fn plain_permutation(keystream: &[u8], n: usize, b: usize) -> Vec<u32> {
        let value = |k: u32| &keystream[k as usize * b..(k as usize + 1) * b];
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&x, &y| value(x).cmp(value(y)).then(x.cmp(&y)));
        order
    }

    /// `(n, b, keystream)`: values drawn from 1 to 3 byte values make most leading parts
    /// collide (inexact keys for b ≥ 9); 256 gives equal short values now and then.
    fn step() -> impl Strategy<Value = (usize, usize, Vec<u8>)> {
        (
            2usize..=300,
            1usize..=20,
            prop_oneof![Just(1u16), Just(2), Just(3), Just(256)],
        )
            .prop_flat_map(|(n, b, alphabet)| {
                let byte = (0..alphabet).prop_map(|x| x as u8);
                (Just(n), Just(b), proptest::collection::vec(byte, n * b))
            })
    }

    proptest! {
        #![proptest_config(super::cases(48))]

        #[test]
        fn every_selection_path_matches_a_plain_sort((n, b, mut keystream) in step()) {
            let layout = KeyLayout::new(n as u32, b);
            // Every value's 8 leading bytes must be readable: slack past the last one.
            keystream.extend_from_slice(&[0; 8]);
            let pi = plain_permutation(&keystream, n, b);
            let mut keys = std::vec![0u64; n];
            let mut counts = [0u64; MAX_BUCKETS];
            let mut ranks = Ranks::new();
            let mut quarters = Quarters::new();
            let mut leads = LeadRanks::new();
            let ranking = RankedLeads::detect();
            for x in 0..n as u32 {
                let k = pi[x as usize];
                // Fast selection with keys counted (lockstep) and filed (one message).
                for (selection, filed) in [
                    (Selection::Fast, false),
                    (Selection::Fast, true),
                    (Selection::ConstantTime, false),
                ] {
                    let mut histogram = layout.histogram(&mut counts, filed);
                    if filed {
                        for j in 0..n {
                            layout.file(&mut keys, &mut histogram, layout.key(&keystream, j));
                        }
                    } else {
                        let count = selection == Selection::Fast;
                        layout.make_keys(&keystream, &mut keys, &mut histogram, count);
                    }
                    let forward =
                        layout.select_with(selection, &keystream, &mut keys, &histogram, true, x);
                    prop_assert_eq!(
                        forward, k, "π({}), {:?}, filed {}, n {}, b {}", x, selection, filed, n, b
                    );

                    let mut histogram = layout.histogram(&mut counts, false);
                    layout.make_keys(&keystream, &mut keys, &mut histogram, false);
                    let inverse =
                        layout.select_with(selection, &keystream, &mut keys, &histogram, false, k);
                    prop_assert_eq!(inverse, x, "π⁻¹({}), {:?}, n {}, b {}", k, selection, n, b);
                }
                if layout.slotted() {
                    // Fast π of one message from keys filed into slots, over slots that hold
                    // zeros (no key is below them) where no key was filed; past 16 keys in the
                    // x-th key's bucket (here when the alphabet is tiny), from the keystream.
                    let mut slots = [0u64; SLOTS];
                    let mut slotted = Slotted::new(&mut slots);
                    for j in 0..n {
                        slotted.file(&layout, layout.key(&keystream, j));
                    }
                    let mut histogram = layout.histogram(&mut counts, false);
                    let forward =
                        layout.forward_slotted(&keystream, &slotted, &mut keys, &mut histogram, x);
                    prop_assert_eq!(forward, k, "π({}) slotted, n {}, b {}", x, n, b);
                }
                if n as u32 <= RANKED_RADIX {
                    // Constant-time π from ranks kept as the keys arrive (one message, below radix
                    // 32 or 48 as the CPU picks), from the leading bits ranked as they arrive
                    // (where the CPU has AVX2), and from the keys' quarters searched after the
                    // chain (at every radix here, though the engine takes one by the radix and
                    // CPU). One `Ranks`, `LeadRanks` and `Quarters` for every x, as in the engine:
                    // the leads and quarters start from `reset`, the ranks from what the last x
                    // left.
                    let ranked = (n as u32) < LARGEST_SEARCHED_RADIX;
                    quarters.reset(n);
                    leads.reset(n);
                    for (j, key) in keys[..n].iter_mut().enumerate() {
                        *key = layout.key(&keystream, j);
                        if ranked {
                            layout.rank_arrival(*key, j, &mut ranks);
                        }
                        if let Some(ranking) = ranking {
                            ranking.rank_lead(&mut leads, j, *key);
                        }
                        quarters.set(j, *key);
                    }
                    for ranking in ranking.into_iter().flat_map(|r| [r, r.without_wide_pick()]) {
                        let mut arrivals = Arrivals::LeadsRanked(ranking, &mut leads);
                        let forward = layout.pick_arrived(&keystream, &keys, &mut arrivals, x);
                        prop_assert_eq!(forward, k, "π({}) leads ranked, n {}, b {}", x, n, b);
                    }
                    if ranked {
                        let forward = layout.pick_ranked(&keystream, &keys, &mut ranks, x);
                        prop_assert_eq!(forward, k, "π({}) ranked on arrival, n {}, b {}", x, n, b);
                    }
                    let forward = layout.pick_searched(&keystream, &keys, &mut quarters, x);
                    prop_assert_eq!(forward, k, "π({}) searched, n {}, b {}", x, n, b);
                }
                prop_assert_eq!(
                    layout.inverse_from_keystream(&keystream, k),
                    x,
                    "π⁻¹({}) from keystream",
                    k
                );
            }
        }
    }

    /// One message's fast π from slots, where keys spread over the buckets come in pairs whose
    /// 8 leading bytes tie and whose later bytes order them against their indices (the
    /// proptest's tiny alphabets put every key in one bucket, which outgrows its slots): each
    /// tie is settled from the keystream.
    #[test]
    fn slotted_ties_settled_by_whole_values() {
        for n in [2, 3, 17, 40, 100, 128] {
            for b in [9, 16, 18] {
                let mut keystream = noise_from(seed(n, b), n * b + 8);
                for k in (1..n).step_by(2) {
                    let (earlier, value) = keystream.split_at_mut(k * b);
                    let earlier = &mut earlier[(k - 1) * b..];
                    value[..8].copy_from_slice(&earlier[..8]);
                    earlier[8] |= 0x80;
                    value[8] &= 0x7f;
                }
                assert_slotted_forward(&keystream, n, b, 0);
            }
        }
    }

    /// One message's fast π from slots where one bucket holds every key: up to 16 fit its
    /// slots (16 fill them), 17 and more outgrow them. The other buckets' slots hold stale keys.
    #[test]
    fn slotted_buckets_full_and_outgrown() {
        for n in [2, 15, 16, 17, 40, 128] {
            for b in [3, 16, 18] {
                // Leading nibble 7: one bucket; the rest random, with slack past the last value.
                let mut keystream = noise_from(!seed(n, b), n * b + 8);
                for k in 0..n {
                    keystream[k * b] = 0x70 | keystream[k * b] & 0x0f;
                }
                assert_slotted_forward(&keystream, n, b, u64::MAX / 3);
            }
        }
    }

    /// A seed of its own for each radix and value width.
    fn seed(n: usize, b: usize) -> u64 {
        0x9e37_79b9_7f4a_7c15_u64.wrapping_mul((n * 32 + b) as u64)
    }

    /// Files the `n` keys of `keystream` (`b` bytes a value) into slots that held `stale`, and
    /// checks one message's fast π of every x from them against a plain sort.
    fn assert_slotted_forward(keystream: &[u8], n: usize, b: usize, stale: u64) {
        let layout = KeyLayout::new(n as u32, b);
        let pi = plain_permutation(keystream, n, b);
        let mut slots = [stale; SLOTS];
        let mut slotted = Slotted::new(&mut slots);
        for j in 0..n {
            slotted.file(&layout, layout.key(keystream, j));
        }
        let (mut keys, mut counts) = (std::vec![0u64; n], [0u64; MAX_BUCKETS]);
        for x in 0..n as u32 {
            let mut histogram = layout.histogram(&mut counts, false);
            assert_eq!(
                layout.forward_slotted(keystream, &slotted, &mut keys, &mut histogram, x),
                pi[x as usize],
                "π({x}), n {n}, b {b}"
            );
        }
    }
}

mod group {
    //! Every path against a plain sort of each lane's pairs, on keystreams drawn from tiny
    //! alphabets so that leading bits tie often (real AES output would tie about 2^-44 per step).

    extern crate std;

    use super::per_lane::plain_permutation;
    use crate::select::KeyLayout;
    use crate::select::group::*;
    use crate::select::{ConstantTimeGroup, Group, GroupIsa};
    use proptest::prelude::*;
    use std::vec::Vec;

    // The portable group passes: the oracle the AVX-512 and AVX2 kernels are tested against.

    /// π(x) for every lane by buckets of leading bits (the module doc's "Forward").
    #[inline(always)]
    fn forward_any(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        let passes = Passes {
            count: count_rows,
            mark: mark_rows,
            rank: rank_slots,
        };
        by_chunks(blocks, work, digits, passes);
    }

    /// `Passes::count`: the keys made one lane at a time, then counted a row at a time (in two
    /// passes: a row read as one vector straight after its narrow stores waits for them).
    #[inline(always)]
    fn count_rows(
        blocks: &Blocks<'_>,
        first: usize,
        count: usize,
        rows: &mut [[u64; CHUNK]],
    ) -> Counts {
        for (k, row) in rows.iter_mut().enumerate() {
            blocks.chunk_row(k, first, count, row);
        }
        let (mut low, mut high) = ([0u64; CHUNK], [0u64; CHUNK]);
        for row in rows.iter() {
            for l in 0..CHUNK {
                let one = 1u64 << ((row[l] >> (BUCKET_SHIFT - 3)) & 0x38);
                let upper = row[l] >> 63;
                low[l] += one & upper.wrapping_sub(1);
                high[l] += one & upper.wrapping_neg();
            }
        }
        (low, high)
    }

    /// [`Passes::mark`]: bit k of a lane's set when value k's key lies in the lane's bucket.
    #[inline(always)]
    fn mark_rows(rows: &[[u64; CHUNK]], buckets: &[u64; CHUNK]) -> Marks {
        let mut marks = [[0u64; CHUNK]; MARK_WORDS];
        for (mark, rows) in marks.iter_mut().zip(rows.chunks(64)) {
            for (bit, row) in rows.iter().enumerate() {
                let bit = 1u64 << bit;
                for l in 0..CHUNK {
                    mark[l] |= bit & u64::from(row[l] >> BUCKET_SHIFT == buckets[l]).wrapping_neg();
                }
            }
        }
        marks
    }

    /// Each lane's key of rank `ranks[l]` among its slots, as its value, the slots sorted by
    /// [`SORT16`], branch-free. A slot past the bucket holds u64::MAX, above every key (or equal
    /// to one, and then the same answer).
    #[inline(always)]
    fn rank_slots(blocks: &Blocks<'_>, picked: &Picked<'_>, digits: &mut [u32]) {
        let layout = &blocks.layout;
        let mut keys = picked.slots;
        sort16!(&mut keys, |a, b| {
            let min = core::array::from_fn(|l| a[l].min(b[l]));
            let max = core::array::from_fn(|l| a[l].max(b[l]));
            (min, max)
        });
        for (l, digit) in digits.iter_mut().enumerate() {
            let found = keys[(picked.ranks[l] as usize).min(SMALL_BUCKET - 1)][l];
            // Key order is pair order unless another key shares the found key's leading bits
            // (such keys share its bucket).
            let tied = !layout.exact()
                && keys
                    .iter()
                    .filter(|k| layout.same_lead(k[l], found))
                    .count()
                    != 1;
            *digit = if !picked.small(l) || tied {
                picked.large(blocks, l)
            } else {
                layout.index(found) as u32
            };
        }
    }

    /// π⁻¹(k) for every lane by counting, a [`CHUNK`] of lanes at a time, the keys below each
    /// lane's pivot.
    #[inline(always)]
    fn inverse_any(blocks: &Blocks<'_>, work: Work<'_>, digits: &mut [u32]) {
        let rows = work.rows();
        for (chunk, digits) in digits[..blocks.lanes].chunks_mut(CHUNK).enumerate() {
            let first = chunk * CHUNK;
            for (k, row) in rows.iter_mut().enumerate() {
                blocks.chunk_row(k, first, digits.len(), row);
            }
            // Each lane's key of its value k, which is in row k.
            let pivots: [u64; CHUNK] = core::array::from_fn(|l| {
                let row = digits.get(l).and_then(|&k| rows.get(k as usize));
                row.map_or(0, |row| row[l])
            });
            let (mut below, mut same) = ([0u64; CHUNK], [0u64; CHUNK]);
            for row in rows.iter() {
                for l in 0..CHUNK {
                    below[l] += u64::from(row[l] < pivots[l]);
                    same[l] += u64::from(blocks.layout.same_lead(row[l], pivots[l]));
                }
            }
            rank_digits(blocks, first, &pivots, below, same, digits);
        }
    }

    /// `(lanes, n, b, block-major keystream, one digit per lane)`.
    fn group() -> impl Strategy<Value = (usize, usize, usize, Vec<u8>, Vec<u32>)> {
        group_of(prop_oneof![
            2usize..=20,
            2usize..=MAX_RADIX as usize,
            // The AVX2 fast passes' largest radix, drawn often.
            Just(256usize),
            // Above AVX-512's fast passes: the constant-time ones (and AVX2's fast ones at 256).
            MAX_RADIX as usize + 1..=700,
        ])
    }

    /// [`group`] of a radix drawn from `radix`.
    fn group_of(
        radix: impl Strategy<Value = usize>,
    ) -> impl Strategy<Value = (usize, usize, usize, Vec<u8>, Vec<u32>)> {
        (
            // 32: one plane chunk, which fast π searches alone at every radix.
            prop_oneof![1usize..=20, Just(PLANE_LANES), Just(MAX_LANES)],
            radix,
            // Multiples of 16 as well: their keys are made in the AES loop.
            prop_oneof![1usize..=20, Just(16), Just(32)],
            prop_oneof![Just(1u16), Just(2), Just(3), Just(256)],
            // Small alphabets at the top as well, so that all-ones bits tie too.
            any::<bool>(),
        )
            .prop_flat_map(|(lanes, n, b, alphabet, top)| {
                let blocks = (n * b).div_ceil(16) + 1;
                let byte =
                    (0..alphabet).prop_map(move |x| if top { 0xff - x as u8 } else { x as u8 });
                let digits = proptest::collection::vec(0..n as u32, lanes);
                let bytes = proptest::collection::vec(byte, blocks * lanes * 16);
                (Just(lanes), Just(n), Just(b), bytes, digits)
            })
    }

    /// Lane `lane`'s keystream, contiguous.
    fn lane_stream(bytes: &[u8], lanes: usize, lane: usize) -> Vec<u8> {
        bytes
            .chunks_exact(lanes * 16)
            .flat_map(|row| &row[lane * 16..][..16])
            .copied()
            .collect()
    }

    type Select<'a> = &'a dyn Fn(&Blocks<'_>, Work<'_>, &mut [u32]);

    /// What the AES loop made besides the keystream.
    #[derive(Clone, Copy, Debug)]
    enum Made {
        Not,
        Keys,
        Planes,
        /// And octets 2 to 5 beside the planes.
        Middles,
    }

    /// What makes [`Middles`] on this CPU, if it has VBMI.
    fn middles_isa() -> Option<Middles> {
        #[cfg(target_arch = "x86_64")]
        return crate::select::avx512::Vbmi::detect().map(Middles);
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// What makes [`Planes`] on this CPU, if it has AVX2.
    fn plane_isa() -> Option<Planes> {
        #[cfg(target_arch = "x86_64")]
        return crate::select::avx2::Avx2::detect().map(|avx2| Planes(LoopIsa::detect(avx2)));
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    fn check(
        (lanes, n, b, bytes, digits): &(usize, usize, usize, Vec<u8>, Vec<u32>),
        paths: &[(&str, Select<'_>, bool)],
    ) -> Result<(), TestCaseError> {
        let layout = KeyLayout::new(*n as u32, *b);
        // Keys made as the engine's AES loop makes them, block row by block row (VBMI's maker
        // for any b), over what the scratch held before.
        let keys_made = *n <= MADE_KEYS_MAX_RADIX as usize;
        let mut made = std::vec![u64::MAX; *n * *lanes];
        let (rows, _) = bytes.as_chunks::<16>();
        for (j, row) in rows.chunks_exact(*lanes).enumerate() {
            if keys_made && j < (*n * *b).div_ceil(16) {
                make_row_keys(&layout, j, row, &mut made);
            }
        }
        // And the keys' leading octets as planes, where AVX2's forward pass would read them.
        let planes = plane_isa().filter(|_| {
            planes_in_loop(&layout)
                && lanes.is_multiple_of(PLANE_LANES)
                && (SMALL_RADIX + 1..=MAX_RADIX as usize).contains(n)
        });
        let mut octets = std::vec![0u64; Planes::words(*n as u32, *lanes)];
        // Made again with their middles where VBMI runs, which must leave the planes the same.
        let middles = middles_isa().filter(|_| planes.is_some());
        let mut beside = octets.clone();
        let mut mids = std::vec![0u64; Middles::words(*n as u32, *lanes)];
        for (j, row) in rows.chunks_exact(*lanes).enumerate() {
            if let Some(planes) = planes
                && j < (*n * *b).div_ceil(16)
            {
                planes.make(&layout, j, row, &mut octets, None);
                if let Some(middles) = middles {
                    planes.make(&layout, j, row, &mut beside, Some((middles, &mut mids)));
                }
            }
        }
        if middles.is_some() {
            prop_assert_eq!(&beside, &octets);
        }
        let mut keys = std::vec![0u64; Work::words(*n as u32)];
        let made_where = [Made::Not, Made::Keys, Made::Planes, Made::Middles]
            .into_iter()
            .filter(|m| match m {
                Made::Not => true,
                Made::Keys => keys_made,
                Made::Planes => planes.is_some(),
                Made::Middles => middles.is_some(),
            });
        for (with_made, &(name, select, forward)) in
            made_where.flat_map(|m| paths.iter().map(move |p| (m, p)))
        {
            let blocks = match with_made {
                Made::Keys => Blocks::new(bytes, *lanes, layout).with_keys(&made),
                Made::Planes => Blocks::new(bytes, *lanes, layout).with_planes(&octets),
                Made::Middles => Blocks::new(bytes, *lanes, layout)
                    .with_planes(&octets)
                    .with_middles(&mids),
                Made::Not => Blocks::new(bytes, *lanes, layout),
            };
            // As the engine calls them: one digit per lane at the front of a column of
            // MAX_LANES, the rest left alone.
            let mut out = digits.clone();
            out.resize(MAX_LANES, u32::MAX);
            select(&blocks, Work::new(&mut keys, *n as u32), &mut out);
            prop_assert!(out[*lanes..].iter().all(|&d| d == u32::MAX));
            for lane in 0..*lanes {
                let pi = plain_permutation(&lane_stream(bytes, *lanes, lane), *n, *b);
                let x = digits[lane];
                let expected = if forward {
                    pi[x as usize]
                } else {
                    pi.iter().position(|&k| k == x).unwrap_or(usize::MAX) as u32
                };
                prop_assert_eq!(
                    out[lane],
                    expected,
                    "{} lane {} of {}, n {}, b {}, made in the loop: {:?}",
                    name,
                    lane,
                    lanes,
                    n,
                    b,
                    with_made
                );
            }
        }
        Ok(())
    }

    /// The constant-time search's key of rank x and ties of each lane of the first chunk, against
    /// a sort of the lane's keys: ties flagged where none are would cost no wrong result, only
    /// time that depends on the keys.
    fn check_search(
        group: ConstantTimeGroup,
        (lanes, n, b, bytes, digits): &(usize, usize, usize, Vec<u8>, Vec<u32>),
    ) -> Result<(), TestCaseError> {
        let layout = KeyLayout::new(*n as u32, *b);
        let blocks = Blocks::new(bytes, *lanes, layout);
        let mut keys = std::vec![0u64; Work::words(*n as u32)];
        let count = (*lanes).min(CHUNK);
        let digits = &digits[..count];
        let (found, ties) = group.search(&blocks, Work::new(&mut keys, *n as u32), 0, digits);
        for (lane, &x) in digits.iter().enumerate() {
            let mut keys: Vec<u64> = (0..*n).map(|k| blocks.key(lane, k)).collect();
            keys.sort_unstable();
            let expected = keys[x as usize];
            let tied = !layout.exact()
                && keys
                    .iter()
                    .filter(|&&k| layout.same_lead(k, expected))
                    .count()
                    > 1;
            // With ties, the found key is the shared leading bits and no index in particular.
            if !tied {
                prop_assert_eq!(
                    found[lane],
                    expected,
                    "lane {} of {}, n {}, b {}",
                    lane,
                    lanes,
                    n,
                    b
                );
            }
            prop_assert_eq!(
                ties >> lane & 1 == 1,
                tied,
                "lane {} of {}, n {}, b {}",
                lane,
                lanes,
                n,
                b
            );
        }
        prop_assert_eq!(ties >> count, 0);
        Ok(())
    }

    #[test]
    fn constant_time_search_at_its_largest_radix() {
        // Every key lies below the top candidates, so a count of n must not wrap; x = n − 1
        // is the key that only they would pass. At the largest radix of the quarter search,
        // and of the octet search (byte counts; exact keys, and an index filling an octet).
        for (n, b, lanes) in [
            (CONSTANT_TIME_MAX_RADIX as usize, 4, 3),
            (256, 4, 9),
            (256, 16, 8),
        ] {
            let bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
            let digits = (0..lanes as u32).map(|l| [n as u32 - 1, 0, n as u32 / 2][l as usize % 3]);
            let case = (lanes, n, b, bytes, digits.collect());
            for group in ConstantTimeGroup::available().into_iter().flatten() {
                let forward =
                    move |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.select(b, w, d, true);
                check(&case, &[("constant-time group forward", &forward, true)]).unwrap();
                check_search(group, &case).unwrap();
            }
        }
    }

    /// Keystream bytes from a fixed xorshift, for cases that need keys all different.
    fn noise(len: usize) -> Vec<u8> {
        noise_from(0x9e37_79b9_7f4a_7c15, len)
    }

    /// Keystream bytes from a xorshift started at `seed` (its top bit set, so never zero).
    pub(super) fn noise_from(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed | 1 << 63;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 56) as u8
            })
            .collect()
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn lead_octets_settle_distinct_leads_and_leave_shared_ones() {
        // The proptests' tiny alphabets tie leading octets nearly always, so the fast AVX2
        // search of the leading octets alone is checked here to answer when keys differ there
        // (a whole chunk, and one of five lanes) and to give up when they do not.
        let Some(avx2) = crate::select::avx2::Avx2::detect() else {
            return;
        };
        for (n, b, lanes) in [(100usize, 16usize, 8usize), (255, 18, 5), (17, 16, 8)] {
            let mut bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
            let digits: Vec<u32> = (0..lanes as u32).map(|l| (l * 37 + 5) % n as u32).collect();
            let mut keys = std::vec![0u64; Work::words(n as u32)];
            let blocks = Blocks::new(&bytes, lanes, KeyLayout::new(n as u32, b));
            let work = Work::new(&mut keys, n as u32);
            let found = avx2
                .lead_octets(&blocks, work, 0, &digits)
                .expect("distinct leads");
            for (lane, &x) in digits.iter().enumerate() {
                let pi = plain_permutation(&lane_stream(&bytes, lanes, lane), n, b);
                assert_eq!(found[lane], pi[x as usize], "n {n} lane {lane}");
            }
            // Lane 1's values all start with two zero bytes: its key of rank x shares them.
            for k in 0..n {
                set_byte(&mut bytes, (lanes, 1, b), k, 0, 0);
                set_byte(&mut bytes, (lanes, 1, b), k, 1, 0);
            }
            let blocks = Blocks::new(&bytes, lanes, KeyLayout::new(n as u32, b));
            let work = Work::new(&mut keys, n as u32);
            assert_eq!(avx2.lead_octets(&blocks, work, 0, &digits), None);
            let case = (lanes, n, b, bytes, digits);
            for group in Group::available().into_iter().flatten() {
                let forward = |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.forward(b, w, d);
                check(&case, &[("group forward", &forward, true)]).unwrap();
            }
        }
    }

    /// Sets byte `j` of value `k` of lane `lane` in a keystream of `lanes` lanes.
    fn set_byte(
        bytes: &mut [u8],
        (lanes, lane, b): (usize, usize, usize),
        k: usize,
        j: usize,
        to: u8,
    ) {
        let offset = k * b + j;
        bytes[((offset / 16) * lanes + lane) * 16 + offset % 16] = to;
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn gathered_search_answers_up_to_four_keys_sharing_leading_octets() {
        // Noise keys share no leading octets, and the proptests' tiny alphabets share them
        // among more keys than are gathered, so the gathered search's own cases are made here:
        // lane 1's smallest keys share the octets searched before the gathering (two up to
        // radix 64, else three) with 1 to 5 others (spread over quads and rows), two of them all
        // eight octets if `tie` (a tie of leading bits).
        let Some(avx2) = crate::select::avx2::Avx2::detect() else {
            return;
        };
        for (n, b, lanes) in [
            (100usize, 16usize, 8usize),
            (255, 18, 5),
            (17, 16, 8),
            (32, 16, 3),
            (33, 16, 8),
            (64, 18, 6),
            (65, 16, 8),
            (256, 16, 8),
        ] {
            let lead = if n <= crate::select::avx2::GATHER_AFTER_TWO_MAX_RADIX {
                2
            } else {
                3
            };
            let cases = (1..=5usize).flat_map(|sharing| {
                [false, true].map(|tie| [false, true].map(|top| (sharing, tie, top)))
            });
            for (sharing, tie, top) in cases.flatten() {
                let mut bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
                let shared = [n - 1, 2, 7, n / 2 + 1, 5];
                // At the top, the padding rows share the leading octets too.
                let prefix = if top { 0xff } else { 0 };
                for (i, &k) in shared[..sharing].iter().enumerate() {
                    for j in 0..lead {
                        set_byte(&mut bytes, (lanes, 1, b), k, j, prefix);
                    }
                    // The first two are the smallest of them, and tied if `tie`.
                    let next = if i < 2 { 0x5a } else { 0xf0 + i as u8 };
                    set_byte(&mut bytes, (lanes, 1, b), k, lead, next);
                    if tie && i < 2 {
                        for j in lead + 1..8 {
                            set_byte(&mut bytes, (lanes, 1, b), k, j, 0x5a);
                        }
                    }
                }
                let mut digits: Vec<u32> =
                    (0..lanes as u32).map(|l| (l * 37 + 5) % n as u32).collect();
                let smallest = if top { n - sharing } else { 0 } as u32;
                digits[1] = smallest + (sharing as u32 - 1).min(1);
                let mut keys = std::vec![0u64; Work::words(n as u32)];
                let blocks = Blocks::new(&bytes, lanes, KeyLayout::new(n as u32, b));
                let gathered =
                    avx2.search_gathered(&blocks, Work::new(&mut keys, n as u32), 0, &digits);
                assert_eq!(gathered.is_some(), sharing <= 4, "n {n}, {sharing} sharing");
                if let Some((_, ties)) = gathered {
                    assert_eq!(
                        ties,
                        u32::from(tie && sharing >= 2) << 1,
                        "n {n}, {sharing}"
                    );
                }
                let case = (lanes, n, b, bytes, digits);
                for group in ConstantTimeGroup::available().into_iter().flatten() {
                    check_search(group, &case).unwrap();
                    let forward = move |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| {
                        group.select(b, w, d, true)
                    };
                    check(&case, &[("constant-time group forward", &forward, true)]).unwrap();
                }
            }
        }
    }

    #[test]
    fn plane_search_ranks_the_keys_that_share_two_octets() {
        // Constant-time π over planes gathers the keys that share the two octets it finds, up
        // to four (radix 64) or five, and the fast one picks a lane whose key shares them from
        // its whole keys: in every lane, the smallest (or largest) keys share their two leading
        // octets with 0 to 5 others, two of them all eight octets if `tie`, and each of them is a
        // lane's key of rank x in turn. One more than are gathered takes the constant-time
        // search over all octets. At b = 17 to 19 the keys start at many bytes of a block,
        // some with their leading word in two blocks.
        let lanes = MAX_LANES;
        let unaligned = [(58, 17), (100, 18), (255, 19)];
        for (n, b) in [(17usize, 16usize), (64, 32), (65, 16), (100, 16), (255, 16)]
            .into_iter()
            .chain(unaligned)
        {
            let cases = (1..=6usize).flat_map(|sharing| {
                [false, true].map(|tie| [false, true].map(|top| (sharing, tie, top)))
            });
            for (sharing, tie, top) in cases.flatten() {
                let mut bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
                let shared = [n - 1, 2, 7, n / 2 + 1, 5, n / 3];
                let prefix = if top { 0xff } else { 0 };
                for (lane, (i, &k)) in (0..lanes)
                    .flat_map(|l| shared[..sharing].iter().enumerate().map(move |s| (l, s)))
                {
                    set_byte(&mut bytes, (lanes, lane, b), k, 0, prefix);
                    set_byte(&mut bytes, (lanes, lane, b), k, 1, prefix ^ 1);
                    // Lanes differ in which of the keys is the smallest.
                    let third = 0x10 * ((i + lane) % sharing) as u8 + 0x08;
                    set_byte(&mut bytes, (lanes, lane, b), k, 2, third);
                    if tie && i < 2 {
                        set_byte(&mut bytes, (lanes, lane, b), k, 2, 0x5a);
                        for j in 3..8 {
                            set_byte(&mut bytes, (lanes, lane, b), k, j, 0x5a);
                        }
                    }
                }
                let smallest = if top { n - sharing } else { 0 };
                check_each_rank((lanes, n, b), &bytes, smallest..smallest + sharing);
            }
        }
    }

    /// Each of the keys of `ranks` (which share their two leading octets in every lane) as a
    /// lane's key of rank x in turn, forward: by the constant-time kernels, by the fast ones up
    /// to their largest radix (they pick such a lane from its whole keys), and the keys the
    /// constant-time ranking finds.
    fn check_each_rank(
        (lanes, n, b): (usize, usize, usize),
        bytes: &[u8],
        ranks: core::ops::Range<usize>,
    ) {
        let sharing = ranks.len() as u32;
        for rank in 0..sharing {
            let digits: Vec<u32> = (0..lanes as u32)
                .map(|l| ranks.start as u32 + (rank + l) % sharing)
                .collect();
            let case = (lanes, n, b, bytes.to_vec(), digits);
            for group in ConstantTimeGroup::available().into_iter().flatten() {
                let forward =
                    move |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.select(b, w, d, true);
                check(&case, &[("constant-time group forward", &forward, true)]).unwrap();
            }
            // The fast group kernel runs up to its largest radix.
            let fast = Group::available().into_iter().flatten();
            for group in fast.filter(|_| n <= MAX_RADIX as usize) {
                let forward = |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.forward(b, w, d);
                check(&case, &[("group forward", &forward, true)]).unwrap();
            }
            #[cfg(target_arch = "x86_64")]
            check_plane_ranked(&case).unwrap();
        }
    }

    #[test]
    fn plane_ranking_finds_a_key_of_all_ones_among_those_gathered() {
        // Over planes, constant-time π ranks the keys that share two octets in slots where
        // unused ones hold all ones. At radices of a power of two a key can be all ones too (its
        // leading bytes 0xff, its index the largest): in every lane, value n - 1 is that key and
        // 1 to 4 others share its two leading octets, and each of them is a lane's key of rank x
        // in turn.
        let lanes = MAX_LANES;
        for n in [128usize, 256] {
            let b = 16;
            for sharing in 2..=5usize {
                let mut bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
                let shared = [n - 1, 3, n / 2, 9, n - 2];
                // The noise's keys that start with 0xff as well, moved out of the way.
                for lane in 0..lanes {
                    for k in 0..n {
                        if bytes[(k * lanes + lane) * 16] == 0xff {
                            set_byte(&mut bytes, (lanes, lane, b), k, 0, 0x7f);
                        }
                    }
                }
                for (lane, (i, &k)) in (0..lanes)
                    .flat_map(|l| shared[..sharing].iter().enumerate().map(move |s| (l, s)))
                {
                    for j in 0..8 {
                        let byte = if i == 0 {
                            0xff
                        } else {
                            0xff - (j / 2) as u8 * i as u8
                        };
                        set_byte(&mut bytes, (lanes, lane, b), k, j, byte);
                    }
                }
                check_each_rank((lanes, n, b), &bytes, n - sharing..n);
            }
        }
    }

    #[test]
    fn fast_plane_search_picks_among_keys_that_share_the_first_octet() {
        // Fast π over planes takes the second octet of the key of rank x from the two least and
        // two greatest of those that share its first octet, else (a middle rank among five or
        // more) picks the lane from its whole keys: in every lane 1 to 7 keys share the least
        // first octet, their second octets distinct or two of them equal (`tie`), and each is a
        // lane's key of rank x in turn.
        let lanes = MAX_LANES;
        for (n, b) in [(17usize, 16usize), (100, 16), (129, 16), (255, 32)] {
            for (sharing, tie) in (1..=7usize).flat_map(|s| [(s, false), (s, true)]) {
                let mut bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
                // The noise's keys that start with 0 as well, moved out of the way.
                for lane in 0..lanes {
                    for k in 0..n {
                        let at = k * b;
                        if bytes[((at / 16) * lanes + lane) * 16 + at % 16] == 0 {
                            set_byte(&mut bytes, (lanes, lane, b), k, 0, 0x80);
                        }
                    }
                }
                let shared = [n - 1, 2, 7, n / 2 + 1, 5, 11, n / 2 + 2];
                for (lane, (i, &k)) in (0..lanes)
                    .flat_map(|l| shared[..sharing].iter().enumerate().map(move |s| (l, s)))
                {
                    set_byte(&mut bytes, (lanes, lane, b), k, 0, 0);
                    // Lanes differ in which of the keys is the least.
                    let second = 0x20 * ((i + lane) % sharing) as u8 + 0x10;
                    let second = if tie && i < 2 { 0x33 } else { second };
                    set_byte(&mut bytes, (lanes, lane, b), k, 1, second);
                }
                for rank in 0..sharing as u32 {
                    let digits: Vec<u32> = (0..lanes as u32)
                        .map(|l| (rank + l) % sharing as u32)
                        .collect();
                    let case = (lanes, n, b, bytes.clone(), digits);
                    for group in Group::available().into_iter().flatten() {
                        let forward =
                            |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.forward(b, w, d);
                        check(&case, &[("group forward", &forward, true)]).unwrap();
                    }
                }
            }
        }
    }

    /// The keys of rank x and ties that constant-time π over planes finds before it picks the
    /// digits, against a sort of each lane's keys (as [`check_search`]), with AVX-512's ranking
    /// and without: a tie flagged where none is would cost no wrong result, only time that
    /// depends on the keys. A chunk where a lane has more keys that share its key's two octets
    /// than are gathered has none. A key of all ones may be flagged tied (AVX-512's ranking
    /// cannot place it): the branch that follows is taken with probability below n·2^-56 a
    /// lane and step.
    #[cfg(target_arch = "x86_64")]
    fn check_plane_ranked(
        (lanes, n, b, bytes, digits): &(usize, usize, usize, Vec<u8>, Vec<u32>),
    ) -> Result<(), TestCaseError> {
        let most = if *n <= 64 { 4 } else { 5 };
        let Some(avx2) = crate::select::avx2::Avx2::detect() else {
            return Ok(());
        };
        let layout = KeyLayout::new(*n as u32, *b);
        let mut octets = std::vec![0u64; Planes::words(*n as u32, *lanes)];
        let mut mids = std::vec![0u64; Middles::words(*n as u32, *lanes)];
        let middles = middles_isa();
        let (rows, _) = bytes.as_chunks::<16>();
        for (j, row) in rows
            .chunks_exact(*lanes)
            .take((*n * *b).div_ceil(16))
            .enumerate()
        {
            let beside = middles.map(|middles| (middles, &mut mids[..]));
            Planes(LoopIsa::detect(avx2)).make(&layout, j, row, &mut octets, beside);
        }
        let planes = Blocks::new(bytes, *lanes, layout).with_planes(&octets);
        let with_middles = Blocks::new(bytes, *lanes, layout)
            .with_planes(&octets)
            .with_middles(&mids);
        let mut keys = std::vec![0u64; Work::words(*n as u32)];
        let avx512 = crate::select::avx512::Avx512::detect();
        // AVX-512 ranks from the middles where they are made, else as AVX2 does from the
        // keystream.
        let ways = [
            (avx512, &planes),
            (None, &planes),
            (avx512.filter(|_| middles.is_some()), &with_middles),
        ];
        for (c, (wide, blocks)) in (0..lanes / PLANE_LANES).flat_map(|c| ways.map(|w| (c, w))) {
            let by_middles = blocks.middles.is_some();
            if by_middles && wide.is_none() {
                continue;
            }
            let x = digits[c * PLANE_LANES..][..PLANE_LANES].try_into().unwrap();
            let work = Work::new(&mut keys, *n as u32);
            let ranked = avx2.plane_ranked(blocks, work, c, x, wide);
            for (chunk, ranked) in ranked.iter().enumerate() {
                let lanes = c * PLANE_LANES + chunk * CHUNK..;
                let sorted: Vec<Vec<u64>> = lanes
                    .take(CHUNK)
                    .map(|lane| {
                        let mut keys: Vec<u64> = (0..*n).map(|k| blocks.key(lane, k)).collect();
                        keys.sort_unstable();
                        keys
                    })
                    .collect();
                let gathered = sorted.iter().enumerate().all(|(l, keys)| {
                    let x = keys[digits[c * PLANE_LANES + chunk * CHUNK + l] as usize];
                    keys.iter().filter(|&&k| k >> 48 == x >> 48).count() <= most
                });
                prop_assert_eq!(ranked.is_some(), gathered, "chunk {} of {}", chunk, c);
                let Some((found, ties)) = ranked else {
                    continue;
                };
                for (l, keys) in sorted.iter().enumerate() {
                    let lane = c * PLANE_LANES + chunk * CHUNK + l;
                    let expected = keys[digits[lane] as usize];
                    // From the middles, a tie is one of the six leading octets.
                    let tie = |k: u64| match by_middles {
                        true => k >> 16 == expected >> 16,
                        false => layout.same_lead(k, expected),
                    };
                    let tied = keys.iter().filter(|&&k| tie(k)).count() > 1;
                    let at = std::format!(
                        "lane {lane}, n {n}, b {b}, AVX-512 {}, middles {by_middles}",
                        wide.is_some()
                    );
                    // AVX-512's ranking from the keystream also flags a key of all ones that it
                    // cannot place (see its `rank_kept`), which only a power-of-two radix has.
                    let flagged = ties >> l & 1 == 1;
                    let all_ones = expected == u64::MAX && !by_middles;
                    prop_assert!(flagged == tied || flagged && all_ones, "{}", at);
                    // The middles' ranking finds only the key's index.
                    let expected = match by_middles {
                        true => layout.index(expected) as u64,
                        false => expected,
                    };
                    if !flagged {
                        prop_assert_eq!(found[l], expected, "{}", at);
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn narrow_keys_tie_where_whole_keys_do_not() {
        // The fast passes up to radix 16 compare 32-bit keys (the value's leading 28 bits or
        // so). Noise keys share them about once in 2^25 steps, so here lane 3's values 1, 2 and
        // n - 1 share their four leading bytes and differ in the fifth (two of them the other
        // way round in the next 32 bits), straddling a block for b = 18; every x of every lane
        // is checked, forward and back, whole chunks and a last one of fewer lanes.
        for (n, b, lanes) in [
            (10usize, 18usize, 16usize),
            (16, 16, 16),
            (5, 7, 19),
            (3, 4, 8),
        ] {
            let mut bytes = noise(((n * b).div_ceil(16) + 1) * lanes * 16);
            for (k, fifth) in [(1, 0x80), (2, 0x7f), (n - 1, 0x81)] {
                for j in 0..4 {
                    set_byte(&mut bytes, (lanes, 3, b), k, j, 0x3c);
                }
                if b > 4 {
                    set_byte(&mut bytes, (lanes, 3, b), k, 4, fifth);
                }
            }
            for x in 0..n as u32 {
                let digits: Vec<u32> = (0..lanes as u32).map(|l| (x + l) % n as u32).collect();
                let case = (lanes, n, b, bytes.clone(), digits);
                for group in Group::available().into_iter().flatten() {
                    let kernel = |forward| {
                        move |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| {
                            if forward {
                                group.forward(b, w, d)
                            } else {
                                group.inverse(b, w, d)
                            }
                        }
                    };
                    check(
                        &case,
                        &[
                            ("group forward", &kernel(true), true),
                            ("group inverse", &kernel(false), false),
                        ],
                    )
                    .unwrap();
                }
            }
        }
    }

    #[test]
    fn padding_does_not_tie_a_key_of_all_ones() {
        // A radix that is not a multiple of the rows stored together (two quarters, four
        // octets) pads the last rows with the largest values, which share the leading bits of a
        // value of all ones; searched for, that key must still be found alone.
        for n in [17usize, 18, 19, 255, 257] {
            let (lanes, b) = (1, 16usize);
            let mut bytes = std::vec![0u8; ((n * b).div_ceil(16) + 1) * 16];
            bytes[3 * b..4 * b].fill(0xff);
            let case = (lanes, n, b, bytes, std::vec![n as u32 - 1]);
            for group in ConstantTimeGroup::available().into_iter().flatten() {
                check_search(group, &case).unwrap();
            }
        }
    }

    #[test]
    fn sort16_sorts_every_input_of_zeros_and_ones() {
        // A network that sorts every input of zeros and ones sorts every input (Knuth's 0-1
        // principle).
        for bits in 0u32..1 << 16 {
            let mut items: [u8; 16] = core::array::from_fn(|i| (bits >> i & 1) as u8);
            sort16!(&mut items, |a, b| (a.min(b), a.max(b)));
            assert!(items.is_sorted(), "{bits:016b}");
        }
    }

    #[test]
    fn sort16_below_n_sorts_the_first_n_and_leaves_the_rest() {
        // Pruned to n, the network sorts the first n items (0-1 principle again) and never
        // touches the others, here smaller than any of them.
        for n in 1..=16usize {
            for bits in 0u32..1 << n {
                let mut items: [u8; 16] =
                    core::array::from_fn(|i| if i < n { 1 + (bits >> i & 1) as u8 } else { 0 });
                sort16!(&mut items, below n, |a, b| (a.min(b), a.max(b)));
                assert!(items[..n].is_sorted(), "n {n}, {bits:016b}");
                assert!(
                    items[n..].iter().all(|&item| item == 0),
                    "n {n}, {bits:016b}"
                );
            }
        }
    }

    #[test]
    fn forward_runs_avx2_above_radix_16_and_the_rest_the_widest_vectors() {
        let group = |forward, small, inverse| {
            Some(Group {
                forward,
                small,
                inverse,
                made_by: GroupIsa::made_by(),
            })
        };
        match GroupIsa::available() {
            [Some(avx512), Some(avx2)] => {
                assert_eq!(Group::detect(100), group(avx2, avx512, avx512));
                assert_eq!(Group::detect(MAX_RADIX), group(avx2, avx512, avx512));
                assert_eq!(Group::detect(MAX_RADIX + 1), group(avx2, avx512, avx2));
            }
            [None, Some(avx2)] => assert_eq!(Group::detect(100), group(avx2, avx2, avx2)),
            _ => {}
        }
        assert_eq!(Group::detect(MAX_RADIX + 2), None);
    }

    proptest! {
        #![proptest_config(super::cases(64))]

        #[test]
        fn every_loop_maker_lays_out_planes_and_keys_as_documented(
            (lanes, n, b) in (
                prop_oneof![Just(PLANE_LANES), Just(MAX_LANES), 1usize..=20],
                SMALL_RADIX + 1..=MAX_RADIX as usize,
                prop_oneof![Just(16usize), Just(32), 17usize..=31],
            ),
            seed in any::<u64>(),
        ) {
            // Planes: octet o of value k of lane 32c + plane_lane(p), top bit flipped, at byte
            // p of vector (2c + o)·n + k, wherever values start (b not a multiple of 16: from
            // any byte of a block, the last one included). Keys, where the maker covers the
            // step: the portable ones (checked against their definition below).
            let layout = KeyLayout::new(n as u32, b);
            let bytes = noise_from(seed, (n * b).div_ceil(16) * lanes * 16);
            let (rows, _) = bytes.as_chunks::<16>();
            let mut portable = std::vec![0u64; n * lanes];
            for (j, row) in rows.chunks_exact(lanes).enumerate() {
                make_row_keys(&layout, j, row, &mut portable);
            }
            #[cfg(target_arch = "x86_64")]
            for isa in LoopIsa::available().into_iter().flatten() {
                let made_keys = MadeKeys(isa).covers(&layout);
                let mut keys = std::vec![0u64; n * lanes];
                let mut octets = std::vec![0u64; Planes::words(n as u32, lanes)];
                let mut mids = std::vec![0u64; Middles::words(n as u32, lanes)];
                let middles = match isa {
                    LoopIsa::Vbmi(vbmi) => Some(Middles(vbmi)),
                    LoopIsa::Avx2(_) => None,
                };
                for (j, row) in rows.chunks_exact(lanes).enumerate() {
                    if made_keys {
                        MadeKeys(isa).make(&layout, j, row, &mut keys);
                    }
                    if lanes.is_multiple_of(PLANE_LANES) {
                        let beside = middles.map(|middles| (middles, &mut mids[..]));
                        Planes(isa).make(&layout, j, row, &mut octets, beside);
                    }
                }
                // Middles: octets 2 to 5 of value k of lane 32c + 8q + ORDER[w], a big-endian
                // u32, at u32 32(cn + k) + 8q + w.
                const ORDER: [usize; CHUNK] = [0, 2, 4, 6, 1, 3, 5, 7];
                for (c, k, i) in (0..lanes / PLANE_LANES).filter(|_| middles.is_some()).flat_map(
                    |c| (0..n).flat_map(move |k| (0..PLANE_LANES).map(move |i| (c, k, i))),
                ) {
                    let lane = c * PLANE_LANES + i / CHUNK * CHUNK + ORDER[i % CHUNK];
                    let octet = |o: usize| {
                        let at = k * b + o;
                        rows[at / 16 * lanes + lane][at % 16]
                    };
                    let expected = u32::from_be_bytes([octet(2), octet(3), octet(4), octet(5)]);
                    let at = 32 * (c * n + k) + i;
                    let made = (mids[at / 2] >> (32 * (at % 2))) as u32;
                    prop_assert_eq!(made, expected, "(lane, value) {:?}", (lane, k));
                }
                if made_keys {
                    prop_assert_eq!(&keys, &portable, "{:?}", isa);
                }
                let (vectors, _) = octets.as_chunks::<4>();
                for (c, o, k, p) in (0..lanes / PLANE_LANES).flat_map(|c| {
                    (0..2).flat_map(move |o| {
                        (0..n).flat_map(move |k| (0..PLANE_LANES).map(move |p| (c, o, k, p)))
                    })
                }) {
                    let lane = c * PLANE_LANES + plane_lane(p);
                    let at = k * b + o;
                    let expected = rows[at / 16 * lanes + lane][at % 16] ^ 0x80;
                    let made = (vectors[(2 * c + o) * n + k][p / 8] >> (8 * (p % 8))) as u8;
                    let at = (isa, lane, o, k);
                    prop_assert_eq!(made, expected, "(isa, lane, octet, value) {:?}", at);
                }
            }
        }

        #[test]
        fn every_key_maker_makes_each_values_key(
            (lanes, n, b) in (
                prop_oneof![Just(CHUNK), Just(MAX_LANES), 1usize..=20],
                2..=MADE_KEYS_MAX_RADIX as usize,
                prop_oneof![1usize..=40, Just(16), Just(32), Just(48)],
            ),
            seed in any::<u64>(),
            stale in any::<u64>(),
        ) {
            // Key k of lane l at k·lanes + l, made row by row over what the scratch held (its
            // bytes past a short value's, and those a straddling value's first row picks from
            // the next block, must not survive), by the portable maker and each one this CPU
            // runs that covers the step.
            let layout = KeyLayout::new(n as u32, b);
            let rows_of_blocks = (n * b).div_ceil(16);
            let bytes = noise_from(seed, (rows_of_blocks + 1) * lanes * 16);
            let blocks = Blocks::new(&bytes, lanes, layout);
            let expected: Vec<u64> = (0..n)
                .flat_map(|k| (0..lanes).map(move |l| (k, l)))
                .map(|(k, l)| blocks.key(l, k))
                .collect();
            // Only the step's rows are made: the slack row after them is not.
            let (rows, _) = bytes[..rows_of_blocks * lanes * 16].as_chunks::<16>();
            let mut portable = std::vec![stale; n * lanes];
            for (j, row) in rows.chunks_exact(lanes).enumerate() {
                make_row_keys(&layout, j, row, &mut portable);
            }
            prop_assert_eq!(&portable, &expected, "portable");
            #[cfg(target_arch = "x86_64")]
            for isa in LoopIsa::available().into_iter().flatten() {
                if !MadeKeys(isa).covers(&layout) {
                    continue;
                }
                let mut keys = std::vec![stale; n * lanes];
                for (j, row) in rows.chunks_exact(lanes).enumerate() {
                    MadeKeys(isa).make(&layout, j, row, &mut keys);
                }
                prop_assert_eq!(&keys, &expected, "{:?}", isa);
            }
        }

        #[test]
        fn every_path_matches_a_plain_sort(case in group()) {
            // The portable passes on every CPU (their bucket counts are bytes); each group
            // kernel this CPU runs, up to its largest radix.
            let portable: [(&str, Select<'_>, bool); 2] = [
                ("portable forward", &forward_any, true),
                ("portable inverse", &inverse_any, false),
            ];
            if case.1 <= MAX_RADIX as usize {
                check(&case, &portable)?;
            }
            let reached = |group: &Group| case.1 <= group.max_radix() as usize;
            for group in Group::available().into_iter().flatten().filter(reached) {
                let kernel = |forward| move |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| {
                    if forward { group.forward(b, w, d) } else { group.inverse(b, w, d) }
                };
                check(&case, &[("group forward", &kernel(true), true), ("group inverse", &kernel(false), false)])?;
            }
            // The constant-time passes, at every radix (and the search's found keys and ties).
            for group in ConstantTimeGroup::available().into_iter().flatten() {
                let select = |forward| move |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| {
                    group.select(b, w, d, forward)
                };
                check(&case, &[
                    ("constant-time group inverse", &select(false), false),
                    ("constant-time group forward", &select(true), true),
                ])?;
                if case.1 > SMALL_RADIX {
                    check_search(group, &case)?;
                }
            }
        }

        #[test]
        fn small_radices_match_a_plain_sort(case in group_of(2..=SMALL_RADIX)) {
            // Each radix up to SMALL_RADIX compiles its own pruned network: all of them, often,
            // in both modes.
            for group in Group::available().into_iter().flatten() {
                let forward = |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.forward(b, w, d);
                check(&case, &[("group forward", &forward, true)])?;
            }
            for group in ConstantTimeGroup::available().into_iter().flatten() {
                let forward =
                    |b: &Blocks<'_>, w: Work<'_>, d: &mut [u32]| group.select(b, w, d, true);
                check(&case, &[("constant-time group forward", &forward, true)])?;
            }
        }
    }
}
