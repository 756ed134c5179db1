"""RiffpeX in plain Python: Riffpe with one radix per digit and its own set-up prefix."""

from __future__ import annotations

from collections.abc import Sequence

from .Riffpe import Riffpe


class RiffpeX(Riffpe):
    """RiffpeX: digit ``i`` below ``radices[i]``.

    Its outputs differ from Riffpe's even over the same domain: the set-up prefix differs.
    """

    def __init__(
        self, radices: Sequence[int], key: bytes, tweak: bytes, bytes_per_value: int = 16
    ):
        radices = list(radices)
        if not radices or min(radices) < 2 or bytes_per_value < 1:
            raise ValueError("radices must be at least 2, bytes_per_value at least 1")
        self.radices = radices
        self.digits = len(radices)
        self.bytes_per_value = bytes_per_value
        # prefix = LE32(r_0) ':' LE32(r_1) ':' ... LE32(r_{l-1}) '^' T
        prefix = b":".join(r.to_bytes(4, "little") for r in radices) + b"^" + bytes(tweak)
        self._setup(key, radices, prefix)
