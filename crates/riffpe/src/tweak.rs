//! The tweak of a call: the one fixed at construction, one for the whole call, or one per message.

use core::ops::Range;

/// Which tweak a call encrypts under. Every call that takes several messages takes one, so
/// a column of rows with a tweak each runs in lockstep as fast as rows sharing one.
///
/// ```
/// use riffpe::{Riffpe, ScratchBuf, Tweak};
///
/// let fpe = Riffpe::new(10, 6, &[0x2b; 16], b"fixed")?;
/// let mut buf = ScratchBuf::for_lockstep(&fpe);
/// let mut two = [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6];
/// let rows: [&[u8]; 2] = [b"row 1", b"row 2"];
/// fpe.encrypt_with(Tweak::PerMessage(&rows), &mut two, &mut buf.scratch())?;
///
/// let mut one = [1, 2, 3, 4, 5, 6];
/// fpe.encrypt_with(Tweak::Bytes(b"row 2"), &mut one, &mut buf.scratch())?;
/// assert_eq!(two[6..], one);
/// # Ok::<(), riffpe::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tweak<'a> {
    /// The tweak given at construction, whose set-up was computed then.
    #[default]
    Fixed,
    /// These bytes for every message of the call (one set-up CBC-MAC per call).
    Bytes(&'a [u8]),
    /// One tweak per message, in message order (one set-up CBC-MAC per message).
    PerMessage(&'a [&'a [u8]]),
}

impl<'a> Tweak<'a> {
    /// The tweaks of the messages in `messages` (indices into the call's messages): what a
    /// call on that sub-slice of them takes (the batch crate splits work this way).
    pub fn slice(self, messages: Range<usize>) -> Tweak<'a> {
        match self {
            Tweak::PerMessage(tweaks) => {
                let end = messages.end.min(tweaks.len());
                Tweak::PerMessage(&tweaks[messages.start.min(end)..end])
            }
            shared => shared,
        }
    }
}
