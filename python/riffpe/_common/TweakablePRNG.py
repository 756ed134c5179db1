"""The interface of a keyed, tweakable source of pseudorandom bytes."""

from abc import abstractmethod


class TweakablePRNG:
    """A keystream generator keyed by ``key`` and re-seeded by a ``tweak``.

    ``block_size`` is the granularity of :meth:`get_bytes`. Subclasses implement both methods.
    """

    block_size: int

    @abstractmethod
    def __init__(self, key, tweak):
        raise NotImplementedError

    @abstractmethod
    def get_bytes(self, count: int) -> bytes:
        """The next ``count`` bytes of the keystream."""
        raise NotImplementedError


__all__ = ("TweakablePRNG",)
