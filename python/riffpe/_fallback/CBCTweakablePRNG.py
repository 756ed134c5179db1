"""The keystream generator the plain-Python Riffpe uses: AES from the compiled module."""

from .._prng import CBCTweakablePRNG

__all__ = ("CBCTweakablePRNG",)
