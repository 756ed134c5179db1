"""The public cipher classes: the compiled ones plus the batch API."""

from __future__ import annotations

from typing import Any

from . import _batch, _native


class _BatchMethods:
    """Array methods shared by :class:`Riffpe` and :class:`RiffpeX`.

    Every one returns a new array of the input's type and dtype, checks the whole input before
    any work (errors name the row, never the value), and releases the GIL while it runs.
    ``threads=None`` uses every core, ``threads=1`` only the calling thread.
    """

    def encrypt_ints(self, values: Any, *, order: str = "little", threads: int | None = None):
        """Encrypts integers of the domain (``0 <= v < size``).

        ``values``: a 1-D numpy ``uint64`` or ``int64`` array, an Arrow ``int64``/``uint64``
        array (anything with ``__arrow_c_array__``; nulls stay null), or a sequence of ints
        (a list comes back). ``order='little'`` makes digit 0 the least significant,
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

    # String formats (``encrypt_strings`` / ``decrypt_strings``) belong here once the format
    # crate has bindings: they map strings to RiffpeX digits and back around the same batch.


class Riffpe(_BatchMethods, _native.Riffpe):
    """Riffpe over ``digits`` digits of one ``radix``.

    ``Riffpe(radix, digits, key, tweak, bytes_per_value=16)``: ``key`` is a bytes-like AES key
    of 16, 24 or 32 bytes, ``tweak`` bytes-like (may be empty). Invalid parameters raise
    ``ValueError``. :meth:`encrypt` and :meth:`decrypt` take a sequence of digits and return a
    new list; a wrong length or a digit not below the radix raises ``ValueError``.
    """


class RiffpeX(_BatchMethods, _native.RiffpeX):
    """RiffpeX: digit ``i`` below ``radices[i]``.

    ``RiffpeX(radices, key, tweak, bytes_per_value=16)``; otherwise as :class:`Riffpe`.
    """


__all__ = ("Riffpe", "RiffpeX")
