//! The compiled part of the `riffpe` Python package: cipher objects and the batch entry points.

mod engine;
mod formats;
mod pool;

use std::collections::BTreeMap;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyNotImplementedError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use zeroize::{Zeroize, Zeroizing};

use engine::{
    BlockCipher, Cipher, DEFAULT_BYTES_PER_VALUE, Direction, Order, RowError, Threads, selection,
};
use formats::{Definition, LuhnChoice, Options, StringCipher};

/// The bytes of a bytes-like object (bytes, bytearray, memoryview …), in memory wiped on drop.
fn bytes_like(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Zeroizing<Vec<u8>>> {
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be bytes-like, not str (encode it first)"
        )));
    }
    if let Ok(bytes) = obj.cast::<PyBytes>() {
        return Ok(Zeroizing::new(bytes.as_bytes().to_vec()));
    }
    if let Ok(array) = obj.cast::<pyo3::types::PyByteArray>() {
        return Ok(Zeroizing::new(array.to_vec()));
    }
    // memoryview, array.array, numpy uint8 …: through the buffer protocol of `bytes()`.
    let builtins = obj.py().import("builtins")?;
    let converted = builtins
        .getattr("memoryview")?
        .call1((obj,))
        .and_then(|view| builtins.getattr("bytes")?.call1((view,)))
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a bytes-like object")))?;
    let bytes = converted.cast::<PyBytes>()?;
    Ok(Zeroizing::new(bytes.as_bytes().to_vec()))
}

/// A non-negative Python int below 2^32; anything else is a `ValueError` naming `what`.
fn to_u32(obj: &Bound<'_, PyAny>, what: &dyn Fn() -> String) -> PyResult<u32> {
    match obj.extract::<i64>() {
        Ok(v) => u32::try_from(v)
            .map_err(|_| PyValueError::new_err(format!("{} is out of range", what()))),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            Err(PyValueError::new_err(format!("{} is out of range", what())))
        }
        Err(_) => Err(PyTypeError::new_err(format!("{} must be an int", what()))),
    }
}

/// A non-negative Python int that fits `usize`.
fn to_usize(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    match obj.extract::<i64>() {
        Ok(v) => usize::try_from(v)
            .map_err(|_| PyValueError::new_err(format!("{what} must not be negative"))),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            Err(PyValueError::new_err(format!("{what} is too large")))
        }
        Err(_) => Err(PyTypeError::new_err(format!("{what} must be an int"))),
    }
}

fn digits_of(cipher: &Cipher, message: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let radices = cipher.radices();
    let mut digits = Vec::with_capacity(radices.len());
    for (position, item) in message.try_iter()?.enumerate() {
        let item = item?;
        let radix = radices.get(position).copied();
        let digit = to_u32(&item, &|| format!("digit at position {position}"))?;
        if let Some(radix) = radix
            && digit >= radix
        {
            return Err(PyValueError::new_err(format!(
                "digit at position {position} is not below radix {radix}"
            )));
        }
        digits.push(digit);
    }
    if digits.len() != radices.len() {
        return Err(PyValueError::new_err(format!(
            "message has {} digits, the cipher takes {}",
            digits.len(),
            radices.len()
        )));
    }
    Ok(digits)
}

fn row_error(e: RowError) -> PyErr {
    match e.row {
        Some(row) => PyValueError::new_err(format!("row {row}: {}", e.reason)),
        None => PyValueError::new_err(e.reason),
    }
}

fn parse_order(order: &str) -> PyResult<Order> {
    match order {
        "little" => Ok(Order::Little),
        "big" => Ok(Order::Big),
        _ => Err(PyValueError::new_err("order must be 'little' or 'big'")),
    }
}

/// Runs `work` without the GIL, on one thread, the global pool, or a pool of `threads`.
fn detached<T: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    work: impl FnOnce(Threads) -> T + Send,
) -> PyResult<T> {
    match threads {
        None => Ok(py.detach(|| work(Threads::Pool))),
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        Some(1) => Ok(py.detach(|| work(Threads::One))),
        Some(n) => {
            let pool = pool::with_threads(n).map_err(PyValueError::new_err)?;
            Ok(py.detach(|| pool.install(|| work(Threads::Pool))))
        }
    }
}

/// Shared by `Riffpe` and `RiffpeX`: the methods on the one cipher object.
fn encrypt_list(
    cipher: &Cipher,
    message: &Bound<'_, PyAny>,
    direction: Direction,
) -> PyResult<Vec<u32>> {
    let mut digits = digits_of(cipher, message)?;
    cipher
        .run(&mut digits, direction)
        .map_err(PyValueError::new_err)?;
    Ok(digits)
}

fn batch_ints<'py>(
    py: Python<'py>,
    cipher: &Cipher,
    values: &Bound<'py, PyAny>,
    direction: Direction,
    order: &str,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let order = parse_order(order)?;
    if let Ok(array) = values.extract::<PyReadonlyArray1<'py, u64>>() {
        let mut work: Vec<u64> = array.as_array().iter().copied().collect();
        detached(py, threads, |t| {
            cipher.run_ints(&mut work, direction, order, t)
        })?
        .map_err(row_error)?;
        return Ok(PyArray1::from_vec(py, work).into_any());
    }
    if let Ok(array) = values.extract::<PyReadonlyArray1<'py, i64>>() {
        let view = array.as_array();
        if cipher.max_u64().is_none_or(|max| max > i64::MAX as u64) {
            return Err(PyValueError::new_err(
                "the domain does not fit int64: use uint64 values",
            ));
        }
        let mut work = Vec::with_capacity(view.len());
        for (row, &v) in view.iter().enumerate() {
            let v = u64::try_from(v)
                .map_err(|_| PyValueError::new_err(format!("row {row}: value is negative")))?;
            work.push(v);
        }
        detached(py, threads, |t| {
            cipher.run_ints(&mut work, direction, order, t)
        })?
        .map_err(row_error)?;
        // Every output is at most the domain's largest value, checked above to fit int64.
        let out: Vec<i64> = work.into_iter().map(|v| v as i64).collect();
        return Ok(PyArray1::from_vec(py, out).into_any());
    }
    Err(PyTypeError::new_err(
        "values must be a one-dimensional numpy array of uint64 or int64",
    ))
}

fn batch_digits<'py>(
    py: Python<'py>,
    cipher: &Cipher,
    digits: PyReadonlyArray2<'py, u32>,
    direction: Direction,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let shape = digits.shape().to_vec();
    if shape[1] != cipher.digits() {
        return Err(PyValueError::new_err(format!(
            "digits has {} columns, the cipher takes {}",
            shape[1],
            cipher.digits()
        )));
    }
    // Row-major whatever the input's strides: one message per row.
    let mut work: Vec<u32> = digits.as_array().iter().copied().collect();
    detached(py, threads, |t| cipher.run_digits(&mut work, direction, t))?.map_err(row_error)?;
    Ok(PyArray1::from_vec(py, work).reshape(shape)?.into_any())
}

macro_rules! cipher_methods {
    ($t:ty { $($own:tt)* }) => {
        #[pymethods]
        impl $t {
            $($own)*

            /// Encrypts one message (a sequence of digits) and returns the ciphertext as a new list.
            fn encrypt(&self, digits: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
                encrypt_list(&self.cipher, digits, Direction::Encrypt)
            }

            /// Decrypts one message (a sequence of digits) and returns the plaintext as a new list.
            fn decrypt(&self, digits: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
                encrypt_list(&self.cipher, digits, Direction::Decrypt)
            }

            /// Digits in a message.
            #[getter]
            fn digits(&self) -> usize {
                self.cipher.digits()
            }

            /// Keystream bytes per value.
            #[getter]
            fn bytes_per_value(&self) -> usize {
                self.cipher.bytes_per_value()
            }

            /// Every digit's radix, as a tuple.
            #[getter]
            fn radices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
                pyo3::types::PyTuple::new(py, self.cipher.radices())
            }

            /// The AES implementation this cipher runs on, as the reference names its engine
            /// (``AES Engine ...``).
            fn _aes_engine_id(&self) -> String {
                format!("AES Engine riffpe {}", self.cipher.aes_backend())
            }

            /// The largest integer of the domain if it fits 64 bits, else None.
            #[getter]
            fn _max_u64(&self) -> Option<u64> {
                self.cipher.max_u64()
            }

            #[pyo3(signature = (values, encrypt, order, threads))]
            fn _ints<'py>(
                &self,
                py: Python<'py>,
                values: &Bound<'py, PyAny>,
                encrypt: bool,
                order: &str,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let direction = if encrypt { Direction::Encrypt } else { Direction::Decrypt };
                batch_ints(py, &self.cipher, values, direction, order, threads)
            }

            #[pyo3(signature = (digits, encrypt, threads))]
            fn _digits<'py>(
                &self,
                py: Python<'py>,
                digits: PyReadonlyArray2<'py, u32>,
                encrypt: bool,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let direction = if encrypt { Direction::Encrypt } else { Direction::Decrypt };
                batch_digits(py, &self.cipher, digits, direction, threads)
            }
        }
    };
}

/// Riffpe over `digits` digits of one `radix`, AES keyed by `key` (16, 24 or 32 bytes).
#[pyclass(module = "riffpe._native", subclass, frozen)]
struct Riffpe {
    cipher: Cipher,
}

cipher_methods!(Riffpe {
    #[new]
    #[pyo3(signature = (radix, digits, key, tweak, bytes_per_value = None, *, constant_time = None), text_signature = "(radix, digits, key, tweak, bytes_per_value=16, *, constant_time=None)")]
    fn new(
        radix: &Bound<'_, PyAny>,
        digits: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        tweak: &Bound<'_, PyAny>,
        bytes_per_value: Option<&Bound<'_, PyAny>>,
        constant_time: Option<bool>,
    ) -> PyResult<Self> {
        let radix = to_u32(radix, &|| "radix".to_owned())?;
        let digits = to_usize(digits, "digits")?;
        let bytes_per_value = match bytes_per_value {
            Some(b) => to_usize(b, "bytes_per_value")?,
            None => DEFAULT_BYTES_PER_VALUE,
        };
        let key = bytes_like(key, "key")?;
        let tweak = bytes_like(tweak, "tweak")?;
        let cipher = Cipher::riffpe(
            radix,
            digits,
            &key,
            &tweak,
            bytes_per_value,
            selection(constant_time),
        )
        .map_err(PyValueError::new_err)?;
        Ok(Riffpe { cipher })
    }

    /// The radix of every digit.
    #[getter]
    fn radix(&self) -> u32 {
        self.cipher.radices().first().copied().unwrap_or(0)
    }

    fn __repr__(&self) -> String {
        format!(
            "Riffpe(radix={}, digits={}, bytes_per_value={})",
            self.radix(),
            self.cipher.digits(),
            self.cipher.bytes_per_value()
        )
    }
});

/// RiffpeX: digit `i` below `radices[i]`, AES keyed by `key` (16, 24 or 32 bytes).
#[pyclass(module = "riffpe._native", subclass, frozen)]
struct RiffpeX {
    cipher: Cipher,
}

cipher_methods!(RiffpeX {
    #[new]
    #[pyo3(signature = (radices, key, tweak, bytes_per_value = None, *, constant_time = None), text_signature = "(radices, key, tweak, bytes_per_value=16, *, constant_time=None)")]
    fn new(
        radices: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        tweak: &Bound<'_, PyAny>,
        bytes_per_value: Option<&Bound<'_, PyAny>>,
        constant_time: Option<bool>,
    ) -> PyResult<Self> {
        let mut list = Vec::new();
        for (index, item) in radices.try_iter()?.enumerate() {
            list.push(to_u32(&item?, &|| format!("radix at position {index}"))?);
        }
        let bytes_per_value = match bytes_per_value {
            Some(b) => to_usize(b, "bytes_per_value")?,
            None => DEFAULT_BYTES_PER_VALUE,
        };
        let key = bytes_like(key, "key")?;
        let tweak = bytes_like(tweak, "tweak")?;
        let cipher =
            Cipher::riffpex(list, &key, &tweak, bytes_per_value, selection(constant_time))
                .map_err(PyValueError::new_err)?;
        Ok(RiffpeX { cipher })
    }

    fn __repr__(&self) -> String {
        format!(
            "RiffpeX(radices={:?}, bytes_per_value={})",
            self.cipher.radices(),
            self.cipher.bytes_per_value()
        )
    }
});

/// AES-CBC as a tweakable keystream: the state is the CBC-MAC of the tweak from `iv`, and
/// `get_bytes` returns the CBC encryption of zero bytes from that state.
#[pyclass(module = "riffpe._native", subclass)]
struct CBCTweakablePRNG {
    cipher: BlockCipher,
    state: [u8; 16],
}

impl CBCTweakablePRNG {
    fn absorb(&mut self, data: &[u8]) -> PyResult<()> {
        if !data.len().is_multiple_of(16) {
            return Err(PyValueError::new_err(
                "the tweak must be a multiple of 16 bytes long",
            ));
        }
        for block in data.chunks_exact(16) {
            for (s, b) in self.state.iter_mut().zip(block) {
                *s ^= b;
            }
            self.cipher.encrypt_block(&mut self.state);
        }
        Ok(())
    }

    fn set_iv(&mut self, iv: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        match iv {
            None => self.state = [0; 16],
            Some(iv) => {
                let iv = bytes_like(iv, "iv")?;
                self.state = iv
                    .as_slice()
                    .try_into()
                    .map_err(|_| PyValueError::new_err("iv must be 16 bytes long"))?;
            }
        }
        Ok(())
    }
}

#[pymethods]
impl CBCTweakablePRNG {
    #[new]
    #[pyo3(signature = (key, tweak, iv = None))]
    fn new(
        key: &Bound<'_, PyAny>,
        tweak: &Bound<'_, PyAny>,
        iv: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let key = bytes_like(key, "key")?;
        let cipher = BlockCipher::new(&key).map_err(PyValueError::new_err)?;
        let mut prng = CBCTweakablePRNG {
            cipher,
            state: [0; 16],
        };
        prng.set_iv(iv)?;
        prng.absorb(&bytes_like(tweak, "tweak")?)?;
        Ok(prng)
    }

    /// AES's block size in bytes.
    #[classattr]
    fn block_size() -> usize {
        16
    }

    /// Restarts from `iv` (16 zero bytes if omitted) and absorbs `tweak`.
    #[pyo3(signature = (tweak, iv = None))]
    fn reset(&mut self, tweak: &Bound<'_, PyAny>, iv: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let tweak = bytes_like(tweak, "tweak")?;
        self.set_iv(iv)?;
        self.absorb(&tweak)
    }

    /// The next `count` keystream bytes; `count` must be a multiple of `block_size`.
    fn get_bytes<'py>(
        &mut self,
        py: Python<'py>,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let count = to_usize(count, "count")?;
        if !count.is_multiple_of(16) {
            return Err(PyNotImplementedError::new_err(
                "count must be a multiple of the block size (16)",
            ));
        }
        let mut out = Vec::with_capacity(count);
        for _ in 0..count / 16 {
            self.cipher.encrypt_block(&mut self.state);
            out.extend_from_slice(&self.state);
        }
        let bytes = PyBytes::new(py, &out);
        out.as_mut_slice().zeroize(); // one fill; a Vec is wiped byte by byte
        Ok(bytes)
    }

    fn __repr__(&self) -> &'static str {
        "CBCTweakablePRNG(..)"
    }
}

impl Drop for CBCTweakablePRNG {
    fn drop(&mut self) {
        self.state.zeroize();
    }
}

/// The strings of `values` (a list of str or None): the rows that are not None and their text.
fn strings_of(values: &Bound<'_, PyList>) -> PyResult<(Vec<usize>, Vec<String>)> {
    let mut rows = Vec::with_capacity(values.len());
    let mut texts = Vec::with_capacity(values.len());
    for (row, item) in values.iter().enumerate() {
        if item.is_none() {
            continue;
        }
        let Ok(text) = item.cast::<PyString>() else {
            return Err(PyTypeError::new_err(format!(
                "row {row}: values must be str or None"
            )));
        };
        // The encoder's own message would quote the offending character.
        let text = text.to_cow().map_err(|_| {
            PyValueError::new_err(format!("row {row}: the value is not valid Unicode"))
        })?;
        rows.push(row);
        texts.push(text.into_owned());
    }
    Ok((rows, texts))
}

/// A row error of the non-null values, renumbered to the row of the whole input.
fn renumber(mut e: RowError, rows: &[usize]) -> RowError {
    e.row = e.row.map(|i| rows.get(i).copied().unwrap_or(i));
    e
}

/// Arrow string data (`offsets` into `data`, `valid` rows) through `cipher`: the new offsets
/// and data, null rows empty.
fn arrow_strings(
    cipher: &StringCipher,
    offsets: &[i64],
    data: &[u8],
    valid: Option<&[bool]>,
    direction: Direction,
    threads: Threads,
) -> Result<(Vec<i64>, Vec<u8>), RowError> {
    let malformed = |row| RowError {
        row: Some(row),
        reason: "the Arrow offsets do not delimit the data".to_owned(),
    };
    let count = offsets.len().saturating_sub(1);
    let mut rows = Vec::with_capacity(count);
    let mut texts = Vec::with_capacity(count);
    for row in 0..count {
        if valid.is_some_and(|v| !v.get(row).copied().unwrap_or(false)) {
            continue;
        }
        let (start, end) = (offsets[row], offsets[row + 1]);
        let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
            return Err(malformed(row));
        };
        let bytes = data.get(start..end).ok_or_else(|| malformed(row))?;
        let text = std::str::from_utf8(bytes).map_err(|_| RowError {
            row: Some(row),
            reason: "the value is not valid UTF-8".to_owned(),
        })?;
        rows.push(row);
        texts.push(text);
    }
    let done = cipher
        .run_many(&texts, direction, threads)
        .map_err(|e| renumber(e, &rows))?;
    let mut out_offsets = Vec::with_capacity(count + 1);
    let mut out_data = Vec::with_capacity(data.len());
    out_offsets.push(0);
    let mut done = rows.iter().zip(done).peekable();
    for row in 0..count {
        if let Some((_, text)) = done.next_if(|(r, _)| **r == row) {
            out_data.extend_from_slice(text.as_bytes());
        }
        // Arrow offsets are i64 in a large string array, and no Vec exceeds i64::MAX bytes.
        out_offsets.push(out_data.len() as i64);
    }
    Ok((out_offsets, out_data))
}

fn parse_luhn(luhn: &str) -> PyResult<LuhnChoice> {
    match luhn {
        "off" => Ok(LuhnChoice::Off),
        "preserve" => Ok(LuhnChoice::Preserve),
        "invalid" => Ok(LuhnChoice::Invalid),
        _ => Err(PyValueError::new_err(
            "luhn must be 'preserve', 'invalid' or 'off'",
        )),
    }
}

fn direction_of(encrypt: bool) -> Direction {
    if encrypt {
        Direction::Encrypt
    } else {
        Direction::Decrypt
    }
}

/// Arrow string data as numpy arrays: offsets (one more than the rows) and UTF-8 bytes.
type ArrowStrings<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u8>>);

/// Strings of one format (a name, a template or an alphabet) under an AES key; each value's
/// tweak binds the format, the value's shape, kept characters and `context`.
#[pyclass(module = "riffpe._native", subclass, frozen)]
struct FormatCipher {
    cipher: StringCipher,
    description: String,
}

#[pymethods]
impl FormatCipher {
    #[new]
    #[pyo3(signature = (
        key, format = None, *, template = None, alphabet = None, passthrough = None,
        alphabets = None, keep_prefix = None, keep_suffix = None, luhn = None, fold_case = None,
        literals_optional = None, allow_small_domain = false, context = None, security = 128,
        constant_time = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        key: &Bound<'_, PyAny>,
        format: Option<String>,
        template: Option<String>,
        alphabet: Option<String>,
        passthrough: Option<String>,
        alphabets: Option<BTreeMap<String, String>>,
        keep_prefix: Option<usize>,
        keep_suffix: Option<usize>,
        luhn: Option<String>,
        fold_case: Option<bool>,
        literals_optional: Option<bool>,
        allow_small_domain: bool,
        context: Option<&Bound<'_, PyAny>>,
        security: u32,
        constant_time: Option<bool>,
    ) -> PyResult<Self> {
        if passthrough.is_some() && alphabet.is_none() {
            return Err(PyTypeError::new_err("passthrough needs alphabet"));
        }
        if alphabets.is_some() && template.is_none() {
            return Err(PyTypeError::new_err("alphabets needs template"));
        }
        let (definition, description) = match (format, template, alphabet) {
            (Some(name), None, None) => {
                let description = format!("format={name:?}");
                (Definition::Named(name), description)
            }
            (None, Some(template), None) => {
                let description = format!("template={template:?}");
                let alphabets = alphabets.unwrap_or_default();
                (
                    Definition::Template {
                        template,
                        alphabets,
                    },
                    description,
                )
            }
            (None, None, Some(alphabet)) => {
                let passthrough = passthrough.unwrap_or_default();
                let description = format!("alphabet={alphabet:?}, passthrough={passthrough:?}");
                (
                    Definition::FreeForm {
                        alphabet,
                        passthrough,
                    },
                    description,
                )
            }
            _ => {
                return Err(PyTypeError::new_err(
                    "give exactly one of format, template and alphabet",
                ));
            }
        };
        let bits256 = match security {
            128 => false,
            256 => true,
            _ => return Err(PyValueError::new_err("security must be 128 or 256")),
        };
        let options = Options {
            definition,
            keep_prefix,
            keep_suffix,
            luhn: luhn.as_deref().map(parse_luhn).transpose()?,
            fold_case,
            literals_optional,
            allow_small_domain,
            bits256,
            constant_time,
        };
        let key = bytes_like(key, "key")?;
        let context = match context {
            Some(c) => bytes_like(c, "context")?,
            None => Zeroizing::new(Vec::new()),
        };
        let cipher = StringCipher::new(&key, &options, &context).map_err(PyValueError::new_err)?;
        Ok(FormatCipher {
            cipher,
            description,
        })
    }

    /// Encrypts one string; a character the format does not take raises `ValueError` naming
    /// its position.
    fn encrypt(&self, value: &str) -> PyResult<String> {
        self.cipher
            .run(value, Direction::Encrypt)
            .map_err(PyValueError::new_err)
    }

    /// Decrypts one string; the inverse of `encrypt`.
    fn decrypt(&self, value: &str) -> PyResult<String> {
        self.cipher
            .run(value, Direction::Decrypt)
            .map_err(PyValueError::new_err)
    }

    /// Keystream bytes per value (from the largest radix and the security level).
    #[getter]
    fn bytes_per_value(&self) -> usize {
        self.cipher.bytes_per_value()
    }

    #[pyo3(signature = (values, encrypt, threads))]
    fn _strings<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyList>,
        encrypt: bool,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (rows, texts) = strings_of(values)?;
        let direction = direction_of(encrypt);
        let done = detached(py, threads, |t| self.cipher.run_many(&texts, direction, t))?
            .map_err(|e| row_error(renumber(e, &rows)))?;
        let mut out: Vec<Option<String>> = vec![None; values.len()];
        for (row, text) in rows.into_iter().zip(done) {
            out[row] = Some(text);
        }
        PyList::new(py, out)
    }

    #[pyo3(signature = (offsets, data, valid, encrypt, threads))]
    fn _arrow_strings<'py>(
        &self,
        py: Python<'py>,
        offsets: PyReadonlyArray1<'py, i64>,
        data: PyReadonlyArray1<'py, u8>,
        valid: Option<PyReadonlyArray1<'py, bool>>,
        encrypt: bool,
        threads: Option<usize>,
    ) -> PyResult<ArrowStrings<'py>> {
        // Copied while the GIL is held: Python code may change the arrays once it is released.
        let offsets: Vec<i64> = offsets.as_array().iter().copied().collect();
        let data: Vec<u8> = data.as_array().iter().copied().collect();
        let valid: Option<Vec<bool>> = valid.map(|v| v.as_array().iter().copied().collect());
        let direction = direction_of(encrypt);
        let (offsets, data) = detached(py, threads, |t| {
            arrow_strings(
                &self.cipher,
                &offsets,
                &data,
                valid.as_deref(),
                direction,
                t,
            )
        })?
        .map_err(row_error)?;
        Ok((
            PyArray1::from_vec(py, offsets),
            PyArray1::from_vec(py, data),
        ))
    }

    fn __repr__(&self) -> String {
        format!("FormatCipher({})", self.description)
    }
}

/// The AES implementation a key runs on with this CPU, as `riffpe --version` names it.
#[pyfunction]
fn aes_backend() -> String {
    riffpe::AesBackend::detect().to_string()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(aes_backend, m)?)?;
    m.add_class::<Riffpe>()?;
    m.add_class::<RiffpeX>()?;
    m.add_class::<CBCTweakablePRNG>()?;
    m.add_class::<FormatCipher>()?;
    Ok(())
}
