"""String batches through ``FormatCipher.encrypt_strings``, timed by pytest-benchmark (not part
of CI): card numbers, half with spaces and half with dashes, in a batch of 10,000 (a Spark
task's Arrow batch) and of 1,000,000, on the calling thread and on the global pool.

    pip install pytest-benchmark
    pytest python/bench/test_string_batches.py      # --benchmark-json=FILE to keep the figures
"""

from __future__ import annotations

import random

import pytest

import riffpe

KEY = bytes(range(16))
SIZES = (10_000, 1_000_000)


def _card(rng: random.Random) -> str:
    """A random 16-digit card number with a valid Luhn digit, in groups of four."""
    digits = [rng.randrange(10) for _ in range(15)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    digits.append(-total % 10)
    number = "".join(map(str, digits))
    separator = " " if rng.random() < 0.5 else "-"
    return separator.join(number[i : i + 4] for i in range(0, 16, 4))


@pytest.fixture(scope="module")
def cards() -> list[str]:
    rng = random.Random(1)
    return [_card(rng) for _ in range(max(SIZES))]


@pytest.mark.parametrize("threads", [1, None], ids=["one thread", "pool"])
@pytest.mark.parametrize("size", SIZES)
def test_encrypt_cards(benchmark, cards, size, threads):
    fc = riffpe.FormatCipher(KEY, "card")
    values = cards[:size]
    tokens = benchmark(fc.encrypt_strings, values, threads=threads)
    assert fc.decrypt_strings(tokens[:100]) == values[:100]
