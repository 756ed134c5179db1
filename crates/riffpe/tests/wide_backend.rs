//! Lockstep on an AES backend of 64 blocks at once, as the `aes` crate runs on CPUs with VAES
//! and AVX-512, on whatever CPU runs the tests: a cipher that hands the engine batches of 64
//! blocks and encrypts them one block at a time with `Aes`. The engine's groups of 64 lanes, the
//! keys it makes for them in the AES loop, their set-ups side by side where each message has a
//! tweak, and the selection kernels this CPU picks (AVX2's among them, which AVX-512 CPUs run
//! in constant time) must give exactly what one message at a time gives with `Aes` itself.

mod common;

use cipher::consts::{U16, U64};
use cipher::{
    Block, BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    ParBlocksSizeUser,
};
use common::{Params, SplitMix};
use riffpe::{Aes, AnyFpe, ScratchBuf, Selection, Tweak};

/// Blocks the wide backend takes at once.
const WIDE: usize = 64;

/// [`Aes`] behind a backend of [`WIDE`] blocks at once.
struct Wide(Aes);

impl BlockSizeUser for Wide {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Wide {
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        f.call(&WideBackend(&self.0));
    }
}

struct WideBackend<'a>(&'a Aes);

impl BlockSizeUser for WideBackend<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for WideBackend<'_> {
    type ParBlocksSize = U64;
}

impl BlockCipherEncBackend for WideBackend<'_> {
    // The trait's batch and tail methods call this block by block.
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        self.0.encrypt_block_inout(block);
    }
}

/// Riffpe (one radix) or RiffpeX (`radices`) in `selection`, with a fixed tweak: on the wide
/// backend, and as `build` makes it on `Aes`.
fn pair(
    radices: &[u32],
    b: usize,
    key: &[u8],
    selection: Selection,
) -> (AnyFpe<Vec<u32>, Wide>, AnyFpe) {
    let params = Params {
        mixed: radices.windows(2).any(|pair| pair[0] != pair[1]),
        radices,
        key,
        bytes_per_value: b,
    };
    let wide = Wide(Aes::new_from_slice(key).unwrap());
    (
        params.fpe_on(b"wide", selection, wide),
        params.fpe_with(b"wide", selection),
    )
}

/// Asserts that lockstep on the wide backend encrypts `messages` (`l` digits each) under
/// `tweak` to `expected`, and decrypts them back.
fn assert_lockstep(
    wide: &AnyFpe<Vec<u32>, Wide>,
    tweak: Tweak<'_>,
    messages: &[u32],
    expected: &[u32],
    l: usize,
    what: &str,
) {
    let mut buf = ScratchBuf::for_lockstep(wide);
    let mut many = messages.to_vec();
    wide.encrypt_with(tweak, &mut many, &mut buf.scratch())
        .unwrap();
    assert_eq!(
        first_difference(&many, expected, l),
        None,
        "{what}: encrypt"
    );
    wide.decrypt_with(tweak, &mut many, &mut buf.scratch())
        .unwrap();
    assert_eq!(
        first_difference(&many, messages, l),
        None,
        "{what}: decrypt"
    );
}

#[test]
fn sixty_four_lanes_equal_one_message_at_a_time() {
    let mut rng = SplitMix(64);
    // Radices of each path of the kernels on x86-64 without AVX-512: the sorting networks (up
    // to 16), the octet searches (17 to 256; over planes two chunks of lanes side by side up to
    // 128, one by one above), the constant-time quarter search and the fast mode lane by lane
    // above; b a multiple of 16 (keys made in the AES loop) and not.
    let configs: [(&[u32], usize); 13] = [
        (&[2; 20], 16),
        (&[10; 16], 18),
        (&[10; 16], 16),
        (&[16; 8], 32),
        (&[17; 8], 16),
        (&[36; 8], 16),
        (&[100; 8], 16),
        (&[100; 8], 17),
        (&[200; 4], 16),
        (&[256; 4], 16),
        (&[1000; 3], 19),
        (&[5000; 2], 16),
        (&[26, 10, 10, 10, 10, 10, 10, 10], 16),
    ];
    for (radices, b) in configs {
        let key_len = [16, 24, 32][rng.below(3) as usize];
        let key = rng.bytes(key_len);
        for selection in [Selection::Fast, Selection::ConstantTime] {
            let (wide, plain) = pair(radices, b, &key, selection);
            assert_eq!(wide.lanes(), WIDE);
            let l = radices.len();
            // One full group of 64 and a partial one.
            let count = WIDE + 37;
            let messages = rng.messages(radices, count);
            let mut one = messages.clone();
            for m in one.chunks_exact_mut(l) {
                plain.encrypt(m).unwrap();
            }
            let what = format!("{radices:?} b={b} {selection:?}");
            assert_lockstep(&wide, Tweak::Fixed, &messages, &one, l, &what);
        }
    }
}

#[test]
fn sixty_four_lanes_with_a_tweak_each_equal_one_message_at_a_time() {
    let mut rng = SplitMix(65);
    // The set-ups of 64 lanes side by side, with RiffpeX's radices as the prefix they share.
    let configs: [(&[u32], usize); 3] = [
        (&[10; 16], 18),
        (&[100; 8], 16),
        (&[26, 10, 10, 10, 10, 10, 10, 10], 16),
    ];
    for (radices, b) in configs {
        let (wide, plain) = pair(radices, b, &rng.bytes(16), Selection::ConstantTime);
        let l = radices.len();
        let count = 2 * WIDE + 5;
        let messages = rng.messages(radices, count);
        // Lengths around the CBC-MAC's blocks, the empty tweak among them.
        let tweaks: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                let len = rng.below(40) as usize;
                rng.bytes(len)
            })
            .collect();
        let tweaks: Vec<&[u8]> = tweaks.iter().map(Vec::as_slice).collect();
        let mut one = messages.clone();
        let mut one_buf = ScratchBuf::for_message(&plain);
        for (m, tweak) in one.chunks_exact_mut(l).zip(&tweaks) {
            plain
                .encrypt_with(Tweak::Bytes(tweak), m, &mut one_buf.scratch())
                .unwrap();
        }
        let what = format!("{radices:?} b={b}");
        assert_lockstep(&wide, Tweak::PerMessage(&tweaks), &messages, &one, l, &what);
    }
}

/// The index of the first of the `l`-digit messages where `a` and `b` differ.
fn first_difference(a: &[u32], b: &[u32], l: usize) -> Option<usize> {
    assert_eq!(a.len(), b.len());
    a.chunks(l).zip(b.chunks(l)).position(|(a, b)| a != b)
}
