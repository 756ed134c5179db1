//! A key and a format: encrypts and decrypts strings, one at a time or in bulk.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::engine::{Key, Permutations, Scratch, Tweaks};
use crate::format::{Direction, Plan, Plans, trim, wipe};
use crate::{BulkError, Error, Format, Selection};

/// Encrypts and decrypts strings of one [`Format`] under one key.
///
/// The key is expanded once, inside the core's AES object; `Debug` shows the format only.
///
/// ```
/// use riffpe_format::{Format, FormatCipher};
///
/// let cipher = FormatCipher::new(&[0x2b; 16], Format::named("ssn")?)?;
/// let token = cipher.encrypt("123-45-6789")?;
/// assert_eq!(token.len(), 11);
/// assert_eq!(&token[3..4], "-");
/// assert_eq!(cipher.decrypt(&token)?, "123-45-6789");
/// # Ok::<(), riffpe_format::Error>(())
/// ```
pub struct FormatCipher {
    format: Format,
    key: Key,
    context: Vec<u8>,
    /// [`Format::encoding`], the first field of every value's tweak: encoded once.
    encoding: Vec<u8>,
    bytes_per_value: usize,
    /// `None`: each permutation's default ([`Selection::default_for`] its largest radix).
    selection: Option<Selection>,
    /// A template's one RiffpeX object, made once.
    fixed: Option<Permutations>,
}

impl fmt::Debug for FormatCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FormatCipher")
            .field("format", &self.format)
            .field("bytes_per_value", &self.bytes_per_value)
            .field("selection", &self.selection)
            .finish_non_exhaustive()
    }
}

impl FormatCipher {
    /// A cipher for `format` ([`Format::check`]ed) under a 16-, 24- or 32-byte AES `key`, with
    /// the core's default [`Selection`]: constant-time for alphabets of up to 256 characters.
    pub fn new(key: &[u8], format: Format) -> Result<Self, Error> {
        Self::with_selection(key, format, None)
    }

    /// As [`FormatCipher::new`], with the permutations read off the keystream as `selection`
    /// says (`None`: the core's default): [`Selection::Fast`] where nobody can time or observe
    /// the cache of the process (the same tokens; the cost of each is in the core crate's
    /// security notes).
    ///
    /// ```
    /// use riffpe_format::{Format, FormatCipher, Selection};
    ///
    /// let key = [0x2b; 16];
    /// let constant_time = FormatCipher::new(&key, Format::named("card")?)?;
    /// let fast = FormatCipher::with_selection(&key, Format::named("card")?, Selection::Fast)?;
    /// let card = "4111-1111-1111-1111";
    /// assert_eq!(constant_time.encrypt(card)?, fast.encrypt(card)?);
    /// # Ok::<(), riffpe_format::Error>(())
    /// ```
    pub fn with_selection(
        key: &[u8],
        format: Format,
        selection: impl Into<Option<Selection>>,
    ) -> Result<Self, Error> {
        let selection = selection.into();
        format.check()?;
        let key = Key::new(key)?;
        let bytes_per_value = format.bytes_per_value();
        let fixed = match format.fixed_radices() {
            Some(radices) => Some(key.permutations(&radices, bytes_per_value, selection)?),
            None => None,
        };
        Ok(FormatCipher {
            bytes_per_value,
            selection,
            encoding: format.encoding(),
            format,
            key,
            context: Vec::new(),
            fixed,
        })
    }

    /// The same cipher with a caller's tweak (a table or column name, a tenant id) bound into
    /// every value's tweak: values under different contexts use unrelated permutations.
    pub fn context(mut self, context: &[u8]) -> Self {
        self.context = context.to_vec();
        self
    }

    /// The format.
    pub fn format(&self) -> &Format {
        &self.format
    }

    /// Encrypts one value.
    pub fn encrypt(&self, value: &str) -> Result<String, Error> {
        self.one(value, Direction::Encrypt)
    }

    /// Decrypts one value.
    pub fn decrypt(&self, value: &str) -> Result<String, Error> {
        self.one(value, Direction::Decrypt)
    }

    /// The RiffpeX tweak of `value` (the same for a value and its token; the Luhn residue is
    /// not checked).
    pub fn tweak(&self, value: &str) -> Result<Vec<u8>, Error> {
        let plans = self
            .format
            .plan_one(value, &self.encoding, &self.context, None)?;
        Ok(plans.get(0).tweak.to_vec())
    }

    fn one(&self, value: &str, direction: Direction) -> Result<String, Error> {
        let plans = self
            .format
            .plan_one(value, &self.encoding, &self.context, Some(direction))?;
        let plan = plans.get(0);
        let made;
        let fpe = match &self.fixed {
            Some(fpe) => fpe,
            None => {
                made = self
                    .key
                    .permutations(plan.radices, self.bytes_per_value, self.selection)?;
                &made
            }
        };
        let mut digits = plan.digits.to_vec();
        fpe.apply(plan.tweak, &mut digits, direction)?;
        self.walk(&plan, fpe, &mut digits, direction)?;
        Ok(self.format.render(&plan, &digits))
    }

    /// Cycle-walks a case-folded value in the alphabet's other case until its output has a
    /// letter, so that decryption can read its case back; terminates because the input,
    /// which has a letter, is on the permutation's cycle.
    fn walk(
        &self,
        plan: &Plan<'_>,
        fpe: &Permutations,
        digits: &mut [u32],
        direction: Direction,
    ) -> Result<(), Error> {
        if self.format.needs_letter(plan) {
            while !self.format.has_letter(plan, digits) {
                fpe.apply(plan.tweak, digits, direction)?;
            }
        }
        Ok(())
    }

    /// Encrypts many values, of one shape or of many: values of equal radices go through the
    /// core together, each under its own tweak, advancing in lockstep (values of one tweak set
    /// it up once). All values are checked first; the first refused one is reported by index
    /// and nothing is returned.
    ///
    /// ```
    /// use riffpe_format::{Format, FormatCipher};
    ///
    /// let cipher = FormatCipher::new(&[0x2b; 16], Format::named("phone")?)?;
    /// let phones = ["+1 (555) 010-9999", "555.010.1234", "+44 20 7946 0000"];
    /// let tokens = cipher.encrypt_many(&phones)?;
    /// assert_eq!(tokens[1], cipher.encrypt(phones[1])?);
    /// assert_eq!(cipher.decrypt_many(&tokens)?, phones);
    ///
    /// let err = cipher.encrypt_many(&["555-0100", "555-O100"]).unwrap_err();
    /// assert_eq!((err.index, err.error), (1, riffpe_format::Error::InvalidChar { position: 4 }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt_many<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<String>, BulkError> {
        self.encrypt_many_in(values, &mut BulkScratch::default())
    }

    /// Decrypts many values; see [`FormatCipher::encrypt_many`].
    pub fn decrypt_many<S: AsRef<str>>(&self, values: &[S]) -> Result<Vec<String>, BulkError> {
        self.decrypt_many_in(values, &mut BulkScratch::default())
    }

    /// Encrypts many values, each under its own context in place of the cipher's (a row's
    /// tweak column, say); otherwise as [`FormatCipher::encrypt_many`]. Values of equal
    /// radices still run in one lockstep call.
    ///
    /// ```
    /// use riffpe_format::{Format, FormatCipher};
    ///
    /// let cipher = FormatCipher::new(&[0x2b; 16], Format::named("ssn")?)?;
    /// let rows = [("123-45-6789", &b"alice"[..]), ("123-45-6789", &b"bob"[..])];
    /// let tokens = cipher.encrypt_many_with_contexts(&rows)?;
    /// let alice = FormatCipher::new(&[0x2b; 16], Format::named("ssn")?)?.context(b"alice");
    /// assert_eq!(tokens[0], alice.encrypt("123-45-6789")?);
    /// assert_ne!(tokens[0], tokens[1]);
    /// let back: Vec<_> = tokens.iter().zip(&rows).map(|(t, r)| (t.as_str(), r.1)).collect();
    /// assert_eq!(cipher.decrypt_many_with_contexts(&back)?, ["123-45-6789"; 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt_many_with_contexts<S: AsRef<str>, C: AsRef<[u8]>>(
        &self,
        values: &[(S, C)],
    ) -> Result<Vec<String>, BulkError> {
        self.encrypt_many_with_contexts_in(values, &mut BulkScratch::default())
    }

    /// Decrypts many values, each under its own context; see
    /// [`FormatCipher::encrypt_many_with_contexts`].
    pub fn decrypt_many_with_contexts<S: AsRef<str>, C: AsRef<[u8]>>(
        &self,
        values: &[(S, C)],
    ) -> Result<Vec<String>, BulkError> {
        self.decrypt_many_with_contexts_in(values, &mut BulkScratch::default())
    }

    /// As [`FormatCipher::encrypt_many`], taking the values apart in `scratch`'s buffers
    /// rather than in new ones: a caller that runs many calls (chunks of a file, say) keeps one
    /// [`BulkScratch`] per thread, so that each call allocates its tokens and a few small
    /// buffers per shape group, not its large buffers again.
    ///
    /// ```
    /// use riffpe_format::{BulkScratch, Format, FormatCipher};
    ///
    /// let cipher = FormatCipher::new(&[0x2b; 16], Format::named("card")?)?;
    /// let cards = ["4111 1111 1111 1111", "5500-0000-0000-0004", "3400 000000 00009"];
    /// let mut scratch = BulkScratch::default();
    /// let mut tokens = Vec::new();
    /// for chunk in cards.chunks(2) {
    ///     tokens.extend(cipher.encrypt_many_in(chunk, &mut scratch)?);
    /// }
    /// assert_eq!(tokens, cipher.encrypt_many(&cards)?);
    /// assert_eq!(cipher.decrypt_many_in(&tokens, &mut scratch)?, cards);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt_many_in<S: AsRef<str>>(
        &self,
        values: &[S],
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        self.many(values, Direction::Encrypt, scratch)
    }

    /// As [`FormatCipher::decrypt_many`], in `scratch`'s buffers; see
    /// [`FormatCipher::encrypt_many_in`].
    pub fn decrypt_many_in<S: AsRef<str>>(
        &self,
        values: &[S],
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        self.many(values, Direction::Decrypt, scratch)
    }

    /// As [`FormatCipher::encrypt_many_with_contexts`], in `scratch`'s buffers; see
    /// [`FormatCipher::encrypt_many_in`].
    pub fn encrypt_many_with_contexts_in<S: AsRef<str>, C: AsRef<[u8]>>(
        &self,
        values: &[(S, C)],
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        self.many_with_contexts(values, Direction::Encrypt, scratch)
    }

    /// As [`FormatCipher::decrypt_many_with_contexts`], in `scratch`'s buffers; see
    /// [`FormatCipher::encrypt_many_in`].
    pub fn decrypt_many_with_contexts_in<S: AsRef<str>, C: AsRef<[u8]>>(
        &self,
        values: &[(S, C)],
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        self.many_with_contexts(values, Direction::Decrypt, scratch)
    }

    fn many<S: AsRef<str>>(
        &self,
        values: &[S],
        direction: Direction,
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        self.many_in(
            values.len(),
            |i| (values[i].as_ref(), &self.context[..]),
            direction,
            scratch,
        )
    }

    fn many_with_contexts<S: AsRef<str>, C: AsRef<[u8]>>(
        &self,
        values: &[(S, C)],
        direction: Direction,
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        self.many_in(
            values.len(),
            |i| (values[i].0.as_ref(), values[i].1.as_ref()),
            direction,
            scratch,
        )
    }

    /// The values' tokens, `scratch` emptied (and wiped) afterwards whatever the outcome.
    fn many_in<'v>(
        &self,
        len: usize,
        value: impl Fn(usize) -> (&'v str, &'v [u8]),
        direction: Direction,
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        let result = self.many_in_buffers(len, value, direction, scratch);
        scratch.clear();
        result
    }

    fn many_in_buffers<'v>(
        &self,
        len: usize,
        value: impl Fn(usize) -> (&'v str, &'v [u8]),
        direction: Direction,
        scratch: &mut BulkScratch,
    ) -> Result<Vec<String>, BulkError> {
        let BulkScratch {
            plans,
            outputs,
            messages,
            lockstep,
            counts,
            batch,
            shared,
        } = scratch;
        // Room for values as long as the first (in bytes, at least its characters).
        plans.reserve(len, if len > 0 { value(0).0.len() } else { 0 });
        for index in 0..len {
            let (v, context) = value(index);
            self.format
                .plan(plans, v, &self.encoding, context, Some(direction))
                .map_err(|error| BulkError { index, error })?;
        }
        let plans = &*plans;
        // Shape groups: values sharing radices run through one RiffpeX object, in lockstep.
        let mut groups: BTreeMap<&[u32], Vec<usize>> = BTreeMap::new();
        for i in 0..plans.len() {
            groups.entry(plans.get(i).radices).or_default().push(i);
        }
        // Every value's digits, back to back, as the plans hold them.
        outputs.extend_from_slice(plans.all_digits());
        let mut tweaks: Vec<&[u8]> = Vec::new();
        // One lockstep call over `batch` (values of one radix vector, `width` digits each),
        // under one tweak set up once or each under its own; the digits back in `outputs`.
        let mut run = |fpe: &Permutations, width: usize, batch: &[usize], one: Option<&[u8]>| {
            messages.clear();
            messages.reserve(batch.len() * width);
            for &i in batch {
                messages.extend_from_slice(&outputs[plans.digits_of(i)]);
            }
            let batch_tweaks = match one {
                Some(tweak) => Tweaks::Shared(tweak),
                None => {
                    tweaks.clear();
                    tweaks.extend(batch.iter().map(|&i| plans.get(i).tweak));
                    Tweaks::Each(&tweaks)
                }
            };
            fpe.apply_many(batch_tweaks, messages, direction, lockstep)
                .map_err(|error| (None, error))?;
            for (&i, chunk) in batch.iter().zip(messages.chunks_exact(width)) {
                let output = &mut outputs[plans.digits_of(i)];
                output.copy_from_slice(chunk);
                self.walk(&plans.get(i), fpe, output, direction)
                    .map_err(|error| (Some(i), error))?;
            }
            Ok(())
        };
        for (radices, members) in &groups {
            // A refusal of the whole call is reported at the group's first value.
            let at = |(index, error): (Option<usize>, Error)| BulkError {
                index: index.unwrap_or(members[0]),
                error,
            };
            let fpe = self
                .key
                .permutations(radices, self.bytes_per_value, self.selection)
                .map_err(|error| at((None, error)))?;
            let width = radices.len();
            // Values of one tweak (a shape without kept characters, one context) share its
            // set-up, a lane set or the whole group at a time; the others run each under its own.
            let least = fpe.lanes().min(members.len());
            split_by_tweak(plans, members, least, counts, shared, batch);
            for same in shared.chunk_by(|&a, &b| plans.tweak_id(a) == plans.tweak_id(b)) {
                let tweak = plans.get(same[0]).tweak;
                run(&fpe, width, same, Some(tweak)).map_err(at)?;
            }
            if !batch.is_empty() {
                run(&fpe, width, batch, None).map_err(at)?;
            }
        }
        Ok((0..plans.len())
            .map(|i| {
                self.format
                    .render(&plans.get(i), &outputs[plans.digits_of(i)])
            })
            .collect())
    }
}

/// Splits a shape group's `members` (value indices, ascending) by tweak: the values of each
/// tweak that at least `least` of them have go to `shared`, tweak by tweak, in order; the others
/// to `each`. `counts` is working room, a slot per tweak id.
fn split_by_tweak(
    plans: &Plans,
    members: &[usize],
    least: usize,
    counts: &mut Vec<usize>,
    shared: &mut Vec<usize>,
    each: &mut Vec<usize>,
) {
    // A tweak whose values run each under its own.
    const NOT_SHARED: usize = usize::MAX;
    counts.clear();
    counts.resize(plans.distinct_tweaks(), 0);
    for &i in members {
        counts[plans.tweak_id(i)] += 1;
    }
    // Each shared tweak's first place in `shared`, after the tweaks of lower ids.
    let mut places = 0;
    for count in counts.iter_mut() {
        let n = core::mem::replace(count, NOT_SHARED);
        if n >= least {
            *count = places;
            places += n;
        }
    }
    shared.clear();
    shared.resize(places, 0);
    each.clear();
    for &i in members {
        match &mut counts[plans.tweak_id(i)] {
            &mut NOT_SHARED => each.push(i),
            place => {
                shared[*place] = i;
                *place += 1;
            }
        }
    }
}

/// The buffers that [`FormatCipher::encrypt_many_in`] and its siblings take values apart in,
/// kept between calls so that a run of calls does not allocate them again: one per thread. Each
/// call empties them before it returns, wiping the characters, digits and tweaks they held
/// (with the `zeroize` feature, the default), and gives back room beyond 2^20 characters (about
/// 40 MB), so that a call of very long values does not leave its peak held by every thread.
#[derive(Default)]
pub struct BulkScratch {
    plans: Plans,
    /// Every value's digits, then tokens.
    outputs: Vec<u32>,
    /// One lockstep call's digits, back to back.
    messages: Vec<u32>,
    lockstep: Scratch,
    /// A shape group's values of each tweak id, then where the next goes in `shared`.
    counts: Vec<usize>,
    /// Values of a shape group that run each under its own tweak.
    batch: Vec<usize>,
    /// Values of a shape group that share one tweak.
    shared: Vec<usize>,
}

impl BulkScratch {
    /// Empties and wipes the buffers, keeping room for at most [`Plans::ROOM`] characters.
    fn clear(&mut self) {
        self.plans.clear();
        wipe(&mut self.outputs);
        wipe(&mut self.messages);
        trim(&mut self.outputs, Plans::ROOM);
        trim(&mut self.messages, Plans::ROOM);
        for indices in [&mut self.batch, &mut self.shared] {
            indices.clear();
            trim(indices, Plans::ROOM_VALUES);
        }
        self.counts.clear();
        trim(&mut self.counts, Plans::ROOM_VALUES);
    }
}

impl fmt::Debug for BulkScratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkScratch").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// The largest room of the scratch's per-character buffers, and its room for values.
    fn room(scratch: &BulkScratch) -> (usize, usize) {
        let (chars, values) = scratch.plans.room();
        let own = scratch.outputs.capacity().max(scratch.messages.capacity());
        (chars.max(own), values)
    }

    /// Values of tweaks that enough values share go to `shared`, tweak by tweak in order of
    /// first use and in value order within; the others to `each`, in value order.
    #[test]
    fn a_group_is_split_by_tweak() {
        let format = Format::named("phone").unwrap();
        // Tweak ids 0, 1, 0, 2, 1, 0, 3.
        let values = [
            "555-010-0000",
            "(555) 010-0001",
            "555-010-0002",
            "555.010.0003",
            "(555) 010-0004",
            "555-010-0005",
            "555 010 0006",
        ];
        let plans = crate::format::planned(&format, &values);
        let (mut counts, mut shared, mut each) = (Vec::new(), Vec::new(), Vec::new());
        let all: Vec<usize> = (0..values.len()).collect();
        split_by_tweak(&plans, &all, 2, &mut counts, &mut shared, &mut each);
        assert_eq!(
            (&shared[..], &each[..]),
            (&[0, 2, 5, 1, 4][..], &[3, 6][..])
        );
        split_by_tweak(&plans, &all, 3, &mut counts, &mut shared, &mut each);
        assert_eq!(
            (&shared[..], &each[..]),
            (&[0, 2, 5][..], &[1, 3, 4, 6][..])
        );
        split_by_tweak(&plans, &[1, 3, 4], 2, &mut counts, &mut shared, &mut each);
        assert_eq!((&shared[..], &each[..]), (&[1, 4][..], &[3][..]));
    }

    /// A call of very long values gives back what it took beyond the room kept between calls,
    /// refused or not; a call of short values keeps its room for the next.
    #[test]
    fn a_kept_scratch_gives_back_room_beyond_its_bound() {
        let cipher = FormatCipher::new(&[0x2b; 16], Format::named("digits").unwrap()).unwrap();
        let mut scratch = BulkScratch::default();

        let cards = ["4111111111111111"; 100];
        let tokens = cipher.encrypt_many_in(&cards, &mut scratch).unwrap();
        let (chars, values) = room(&scratch);
        assert!(chars >= 100 * 16 && values >= 100, "{chars}, {values}");

        // Planned in full (taking more characters than the bound), then refused.
        let values = Plans::ROOM / 256 + 100;
        let mut long = vec![String::from("1").repeat(256); values];
        long.push(String::from("12x4"));
        let error = cipher.encrypt_many_in(&long, &mut scratch).unwrap_err();
        assert_eq!(error.index, values, "{error:?}");
        let (chars, _) = room(&scratch);
        assert!(chars <= Plans::ROOM, "{chars}");

        // More values than the room kept for values.
        let mut many = vec!["1234567"; Plans::ROOM_VALUES + 1_000];
        many.push("12x4");
        assert!(cipher.encrypt_many_in(&many, &mut scratch).is_err());
        let (_, values) = room(&scratch);
        assert!(values <= Plans::ROOM_VALUES, "{values}");

        assert_eq!(
            cipher.decrypt_many_in(&tokens, &mut scratch).unwrap(),
            cards
        );
    }
}
