//! The per-value RiffpeX tweak: versioned, type-tagged, length-prefixed fields.

use alloc::vec::Vec;

/// The tweak's first bytes: a name and the layout version.
pub const TWEAK_MAGIC: &[u8; 13] = b"riffpe-format";
/// The version of the tweak layout, the byte after [`TWEAK_MAGIC`].
pub const TWEAK_VERSION: u8 = 1;

// Top-level fields of the tweak, in this order.
pub(crate) const FORMAT: u8 = 0x01;
pub(crate) const SHAPE: u8 = 0x02;
pub(crate) const KEPT_PREFIX: u8 = 0x03;
pub(crate) const KEPT_SUFFIX: u8 = 0x04;
pub(crate) const CONTEXT: u8 = 0x05;

// Fields of the format's encoding (the body of `FORMAT`), in this order.
pub(crate) const FORMAT_ALPHABETS: u8 = 0x10;
pub(crate) const FORMAT_SHAPE: u8 = 0x11;
pub(crate) const FORMAT_KEEP: u8 = 0x12;
pub(crate) const FORMAT_LUHN: u8 = 0x13;
pub(crate) const FORMAT_CASE: u8 = 0x14;

/// Appends `tag || LE32(len(body)) || body`, the body written by `body`.
pub(crate) fn field(out: &mut Vec<u8>, tag: u8, body: impl FnOnce(&mut Vec<u8>)) {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    body(out);
    // Bodies are bounded by MAX_CHARS and the alphabet size, far below 4 GiB.
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// Appends the whole tweak of one value to `out`: the format's `encoding`, then the fields
/// written by their functions straight into it (at most `written` bytes in all).
pub(crate) fn build(
    out: &mut Vec<u8>,
    encoding: &[u8],
    written: usize,
    shape: impl FnOnce(&mut Vec<u8>),
    kept_prefix: impl FnOnce(&mut Vec<u8>),
    kept_suffix: impl FnOnce(&mut Vec<u8>),
    context: &[u8],
) {
    out.reserve(TWEAK_MAGIC.len() + 1 + 5 * 5 + encoding.len() + written + context.len());
    out.extend_from_slice(TWEAK_MAGIC);
    out.push(TWEAK_VERSION);
    field(out, FORMAT, |out| out.extend_from_slice(encoding));
    field(out, SHAPE, shape);
    field(out, KEPT_PREFIX, kept_prefix);
    field(out, KEPT_SUFFIX, kept_suffix);
    field(out, CONTEXT, |out| out.extend_from_slice(context));
}
