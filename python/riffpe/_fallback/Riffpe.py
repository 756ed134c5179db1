"""Riffpe in plain Python, step by step as SPEC.md states it: slow, for reading and testing."""

from __future__ import annotations

import struct

from .._native import aes_backend
from .CBCTweakablePRNG import CBCTweakablePRNG
from .Perm import Perm


def _pkcs7(data: bytes) -> bytes:
    pad = 16 - len(data) % 16
    return data + bytes([pad]) * pad


def _width(radix: int) -> int:
    if radix < 2**8:
        return 1
    if radix < 2**16:
        return 2
    if radix < 2**32:
        return 4
    raise ValueError(f"radix {radix} is not below 2^32")


def _cbcmac(key: bytes, iv: bytes, data: bytes) -> bytes:
    # With an empty tweak the generator's first block is E(iv): AES on one block.
    aes = CBCTweakablePRNG(key, b"")
    state = iv
    for at in range(0, len(data), 16):
        block = bytes(s ^ d for s, d in zip(state, data[at : at + 16]))
        aes.reset(b"", block)
        state = aes.get_bytes(16)
    return state


class Riffpe:
    """Riffpe over ``digits`` digits of one ``radix``."""

    def __init__(
        self, radix: int, digits: int, key: bytes, tweak: bytes, bytes_per_value: int = 16
    ):
        if radix < 2 or digits < 1 or bytes_per_value < 1:
            raise ValueError("radix must be at least 2, digits and bytes_per_value at least 1")
        self.radix = radix
        self.digits = digits
        self.bytes_per_value = bytes_per_value
        self._setup(key, [radix] * digits, struct.pack("<IIQ", radix, digits, len(tweak)) + tweak)

    def _setup(self, key: bytes, radices: list[int], prefix: bytes) -> None:
        self._key = bytes(key)
        self._radices = radices
        self._width = _width(max(radices))
        if len(radices) - 1 >= 2 ** (8 * self._width):
            raise ValueError("too many digits for the element width")
        self._perms = [Perm(r, self.bytes_per_value) for r in radices]
        # Set-up: IV0 = cbcmac(0^16, pkcs7(prefix)).
        self._iv0 = _cbcmac(self._key, bytes(16), _pkcs7(prefix))
        self._prng = CBCTweakablePRNG(self._key, b"", self._iv0)

    def _step(self, message: list[int], i: int, phase: int, inverse: bool) -> int:
        # buf = pkcs7(LEw(m_0) .. LEw(m_{l-1}) || LEw(i)) with slot i replaced by LEw(phase)
        slots = list(message) + [i]
        slots[i] = phase
        buf = b"".join(v.to_bytes(self._width, "little") for v in slots)
        self._prng.reset(_pkcs7(buf), self._iv0)
        return self._perms[i].perm(self._prng, message[i], inverse)

    def _check(self, x) -> list[int]:
        message = list(x)
        if len(message) != len(self._radices):
            raise ValueError(
                f"message has {len(message)} digits, the cipher takes {len(self._radices)}"
            )
        for position, (digit, radix) in enumerate(zip(message, self._radices)):
            if not 0 <= digit < radix:
                raise ValueError(f"digit at position {position} is not below radix {radix}")
        return message

    def encrypt(self, x) -> list[int]:
        """Encrypts one message; returns a new list."""
        m = self._check(x)
        for phase in (0, 1):
            for i in range(len(m)):
                m[i] = self._step(m, i, phase, inverse=False)
        return m

    def decrypt(self, x) -> list[int]:
        """Decrypts one message; returns a new list."""
        m = self._check(x)
        for phase in (1, 0):
            for i in reversed(range(len(m))):
                m[i] = self._step(m, i, phase, inverse=True)
        return m

    def _aes_engine_id(self) -> str:
        """The AES implementation under the Python steps, as the reference names its engine."""
        return f"AES Engine riffpe {aes_backend()}"
