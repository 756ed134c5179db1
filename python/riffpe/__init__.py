"""Riffpe and RiffpeX format-preserving encryption, compiled from Rust.

A drop-in for the reference package's API (``Riffpe``, ``RiffpeX``, ``CBCTweakablePRNG``,
``TweakablePRNG`` and the integer converters), plus array methods on the cipher objects:
``encrypt_ints``/``decrypt_ints`` for numpy and Arrow integers and
``encrypt_digits``/``decrypt_digits`` for 2-D digit arrays; ``FormatCipher`` for strings of a
named format, a template or an alphabet (``encrypt_strings`` for many at once).
``riffpe.spark`` has Spark column functions; ``aes_backend()`` names the AES implementation
this CPU runs (speed depends on it).
"""

from ._cipher import FormatCipher, Riffpe, RiffpeX
from ._common import TweakablePRNG, digits_to_int, find_best_bases, int_to_bases, int_to_digits
from ._native import aes_backend
from ._prng import CBCTweakablePRNG

__version__ = "0.2.0"

__all__ = (
    "TweakablePRNG",
    "int_to_digits",
    "digits_to_int",
    "int_to_bases",
    "find_best_bases",
    "Riffpe",
    "RiffpeX",
    "CBCTweakablePRNG",
    "FormatCipher",
    "aes_backend",
)
