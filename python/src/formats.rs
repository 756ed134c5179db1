//! Every call into `riffpe-format`: strings of a named format, a template or an alphabet.

use std::cell::RefCell;
use std::collections::BTreeMap;

use rayon::prelude::*;
use riffpe_format::{Alphabet, BulkError, BulkScratch, Format, FormatCipher, Luhn, Security};

use crate::engine::{Direction, RowError, Threads};

/// The most strings per format call (a rayon task's, or one of the calling thread's in turn):
/// enough for each shape group to fill the lockstep lanes, few enough that a call's buffers
/// stay in cache.
const CHUNK: usize = 4096;
/// The fewest strings per rayon task, when fewer than [`CHUNK`] share the threads more evenly.
const MIN_CHUNK: usize = 512;

thread_local! {
    /// Each thread's buffers for the format calls, kept from call to call (a Spark task makes
    /// one per Arrow batch): fresh ones every call can be fresh pages, faulted in and zeroed.
    static SCRATCH: RefCell<BulkScratch> = RefCell::default();
}

/// `work` in this thread's kept [`BulkScratch`], taken out for the call so that nothing else
/// on the thread can find it borrowed.
fn in_scratch<T>(work: impl FnOnce(&mut BulkScratch) -> T) -> T {
    let mut scratch = SCRATCH.with_borrow_mut(std::mem::take);
    let out = work(&mut scratch);
    SCRATCH.set(scratch);
    out
}

/// Where a format comes from: exactly one of these.
pub enum Definition {
    /// A name of `riffpe_format::named_formats` (`card`, `ssn`, `uuid` …).
    Named(String),
    /// A template, with custom alphabets its `{name}` items may use (name → characters).
    Template {
        template: String,
        alphabets: BTreeMap<String, String>,
    },
    /// Free form: one alphabet (a built-in name or its characters) and passthrough characters.
    FreeForm {
        alphabet: String,
        passthrough: String,
    },
}

/// How the Luhn digit is treated, when the caller overrides the format's choice.
#[derive(Clone, Copy)]
pub enum LuhnChoice {
    Off,
    Preserve,
    Invalid,
}

/// A definition and the setters applied on top of it; `None` keeps the definition's own value.
pub struct Options {
    pub definition: Definition,
    pub keep_prefix: Option<usize>,
    pub keep_suffix: Option<usize>,
    pub luhn: Option<LuhnChoice>,
    pub fold_case: Option<bool>,
    pub literals_optional: Option<bool>,
    pub allow_small_domain: bool,
    pub bits256: bool,
    /// Constant-time selection if `Some(true)`, fast if `Some(false)`, else the core's default.
    pub constant_time: Option<bool>,
}

/// A built-in alphabet by name, else the characters given, in digit order.
fn alphabet(spec: &str) -> Result<Alphabet, String> {
    match Alphabet::by_name(spec) {
        Some(builtin) => Ok(builtin),
        None => Alphabet::new(spec).map_err(|e| e.to_string()),
    }
}

impl Options {
    fn format(&self) -> Result<Format, String> {
        let mut format = match &self.definition {
            Definition::Named(name) => Format::named(name).map_err(|e| e.to_string())?,
            Definition::Template {
                template,
                alphabets,
            } => {
                let custom = alphabets
                    .iter()
                    .map(|(name, chars)| Ok((name.as_str(), alphabet(chars)?)))
                    .collect::<Result<Vec<_>, String>>()?;
                let named: Vec<(&str, &Alphabet)> =
                    custom.iter().map(|(name, a)| (*name, a)).collect();
                Format::template_with(template, &named).map_err(|e| e.to_string())?
            }
            Definition::FreeForm {
                alphabet: chars,
                passthrough,
            } => Format::free_form(alphabet(chars)?, passthrough).map_err(|e| e.to_string())?,
        };
        if let Some(n) = self.keep_prefix {
            format = format.keep_prefix(n);
        }
        if let Some(n) = self.keep_suffix {
            format = format.keep_suffix(n);
        }
        if let Some(luhn) = self.luhn {
            format = format.luhn(match luhn {
                LuhnChoice::Off => Luhn::Off,
                LuhnChoice::Preserve => Luhn::Preserve,
                LuhnChoice::Invalid => Luhn::Invalid,
            });
        }
        if let Some(fold) = self.fold_case {
            format = format.fold_case(fold);
        }
        if let Some(optional) = self.literals_optional {
            format = format.literals_optional(optional);
        }
        let security = if self.bits256 {
            Security::Bits256
        } else {
            Security::Bits128
        };
        Ok(format
            .allow_small_domain(self.allow_small_domain)
            .security(security))
    }
}

/// Strings of one format under one key.
pub struct StringCipher(FormatCipher);

impl StringCipher {
    pub fn new(key: &[u8], options: &Options, context: &[u8]) -> Result<Self, String> {
        let format = options.format()?;
        FormatCipher::with_selection(key, format, crate::engine::selection(options.constant_time))
            .map(|cipher| StringCipher(cipher.context(context)))
            .map_err(|e| e.to_string())
    }

    /// Keystream bytes per value, from the format's largest radix and security level.
    pub fn bytes_per_value(&self) -> usize {
        self.0.format().bytes_per_value()
    }

    /// One value; the error names a character position, never a character.
    pub fn run(&self, value: &str, direction: Direction) -> Result<String, String> {
        match direction {
            Direction::Encrypt => self.0.encrypt(value),
            Direction::Decrypt => self.0.decrypt(value),
        }
        .map_err(|e| e.to_string())
    }

    /// Many values, in order; identical to [`StringCipher::run`] on each. On error nothing is
    /// returned and `row` is the index in `values`.
    pub fn run_many<S: AsRef<str> + Sync>(
        &self,
        values: &[S],
        direction: Direction,
        threads: Threads,
    ) -> Result<Vec<String>, RowError> {
        let many = |chunk: &[S]| {
            in_scratch(|scratch| match direction {
                Direction::Encrypt => self.0.encrypt_many_in(chunk, scratch),
                Direction::Decrypt => self.0.decrypt_many_in(chunk, scratch),
            })
        };
        let mut out = Vec::with_capacity(values.len());
        match threads {
            Threads::One => {
                for (i, chunk) in values.chunks(CHUNK).enumerate() {
                    out.extend(many(chunk).map_err(|e| bulk_error(e, i * CHUNK))?);
                }
            }
            Threads::Pool => {
                // About four tasks a thread: a batch of a few chunks is not left to one thread.
                let size = values
                    .len()
                    .div_ceil(4 * rayon::current_num_threads())
                    .clamp(MIN_CHUNK, CHUNK);
                let chunks: Vec<Result<Vec<String>, BulkError>> =
                    values.par_chunks(size).map(many).collect();
                for (i, chunk) in chunks.into_iter().enumerate() {
                    out.extend(chunk.map_err(|e| bulk_error(e, i * size))?);
                }
            }
        }
        Ok(out)
    }
}

/// The bulk error's value index, counted from the start of the whole input.
fn bulk_error(e: BulkError, offset: usize) -> RowError {
    RowError {
        row: Some(offset + e.index),
        reason: e.error.to_string(),
    }
}
