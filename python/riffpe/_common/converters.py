"""Integers as messages and back, and the choice of RiffpeX radices for a domain size.

Pure Python on purpose: Python integers have no size limit, so neither do these.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence

_ORDERS = ("big", "little")


def _check_order(order: str) -> None:
    if order not in _ORDERS:
        raise ValueError(f"order must be 'big' or 'little', not {order!r}")


def int_to_digits(x: int, ndigits: int, base: int = 10, order: str = "big") -> list[int]:
    """The ``ndigits`` digits of ``x`` in ``base``, most significant first for ``order='big'``.

    Raises ``ValueError`` if ``x`` is negative or does not fit.
    """
    return int_to_bases(x, [base] * ndigits, order)


def digits_to_int(digits: Sequence[int], base: int = 10, order: str = "big") -> int:
    """The integer whose digits in ``base`` are ``digits`` (inverse of :func:`int_to_digits`)."""
    _check_order(order)
    value = 0
    for digit in digits if order == "big" else reversed(digits):
        value = value * base + digit
    return value


def int_to_bases(x: int, bases: Sequence[int], order: str = "big") -> list[int]:
    """Mixed-radix digits of ``x``: digit ``i`` below ``bases[i]``.

    For ``order='big'`` the last digit is the least significant, for ``'little'`` the first.
    Raises ``ValueError`` if ``x`` is negative or not below the product of ``bases``.
    """
    _check_order(order)
    if x < 0:
        raise ValueError(f"{x} is negative")
    digits = [0] * len(bases)
    positions = range(len(bases) - 1, -1, -1) if order == "big" else range(len(bases))
    rest = x
    for i in positions:
        rest, digits[i] = divmod(rest, bases[i])
    if rest:
        raise ValueError(f"{x} doesn't fit in {len(bases)} digits of bases {list(bases)}")
    return digits


# -- factoring --------------------------------------------------------------------------------

_SMALL_PRIMES = [p for p in range(2, 1000) if all(p % d for d in range(2, math.isqrt(p) + 1))]
# Deterministic Miller-Rabin witnesses below 3.3 * 10^24; above, extra random witnesses.
_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def _is_probable_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    witnesses = list(_WITNESSES)
    if n >= 3_317_044_064_679_887_385_961_981:
        rng = random.Random(n)
        witnesses += [rng.randrange(2, n - 1) for _ in range(24)]
    for a in witnesses:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _find_factor(n: int) -> int:
    """A non-trivial factor of the composite ``n`` (Pollard's rho, Brent's cycle finding)."""
    if n % 2 == 0:
        return 2
    for c in range(1, n):
        y, r, q, g = 2, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(128, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += 128
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g
    raise ArithmeticError(f"no factor found for {n}")


def _factorize(n: int) -> Counter[int]:
    factors: Counter[int] = Counter()
    for p in _SMALL_PRIMES:
        while n % p == 0:
            factors[p] += 1
            n //= p
    pending = [n] if n > 1 else []
    while pending:
        m = pending.pop()
        if _is_probable_prime(m):
            factors[m] += 1
        else:
            d = _find_factor(m)
            pending += [d, m // d]
    return factors


# -- radices ----------------------------------------------------------------------------------


def _divisors(factors: Mapping[int, int]) -> list[int]:
    divisors = [1]
    for p, e in factors.items():
        divisors = [d * p**k for d in divisors for k in range(e + 1)]
    return sorted(divisors)


def _weight(r: int) -> float:
    # Riffpe's work per digit: r values, each about log2(r) bits of keystream to sort.
    return r * math.log2(r)


def find_best_bases(
    x: int | None = None, threshold: int = 36, xfactors: Mapping[int, int] | None = None
) -> tuple[int, ...]:
    """Radices for RiffpeX over ``range(x)``: factors of ``x``, each at least ``threshold``,
    whose product is ``x``, with the least total ``sum(r * log2(r))``; sorted ascending.

    Give exactly one of ``x`` and ``xfactors`` (``{prime: exponent}``, for a size already
    factored). A prime ``x`` comes back as ``(x,)``. Raises ``ValueError`` when ``x`` is below
    ``threshold``.
    """
    if (x is None) == (xfactors is None):
        raise ValueError("give exactly one of x and xfactors")
    if xfactors is None:
        if x < 1:
            raise ValueError(f"x must be positive, not {x}")
        factors: Mapping[int, int] = _factorize(x)
    else:
        factors = {p: e for p, e in xfactors.items() if e}
        x = math.prod(p**e for p, e in factors.items())
    if threshold < 2 or x < threshold:
        raise ValueError(f"{x} cannot be split into bases of at least {threshold}")
    divisors = [d for d in _divisors(factors) if d >= threshold]
    weights = [_weight(d) for d in divisors]
    best: list[int] = []
    best_cost = math.inf
    chosen: list[int] = []

    def search(rest: int, start: int, cost: float) -> None:
        # Depth-first over non-decreasing factor lists, pruned by the best cost so far.
        nonlocal best, best_cost
        if rest == 1:
            if cost < best_cost:
                best, best_cost = list(chosen), cost
            return
        for at in range(start, len(divisors)):
            factor = divisors[at]
            if factor > rest:
                break
            if rest % factor:
                continue
            total = cost + weights[at]
            if total >= best_cost:
                break  # weights grow with the factor: no later one does better
            quotient = rest // factor
            if quotient != 1 and quotient < factor:
                continue
            chosen.append(factor)
            search(quotient, at, total)
            chosen.pop()

    search(x, 0, 0.0)
    return tuple(best)


__all__ = ("int_to_digits", "digits_to_int", "int_to_bases", "find_best_bases")
