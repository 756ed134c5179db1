"""The public cipher classes: the compiled ones plus the array methods."""

from __future__ import annotations

from typing import Any

from . import _batch, _native, _strings


class _BatchMethods:
    """Array methods shared by :class:`Riffpe` and :class:`RiffpeX`.

    Every one returns a new array of the input's type and dtype, checks the whole input before
    any work (errors name the row, never the value), and releases the GIL while it runs.
    ``threads=None`` uses every core, ``threads=1`` only the calling thread.
    """

    def encrypt_ints(self, values: Any, *, order: str = "little", threads: int | None = None):
        """Encrypts integers of the domain (``0 <= v < size``).

        ``values``: a 1-D numpy ``uint64`` or ``int64`` array, an Arrow ``int64``/``uint64``
        array (anything with ``__arrow_c_array__``; nulls stay null), a pandas Series
        (``int64``, ``uint64``, nullable ``Int64``/``UInt64`` or ``int64[pyarrow]``; a Series
        with the same index, name and dtype comes back, missing values kept), or a sequence
        of ints (a list comes back). ``order='little'`` makes digit 0 the least significant,
        ``'big'`` the last digit (the reference command line's ``-B``).
        """
        return _batch.ints(self, values, True, order, threads)

    def decrypt_ints(self, values: Any, *, order: str = "little", threads: int | None = None):
        """Decrypts integers; the inverse of :meth:`encrypt_ints` with the same ``order``."""
        return _batch.ints(self, values, False, order, threads)

    def encrypt_digits(self, digits: Any, *, threads: int | None = None):
        """Encrypts a 2-D integer array of messages, one per row, ``self.digits`` columns."""
        return _batch.digits(self, digits, True, threads)

    def decrypt_digits(self, digits: Any, *, threads: int | None = None):
        """Decrypts a 2-D integer array of messages; the inverse of :meth:`encrypt_digits`."""
        return _batch.digits(self, digits, False, threads)


class Riffpe(_BatchMethods, _native.Riffpe):
    """Riffpe over ``digits`` digits of one ``radix``.

    ``Riffpe(radix, digits, key, tweak, bytes_per_value=16, *, constant_time=None)``: ``key``
    is a bytes-like AES key of 16, 24 or 32 bytes, ``tweak`` bytes-like (may be empty). Invalid
    parameters raise ``ValueError``. :meth:`encrypt` and :meth:`decrypt` take a sequence of
    digits and return a new list; a wrong length or a digit not below the radix raises
    ``ValueError``. ``constant_time=True`` reads each permutation off the keystream with
    branches and memory accesses that do not depend on the values, ``False`` with faster
    bucket lookups whose timing does; both give the same results. The default, ``None``, is
    constant-time up to radix 256 (where one message costs about 1.0 to 1.25 times the fast
    mode, and batches on x86-64 with AVX2 1.15 to 1.3 times from radix 17 on, as the Rust
    crate's security notes give) and fast above.
    """


class RiffpeX(_BatchMethods, _native.RiffpeX):
    """RiffpeX: digit ``i`` below ``radices[i]``.

    ``RiffpeX(radices, key, tweak, bytes_per_value=16, *, constant_time=None)``; otherwise as
    :class:`Riffpe` (the default selection follows the largest radix).
    """


class FormatCipher(_native.FormatCipher):
    """Strings of one format: each encrypted character becomes one RiffpeX digit.

    ``FormatCipher(key, format=None, *, template=None, alphabet=None, passthrough=None,
    alphabets=None, keep_prefix=None, keep_suffix=None, luhn=None, fold_case=None,
    literals_optional=None, allow_small_domain=False, context=None, security=128,
    constant_time=None)``

    Give exactly one of:

    - ``format``: a named format: ``'digits'``, ``'card'`` (Luhn kept, spaces and dashes
      pass through), ``'card-keep-6-4'``, ``'card-keep-last-4'``, ``'ssn'``, ``'phone'``,
      ``'alnum'``, ``'auto'``, ``'hex'``, ``'uuid'``;
    - ``template``: one item per character, e.g. ``'999-99-9999'``, ``'A9{7}'``,
      ``'[a-f0-9]{8}'``; ``alphabets`` maps extra ``{name}`` items to their characters;
    - ``alphabet``: free form over a built-in alphabet's name (``'digits'``, ``'hex'``,
      ``'HEX'``, ``'lower'``, ``'upper'``, ``'alnum'``, ``'printable'``) or the characters
      themselves in digit order; the characters of ``passthrough`` stay where they are.

    The other arguments adjust it (``None`` keeps the format's own choice): ``keep_prefix`` /
    ``keep_suffix`` leave the first / last characters as they are, ``luhn`` is ``'preserve'``
    (a Luhn-valid number encrypts to one), ``'invalid'`` (tokens always fail the check) or
    ``'off'``, ``fold_case`` accepts either case and keeps it, ``literals_optional`` lets a
    template's value lack every literal (``'123456789'`` for ``'999-99-9999'``, as ``'ssn'``
    does; its token lacks them too), ``allow_small_domain`` lifts the minimum of 10^6 values,
    ``context`` (bytes-like) is bound into every value's tweak, ``security`` is 128 or 256
    (bytes per value), ``constant_time`` as for :class:`Riffpe`.
    ``key`` is a bytes-like AES key of 16, 24 or 32 bytes. Invalid formats raise
    ``ValueError``; ``passthrough`` without ``alphabet``, or ``alphabets`` without
    ``template``, raises ``TypeError``.

    :meth:`encrypt` and :meth:`decrypt` take one ``str``; a value the format does not take
    raises ``ValueError`` naming a character position, never a character.
    """

    def encrypt_strings(self, values: Any, *, threads: int | None = None):
        """Encrypts many strings; the result equals :meth:`encrypt` on each.

        ``values``: a sequence of ``str`` or ``None`` (a list comes back), a 1-D numpy array of
        ``str`` or ``object`` (an array of the same dtype comes back), or an Arrow string
        array (anything with ``__arrow_c_array__`` or ``__arrow_c_stream__``; a pyarrow
        array of the same type comes back), or a pandas Series of ``object`` or ``string``
        dtype (a Series with the same index, name and dtype comes back). ``None``, nulls and
        a Series' missing values (``NaN``, as ``read_csv`` leaves for an empty cell, or
        ``pd.NA``) stay as they are. The whole input is checked first: a refused value raises
        ``ValueError`` naming its row (and character position), never the value; the input is
        never modified. The GIL is released while Rust works; ``threads=None`` uses every
        core, ``threads=1`` only the calling thread, ``threads=n`` a pool of ``n``.
        """
        return _strings.strings(self, values, True, threads)

    def decrypt_strings(self, values: Any, *, threads: int | None = None):
        """Decrypts many strings; the inverse of :meth:`encrypt_strings`."""
        return _strings.strings(self, values, False, threads)


__all__ = ("Riffpe", "RiffpeX", "FormatCipher")
