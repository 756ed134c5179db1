//! Shared set-up of the benches: the key, the tweak, the configurations and fixed inputs, and
//! the allocation counting the report shows next to the times.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cipher::consts::U16;
use cipher::{
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, ParBlocks,
};
use criterion::measurement::WallTime;
use criterion::{Bencher, BenchmarkGroup, BenchmarkId};

/// The benches' key (hex `0123456789abcdef0123456789abcdef`).
pub const KEY: [u8; 16] = [
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
];

/// The benches' tweak (hex `0011223344556677`).
pub const TWEAK: [u8; 8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77];

/// A domain as the reference's benchmark names it.
#[derive(Clone, Copy, Debug)]
pub enum Config {
    /// Riffpe(n, l) with `bytes_per_value`.
    Riffpe(u32, usize, usize),
    /// RiffpeX(radices) with 16 bytes per value.
    RiffpeX(&'static [u32]),
}

/// One row of the per-op table: a label and its configuration for 6, 9 and 16 decimal digits.
#[derive(Debug)]
pub struct Row {
    /// Row label (the criterion function id).
    pub label: &'static str,
    /// `(decimal digits, configuration)`.
    pub configs: &'static [(u32, Config)],
}

/// The reference's 128-bit configurations plus Riffpe(100, 8) with 16 bytes per value.
pub const ROWS: &[Row] = &[
    Row {
        label: "Riffpe n=10 b=18",
        configs: &[
            (6, Config::Riffpe(10, 6, 18)),
            (9, Config::Riffpe(10, 9, 18)),
            (16, Config::Riffpe(10, 16, 18)),
        ],
    },
    Row {
        label: "Riffpe n=100 b=18",
        configs: &[
            (6, Config::Riffpe(100, 3, 18)),
            (16, Config::Riffpe(100, 8, 18)),
        ],
    },
    Row {
        label: "Riffpe n=1000 b=19",
        configs: &[
            (6, Config::Riffpe(1000, 2, 19)),
            (9, Config::Riffpe(1000, 3, 19)),
        ],
    },
    Row {
        label: "RiffpeX small radices",
        configs: &[
            (6, Config::RiffpeX(&[25, 25, 40, 40])),
            (9, Config::RiffpeX(&[25, 25, 25, 40, 40, 40])),
            (
                16,
                Config::RiffpeX(&[25, 25, 25, 25, 25, 25, 25, 32, 32, 40, 40]),
            ),
        ],
    },
    Row {
        label: "RiffpeX large radices",
        configs: &[
            (6, Config::RiffpeX(&[100, 100, 100])),
            (9, Config::RiffpeX(&[50, 50, 50, 80, 100])),
            (16, Config::RiffpeX(&[50, 50, 50, 50, 50, 50, 80, 80, 100])),
        ],
    },
    Row {
        label: "Riffpe n=100 b=16",
        configs: &[(16, Config::Riffpe(100, 8, 16))],
    },
];

/// A random but fixed 64-bit sequence (SplitMix64).
pub fn fixed_random(seed: u64, count: usize) -> Vec<u64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// `blocks` AES encryptions, each of the previous output, inside one backend closure: the
/// latency floor of a Riffpe message that needs that many chained blocks.
pub fn aes_chain<C: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &C,
    blocks: usize,
    block: &mut [u8; 16],
) {
    struct Chain<'a> {
        blocks: usize,
        block: &'a mut [u8; 16],
    }
    impl BlockSizeUser for Chain<'_> {
        type BlockSize = U16;
    }
    impl BlockCipherEncClosure for Chain<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
            let mut state = cipher::Array(*self.block);
            for _ in 0..self.blocks {
                backend.encrypt_block_inplace(&mut state);
            }
            *self.block = state.0;
        }
    }
    cipher.encrypt_with_backend(Chain { blocks, block });
}

/// `blocks` chained AES encryptions in each of the backend's parallel lanes at once (one
/// `encrypt_par_blocks` call per step, as many lanes as `riffpe::Fpe::lanes` reports), inside
/// one backend closure: the throughput floor of lockstep, which can gain at most this rate over
/// [`aes_chain`].
///
/// Its closure is a near-copy of [`aes_chain`]'s on purpose: one closure serving both (a flag,
/// or one inlined function per loop) made the single chain keep its state in memory between
/// blocks, which slowed `aes_chain`.
pub fn aes_lanes<C: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &C,
    blocks: usize,
    block: &mut [u8; 16],
) {
    struct Lanes<'a> {
        blocks: usize,
        block: &'a mut [u8; 16],
    }
    impl BlockSizeUser for Lanes<'_> {
        type BlockSize = U16;
    }
    impl BlockCipherEncClosure for Lanes<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
            let mut states = seeded::<B>(self.block);
            for _ in 0..self.blocks {
                backend.encrypt_par_blocks_inplace(&mut states);
            }
            fold(&states, self.block);
        }
    }
    cipher.encrypt_with_backend(Lanes { blocks, block });
}

/// The backend's parallel lanes, each `block` with its lane number in byte 0.
#[inline(always)]
fn seeded<B: BlockCipherEncBackend<BlockSize = U16>>(block: &[u8; 16]) -> ParBlocks<B> {
    let mut states = ParBlocks::<B>::default();
    for (lane, state) in states.iter_mut().enumerate() {
        *state = cipher::Array(*block);
        state[0] ^= lane as u8;
    }
    states
}

/// XORs every lane's state into `block`, so that no lane's work can be left out.
#[inline(always)]
fn fold(states: &[cipher::Block<aes::Aes128>], block: &mut [u8; 16]) {
    for state in states {
        for (out, x) in block.iter_mut().zip(state.iter()) {
            *out ^= x;
        }
    }
}

/// Where [`aes_lanes_with_passes`] runs its selection-like passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passes {
    /// After each step's AES rows, as lockstep selects today.
    After,
    /// Spread between the step's AES rows, so that the core could run them beside the rounds.
    Between,
}

/// Lanes of [`aes_lanes_with_passes`]' planes: one byte a lane, as the group kernel's.
const PLANE_LANES: usize = 64;

/// [`aes_lanes`] in `steps` steps of `rows` chained blocks, with `passes` passes per step of
/// the kind the group kernel's bitwise search over planes makes, over 100 rows of 64 one-byte
/// values (each pass counts, per lane, the values below a candidate, then moves the candidate
/// by the count), run as `at` says. Against [`aes_lanes`] it tells whether
/// selection's vector work hides behind the AES rounds on this CPU (`Between` near `aes_lanes`)
/// or adds to them (`Between` near `After`, or above it).
pub fn aes_lanes_with_passes<C: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &C,
    (steps, rows, passes): (usize, usize, usize),
    at: Passes,
    block: &mut [u8; 16],
) {
    struct Lanes<'a> {
        shape: (usize, usize, usize),
        at: Passes,
        block: &'a mut [u8; 16],
    }
    impl BlockSizeUser for Lanes<'_> {
        type BlockSize = U16;
    }
    impl BlockCipherEncClosure for Lanes<'_> {
        fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
            let (steps, rows, passes) = self.shape;
            let mut states = seeded::<B>(self.block);
            let planes: [[i8; PLANE_LANES]; 100] = core::array::from_fn(|k| {
                core::array::from_fn(|l| ((k * 37 + l * 11) as u8 ^ self.block[0]) as i8)
            });
            let mut candidate = [0i8; PLANE_LANES];
            for _ in 0..steps {
                let mut done = 0;
                for row in 0..rows {
                    backend.encrypt_par_blocks_inplace(&mut states);
                    if self.at == Passes::Between {
                        while done < (row + 1) * passes / rows {
                            search_pass(&planes, &mut candidate);
                            done += 1;
                        }
                    }
                }
                for _ in done..passes {
                    search_pass(&planes, &mut candidate);
                }
            }
            fold(&states, self.block);
            for (out, x) in self.block.iter_mut().zip(candidate.chunks(4)) {
                *out ^= x.iter().fold(0, |a, &b| a ^ b as u8);
            }
        }
    }
    let shape = (steps, rows, passes);
    cipher.encrypt_with_backend(Lanes { shape, at, block });
}

/// One pass of [`aes_lanes_with_passes`]: per lane, the values below its candidate, by which
/// the candidate then moves. Signed bytes, as the kernel's sign-flipped octets, so that a
/// compare is one instruction.
#[inline(always)]
fn search_pass(planes: &[[i8; PLANE_LANES]; 100], candidate: &mut [i8; PLANE_LANES]) {
    // Four sums, each its own registers, so that no add waits on the one before (as the
    // kernel's passes).
    let mut sums = [[0i8; PLANE_LANES]; 4];
    let (fours, _) = planes.as_chunks::<4>();
    for four in fours {
        for (sum, row) in sums.iter_mut().zip(four) {
            for ((sum, &value), &candidate) in sum.iter_mut().zip(row).zip(candidate.iter()) {
                // At most 25 a sum: no overflow.
                *sum += i8::from(value < candidate);
            }
        }
    }
    let below: [i8; PLANE_LANES] =
        core::array::from_fn(|l| sums[0][l] + sums[1][l] + sums[2][l] + sums[3][l]);
    for (candidate, below) in candidate.iter_mut().zip(below) {
        *candidate ^= below;
    }
}

/// Raw VAES-256 rounds, for timing only: `blocks` chained 10-round AES encryptions (AES-128's
/// shape, with made-up round keys) in `2·YMM` independent chains, two to a `ymm` register,
/// with only the rounds in the loop (round keys that do not fit in registers are read from
/// the stack). It measures what the CPU's AES units sustain with that many blocks in flight,
/// to compare with the `aes` crate's backend ([`aes_lanes`]). `None` unless
/// [`vaes256_supported`].
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub fn vaes256_rounds<const YMM: usize>(blocks: usize, seed: u8) -> Option<u8> {
    if !vaes256_supported() {
        return None;
    }
    // SAFETY: `rounds` enables AVX2 and VAES only, and the CPU has both (checked above).
    Some(unsafe { rounds::<YMM>(blocks, seed) })
}

/// Whether this CPU has AVX2 and VAES, which [`vaes256_rounds`] needs.
#[cfg(target_arch = "x86_64")]
pub fn vaes256_supported() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("vaes")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,vaes")]
fn rounds<const YMM: usize>(blocks: usize, seed: u8) -> u8 {
    use std::arch::x86_64::{
        __m256i, _mm256_aesenc_epi128, _mm256_aesenclast_epi128, _mm256_extract_epi8,
        _mm256_set1_epi8, _mm256_xor_si256,
    };
    let mut keys = [_mm256_set1_epi8(0); 11];
    for (i, key) in keys.iter_mut().enumerate() {
        *key = _mm256_set1_epi8((i as u8).wrapping_mul(37) as i8);
    }
    let mut states: [__m256i; YMM] = [_mm256_set1_epi8(seed as i8); YMM];
    for (i, state) in states.iter_mut().enumerate() {
        *state = _mm256_xor_si256(*state, _mm256_set1_epi8(i as i8));
    }
    for _ in 0..blocks {
        for state in &mut states {
            *state = _mm256_xor_si256(*state, keys[0]);
        }
        for key in &keys[1..10] {
            for state in &mut states {
                *state = _mm256_aesenc_epi128(*state, *key);
            }
        }
        for state in &mut states {
            *state = _mm256_aesenclast_epi128(*state, keys[10]);
        }
    }
    let mut folded = states[0];
    for state in &states[1..] {
        folded = _mm256_xor_si256(folded, *state);
    }
    _mm256_extract_epi8::<0>(folded) as u8
}

/// Allocation calls (`alloc`, `alloc_zeroed`, `realloc`) made through [`CountingAllocator`].
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting its allocation calls: each bench binary installs it with
/// `#[global_allocator]`, so that [`Allocations`] can tell how many an operation makes.
#[derive(Debug)]
pub struct CountingAllocator;

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds
// `GlobalAlloc`'s contract; counting touches no memory handed out.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract, the same for `System`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc_zeroed`'s contract, the same for `System`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `realloc`'s contract; `ptr` came from `System` (every
        // allocation of this allocator does).
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `dealloc`'s contract; `ptr` came from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocation calls made so far through [`CountingAllocator`], on every thread (0 unless it is
/// the global allocator).
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// The allocation calls made while `f` runs (on every thread: alone in its test binary, a test
/// counts only its own).
pub fn allocations_made(f: impl FnOnce()) -> u64 {
    let before = allocations();
    f();
    allocations() - before
}

/// The allocations of one benchmark's operation, counted while criterion runs it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Allocations {
    /// Timing loops run, the first included.
    pub batches: u64,
    /// Operations counted: every batch's but the first's.
    pub operations: u64,
    /// Allocation calls those operations made.
    pub allocations: u64,
}

impl Allocations {
    /// Times `routine` as [`Bencher::iter`] does (the same loop), and counts the allocations
    /// made during the loop, reading the counter outside the timed part. The first loop is
    /// left out of the count: criterion's first warm-up run, a single operation, which also
    /// pays for what is made once (a thread pool, a lazy table).
    pub fn iter<O>(&mut self, b: &mut Bencher<'_, WallTime>, mut routine: impl FnMut() -> O) {
        b.iter_custom(|operations| {
            let before = allocations();
            let start = Instant::now();
            for _ in 0..operations {
                black_box(routine());
            }
            let elapsed = start.elapsed();
            let made = allocations() - before;
            if self.batches > 0 {
                self.operations += operations;
                self.allocations += made;
            }
            self.batches += 1;
            elapsed
        });
    }
}

/// Where a criterion group's allocation counts go: one JSON file per benchmark in
/// `riffpe-allocations/` of criterion's output directory, which `cargo xtask bench-report`
/// reads with criterion's results.
#[derive(Debug, Clone)]
pub struct AllocationLog {
    dir: PathBuf,
    group: String,
}

/// The directory of the allocation counts under criterion's output directory.
pub const ALLOCATIONS_DIR: &str = "riffpe-allocations";

impl AllocationLog {
    /// The log of group `group`. `target_tmpdir` is the bench binary's
    /// `env!("CARGO_TARGET_TMPDIR")` (`<target directory>/tmp`): the counts go where criterion
    /// writes, `$CRITERION_HOME` or else `<target directory>/criterion`.
    pub fn new(target_tmpdir: &str, group: &str) -> Self {
        let criterion = std::env::var_os("CRITERION_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let target = Path::new(target_tmpdir)
                    .parent()
                    .unwrap_or(Path::new("target"));
                target.join("criterion")
            });
        AllocationLog {
            dir: criterion.join(ALLOCATIONS_DIR),
            group: group.to_owned(),
        }
    }

    /// `group.bench_function` for the benchmark `function` (with `value`, the id's parameter,
    /// if any), whose body times with [`Allocations::iter`]; then writes the count, if
    /// criterion ran the benchmark (not filtered out, not in test mode).
    pub fn bench(
        &self,
        group: &mut BenchmarkGroup<'_, WallTime>,
        function: &str,
        value: Option<&str>,
        mut body: impl FnMut(&mut Bencher<'_, WallTime>, &mut Allocations),
    ) {
        let mut count = Allocations::default();
        let mut run = |b: &mut Bencher<'_, WallTime>| body(b, &mut count);
        match value {
            Some(value) => group.bench_function(BenchmarkId::new(function, value), &mut run),
            None => group.bench_function(function, &mut run),
        };
        if count.operations > 0 {
            self.save(function, value, &count)
                .expect("allocation count written");
        }
    }

    /// Writes `count` for the benchmark `function`/`value` of this group.
    fn save(&self, function: &str, value: Option<&str>, count: &Allocations) -> io::Result<()> {
        let id: String = [Some(self.group.as_str()), Some(function), value]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("/");
        std::fs::create_dir_all(&self.dir)?;
        let file = self.dir.join(allocation_file_name(&id));
        let text = format!(
            "{{\"group\":{},\"function\":{},\"value\":{},\"operations\":{},\"allocations\":{}}}\n",
            json_string(&self.group),
            json_string(function),
            value.map_or_else(|| "null".to_owned(), json_string),
            count.operations,
            count.allocations,
        );
        std::fs::write(file, text)
    }
}

/// A file name for the benchmark `id`: its letters and digits, and a hash of the whole id so
/// that ids differing only in other characters do not share a file.
fn allocation_file_name(id: &str) -> String {
    let readable: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    // FNV-1a.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{readable}-{hash:016x}.json")
}

/// `s` as a JSON string.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_one_file_per_benchmark() {
        let dir = std::env::temp_dir().join(format!("riffpe-benches-{}", std::process::id()));
        let log = AllocationLog {
            dir: dir.clone(),
            group: "latency-encrypt".to_owned(),
        };
        let count = Allocations {
            batches: 5,
            operations: 1000,
            allocations: 3000,
        };
        log.save("Riffpe \"n=10\" b=18", Some("6"), &count).unwrap();
        // The same letters and digits: another file all the same.
        log.save("Riffpe__n_10__b_18", Some("6"), &Allocations::default())
            .unwrap();
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
            .collect();
        files.sort();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            files,
            [
                "{\"group\":\"latency-encrypt\",\"function\":\"Riffpe \\\"n=10\\\" b=18\",\"value\":\"6\",\"operations\":1000,\"allocations\":3000}\n",
                "{\"group\":\"latency-encrypt\",\"function\":\"Riffpe__n_10__b_18\",\"value\":\"6\",\"operations\":0,\"allocations\":0}\n",
            ]
        );
    }
}
