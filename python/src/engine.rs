//! Every call into `riffpe` and `riffpe-batch` (`riffpe-format`'s are in `formats.rs`): a change of
//! the core API is an edit of this file.

use cipher::{Array, BlockCipherEncrypt};
use riffpe::MessageError;
use riffpe::integer::{DigitOrder, max_value};
use riffpe_batch::{Batch, Mode};

pub use riffpe::DEFAULT_BYTES_PER_VALUE;

/// A Riffpe or RiffpeX object over AES.
pub struct Cipher(riffpe::AnyFpe);

/// Which way a message goes.
#[derive(Clone, Copy)]
pub enum Direction {
    Encrypt,
    Decrypt,
}

/// How integers map to digits.
#[derive(Clone, Copy)]
pub enum Order {
    Little,
    Big,
}

/// How many threads a batch may use: the calling one (lockstep only), or the current rayon pool.
#[derive(Clone, Copy)]
pub enum Threads {
    One,
    Pool,
}

/// A refused batch: `row` is the offending message, `reason` never contains a value.
pub struct RowError {
    pub row: Option<usize>,
    pub reason: String,
}

/// The core's selection as `constant_time` asks (the same output either way); `None` leaves
/// it to the core: constant-time up to radix 256, fast above.
pub fn selection(constant_time: Option<bool>) -> Option<riffpe::Selection> {
    constant_time.map(|constant_time| match constant_time {
        true => riffpe::Selection::ConstantTime,
        false => riffpe::Selection::Fast,
    })
}

impl Cipher {
    pub fn riffpe(
        radix: u32,
        digits: usize,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
        selection: Option<riffpe::Selection>,
    ) -> Result<Self, String> {
        riffpe::Riffpe::builder(radix, digits)
            .bytes_per_value(bytes_per_value)
            .selection(selection)
            .tweak(tweak)
            .build(key)
            .map(|fpe| Cipher(fpe.into()))
            .map_err(|e| e.to_string())
    }

    pub fn riffpex(
        radices: Vec<u32>,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
        selection: Option<riffpe::Selection>,
    ) -> Result<Self, String> {
        riffpe::RiffpeX::builder(radices)
            .bytes_per_value(bytes_per_value)
            .selection(selection)
            .tweak(tweak)
            .build(key)
            .map(|fpe| Cipher(fpe.into()))
            .map_err(|e| e.to_string())
    }

    pub fn radices(&self) -> Vec<u32> {
        self.0.domain().radices().collect()
    }

    pub fn digits(&self) -> usize {
        self.0.digits()
    }

    pub fn bytes_per_value(&self) -> usize {
        self.0.bytes_per_value()
    }

    /// The AES implementation this cipher's key runs on.
    pub fn aes_backend(&self) -> riffpe::AesBackend {
        self.0.cipher().backend()
    }

    /// The largest integer of the domain, if it fits 64 bits.
    pub fn max_u64(&self) -> Option<u64> {
        max_value::<u64>(self.0.domain()).ok()
    }

    /// One message in place; the message is unchanged on error.
    pub fn run(&self, message: &mut [u32], direction: Direction) -> Result<(), String> {
        let result = match direction {
            Direction::Encrypt => self.0.encrypt(message),
            Direction::Decrypt => self.0.decrypt(message),
        };
        result.map_err(|e| e.to_string())
    }

    /// Integers in place, all checked before any is changed.
    pub fn run_ints(
        &self,
        values: &mut [u64],
        direction: Direction,
        order: Order,
        threads: Threads,
    ) -> Result<(), RowError> {
        let order = match order {
            Order::Little => DigitOrder::LittleEndian,
            Order::Big => DigitOrder::BigEndian,
        };
        let batch = Batch::new(&self.0).order(order).mode(mode(threads));
        match direction {
            Direction::Encrypt => batch.encrypt_ints(values),
            Direction::Decrypt => batch.decrypt_ints(values),
        }
        .map_err(row_error)
    }

    /// Flat messages of [`Cipher::digits`] digits in place, all checked before any is changed.
    pub fn run_digits(
        &self,
        digits: &mut [u32],
        direction: Direction,
        threads: Threads,
    ) -> Result<(), RowError> {
        let batch = Batch::new(&self.0).mode(mode(threads));
        match direction {
            Direction::Encrypt => batch.encrypt_digits(digits),
            Direction::Decrypt => batch.decrypt_digits(digits),
        }
        .map_err(row_error)
    }
}

fn mode(threads: Threads) -> Mode {
    match threads {
        Threads::One => Mode::Lockstep,
        Threads::Pool => Mode::Parallel,
    }
}

/// The batch's error: the core's messages name positions, never values.
fn row_error(e: MessageError) -> RowError {
    let reason = match e {
        MessageError::ValueOutOfDomain { .. } => {
            "value is not below the size of the domain".to_owned()
        }
        MessageError::DigitOutOfRange {
            position, radix, ..
        } => format!("digit at position {position} is not below radix {radix}"),
        other => other.to_string(),
    };
    RowError {
        row: e.message(),
        reason,
    }
}

/// AES for the keystream generator: the block cipher alone, the key expanded once.
pub struct BlockCipher(riffpe::Aes);

impl BlockCipher {
    pub fn new(key: &[u8]) -> Result<Self, String> {
        riffpe::Aes::new_from_slice(key)
            .map(BlockCipher)
            .map_err(|e| e.to_string())
    }

    pub fn encrypt_block(&self, block: &mut [u8; 16]) {
        let mut b = Array::from(*block);
        self.0.encrypt_block(&mut b);
        block.copy_from_slice(&b);
    }
}
