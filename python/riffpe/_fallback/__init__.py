"""A plain-Python Riffpe and RiffpeX written from the specification, for reading and testing.

Only AES comes from the compiled module; everything else is here, step by step.
"""

from .CBCTweakablePRNG import CBCTweakablePRNG
from .Riffpe import Riffpe
from .RiffpeX import RiffpeX

__all__ = ("Riffpe", "RiffpeX", "CBCTweakablePRNG")
