"""The AES-CBC keystream generator, as the ``TweakablePRNG`` interface."""

from __future__ import annotations

from . import _native
from ._common.TweakablePRNG import TweakablePRNG


class CBCTweakablePRNG(_native.CBCTweakablePRNG, TweakablePRNG):
    """AES-CBC as a tweakable keystream.

    ``CBCTweakablePRNG(key, tweak, iv=bytes(16))`` starts from ``iv`` and absorbs ``tweak``
    (a multiple of 16 bytes) as a CBC-MAC; :meth:`get_bytes` then returns the CBC encryption of
    zero bytes from that state, and :meth:`reset` starts again with another tweak and ``iv``.
    """

    def __init__(self, key, tweak, iv=bytes(16)):
        # The compiled base has done the work in __new__; TweakablePRNG.__init__ is abstract.
        pass


__all__ = ("CBCTweakablePRNG",)
