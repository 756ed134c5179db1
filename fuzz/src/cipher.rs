//! The cipher a [`Case`] describes, built through the public constructors.

use riffpe::{Error, Riffpe, RiffpeX};

use crate::case::{Case, Params};

/// Riffpe or RiffpeX, as the case asks.
#[derive(Clone, Debug)]
pub enum Cipher {
    /// Built by `Riffpe::with_bytes_per_value`.
    Riffpe(Riffpe),
    /// Built by `RiffpeX::with_bytes_per_value`.
    RiffpeX(RiffpeX<Vec<u32>>),
}

impl Cipher {
    /// Calls the constructor the case names, with its key, fixed tweak and `bytes_per_value`.
    pub fn build(case: &Case) -> Result<Cipher, Error> {
        match &case.params {
            Params::Riffpe { radix, digits } => Riffpe::with_bytes_per_value(
                *radix,
                *digits,
                &case.key,
                &case.tweak,
                case.bytes_per_value,
            )
            .map(Cipher::Riffpe),
            Params::RiffpeX { radices } => RiffpeX::with_bytes_per_value(
                radices.clone(),
                &case.key,
                &case.tweak,
                case.bytes_per_value,
            )
            .map(Cipher::RiffpeX),
        }
    }
}

/// The error a single-message call must return for `message`, if any: the length first, then
/// the first digit not below its radix.
pub fn message_error(params: &Params, message: &[u32]) -> Option<Error> {
    let digits = params.digits();
    if message.len() != digits {
        return Some(Error::MessageLength {
            expected: digits,
            actual: message.len(),
        });
    }
    message.iter().enumerate().find_map(|(index, &digit)| {
        let radix = params.radix(index);
        (digit >= radix).then_some(Error::DigitOutOfRange {
            index,
            digit,
            radix,
        })
    })
}

/// Runs `$body` with `$fpe` bound to the `&Fpe<_>` inside `$cipher`, whichever scheme it is.
macro_rules! with_fpe {
    ($cipher:expr, |$fpe:ident| $body:expr) => {
        match $cipher {
            $crate::cipher::Cipher::Riffpe($fpe) => $body,
            $crate::cipher::Cipher::RiffpeX($fpe) => $body,
        }
    };
}
pub(crate) use with_fpe;
