//! Every call into `riffpe` and `riffpe-batch`: a change of the core API is an edit of this file.

use cipher::{Array, BlockCipherEncrypt};
use riffpe::integer::{DigitOrder, max_value};
use riffpe_batch::{Batch, BatchError, Mode};

pub use riffpe::DEFAULT_BYTES_PER_VALUE;

/// A Riffpe or RiffpeX object over AES.
pub enum Cipher {
    Uniform(riffpe::Riffpe),
    Mixed(riffpe::RiffpeX<Vec<u32>>),
}

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

impl Cipher {
    pub fn riffpe(
        radix: u32,
        digits: usize,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Result<Self, String> {
        riffpe::Riffpe::with_bytes_per_value(radix, digits, key, tweak, bytes_per_value)
            .map(Cipher::Uniform)
            .map_err(|e| e.to_string())
    }

    pub fn riffpex(
        radices: Vec<u32>,
        key: &[u8],
        tweak: &[u8],
        bytes_per_value: usize,
    ) -> Result<Self, String> {
        riffpe::RiffpeX::with_bytes_per_value(radices, key, tweak, bytes_per_value)
            .map(Cipher::Mixed)
            .map_err(|e| e.to_string())
    }

    pub fn radices(&self) -> Vec<u32> {
        match self {
            Cipher::Uniform(f) => f.domain().radices().collect(),
            Cipher::Mixed(f) => f.domain().radices().collect(),
        }
    }

    pub fn digits(&self) -> usize {
        match self {
            Cipher::Uniform(f) => f.digits(),
            Cipher::Mixed(f) => f.digits(),
        }
    }

    pub fn bytes_per_value(&self) -> usize {
        match self {
            Cipher::Uniform(f) => f.bytes_per_value(),
            Cipher::Mixed(f) => f.bytes_per_value(),
        }
    }

    /// The largest integer of the domain, if it fits 64 bits.
    pub fn max_u64(&self) -> Option<u64> {
        match self {
            Cipher::Uniform(f) => max_value::<u64>(f.domain()).ok(),
            Cipher::Mixed(f) => max_value::<u64>(f.domain()).ok(),
        }
    }

    /// One message in place; the message is unchanged on error.
    pub fn run(&self, message: &mut [u32], direction: Direction) -> Result<(), String> {
        let result = match (self, direction) {
            (Cipher::Uniform(f), Direction::Encrypt) => f.encrypt(message),
            (Cipher::Uniform(f), Direction::Decrypt) => f.decrypt(message),
            (Cipher::Mixed(f), Direction::Encrypt) => f.encrypt(message),
            (Cipher::Mixed(f), Direction::Decrypt) => f.decrypt(message),
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
        let mode = mode(threads);
        let result = match self {
            Cipher::Uniform(f) => {
                let batch = Batch::new(f).order(order).mode(mode);
                match direction {
                    Direction::Encrypt => batch.encrypt_ints(values),
                    Direction::Decrypt => batch.decrypt_ints(values),
                }
            }
            Cipher::Mixed(f) => {
                let batch = Batch::new(f).order(order).mode(mode);
                match direction {
                    Direction::Encrypt => batch.encrypt_ints(values),
                    Direction::Decrypt => batch.decrypt_ints(values),
                }
            }
        };
        result.map_err(row_error)
    }

    /// Flat messages of [`Cipher::digits`] digits in place, all checked before any is changed.
    pub fn run_digits(
        &self,
        digits: &mut [u32],
        direction: Direction,
        threads: Threads,
    ) -> Result<(), RowError> {
        let mode = mode(threads);
        let result = match self {
            Cipher::Uniform(f) => {
                let batch = Batch::new(f).mode(mode);
                match direction {
                    Direction::Encrypt => batch.encrypt_digits(digits),
                    Direction::Decrypt => batch.decrypt_digits(digits),
                }
            }
            Cipher::Mixed(f) => {
                let batch = Batch::new(f).mode(mode);
                match direction {
                    Direction::Encrypt => batch.encrypt_digits(digits),
                    Direction::Decrypt => batch.decrypt_digits(digits),
                }
            }
        };
        result.map_err(row_error)
    }
}

fn mode(threads: Threads) -> Mode {
    match threads {
        Threads::One => Mode::Lockstep,
        Threads::Pool => Mode::Parallel,
    }
}

/// The batch's error without the offending value: rows of user data must not reach logs.
fn row_error(e: BatchError) -> RowError {
    let reason = match e.error {
        riffpe::Error::ValueOutOfDomain => "value is not below the size of the domain".to_owned(),
        riffpe::Error::DigitOutOfRange { index, radix, .. } => {
            format!("digit at position {index} is not below radix {radix}")
        }
        riffpe::Error::DomainTooLarge { bits } => {
            return RowError {
                row: None,
                reason: format!("the domain does not fit a {bits}-bit integer"),
            };
        }
        other => other.to_string(),
    };
    RowError {
        row: Some(e.index),
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
