from .converters import digits_to_int, find_best_bases, int_to_bases, int_to_digits
from .TweakablePRNG import TweakablePRNG

__all__ = ("int_to_digits", "digits_to_int", "int_to_bases", "find_best_bases", "TweakablePRNG")
