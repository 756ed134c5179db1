"""The pseudorandom permutation of one digit step (SPEC: "One digit step"), in plain Python."""

from __future__ import annotations

from .._common.TweakablePRNG import TweakablePRNG


def _partition(lst: list, begin: int, end: int) -> int:
    """Lomuto partition of ``lst[begin:end]`` around its last element; returns where it lands."""
    if end <= begin:
        raise ValueError("_partition called on an empty range")
    pivot = lst[end - 1]
    store = begin
    for j in range(begin, end - 1):
        if lst[j] <= pivot:
            lst[store], lst[j] = lst[j], lst[store]
            store += 1
    lst[store], lst[end - 1] = lst[end - 1], lst[store]
    return store


def _nth_element(lst: list, n: int, begin: int = 0, end: int | None = None):
    """The ``n``-th smallest element of ``lst[begin:end]`` (quickselect; reorders ``lst``)."""
    if end is None:
        end = len(lst)
    while end - begin > 16:
        at = _partition(lst, begin, end)
        if n == at:
            return lst[at]
        if n < at:
            end = at
        else:
            begin = at + 1
    return sorted(lst[begin:end])[n - begin]


class Perm:
    """A permutation of ``range(elements)`` read off ``bytes_per_value`` keystream bytes each."""

    def __init__(self, elements: int, bytes_per_value: int = 16):
        self.elements = elements
        self.bytes_per_value = bytes_per_value

    def perm(self, prng: TweakablePRNG, x: int, inv: bool) -> int:
        """``pi(x)``, or ``pi^-1(x)`` when ``inv``, for the keystream ``prng`` is at."""
        b = self.bytes_per_value
        length = self.elements * b
        stream = prng.get_bytes(length + (-length % prng.block_size))
        # Values compare as big-endian byte strings, ties broken by the smaller index.
        pairs = [(stream[k * b : (k + 1) * b], k) for k in range(self.elements)]
        if not inv:
            return _nth_element(pairs, x)[1]
        target = pairs[x]
        return sum(1 for pair in pairs if pair < target)
