"""The reference's vectors, through every entry point, both ways."""

import json
from pathlib import Path

import numpy as np
import pytest

from riffpe import Riffpe, RiffpeX
from riffpe import _fallback as plain

# The core crate's copy of the reference's vectors.
VECTORS = Path(__file__).resolve().parents[2] / "crates/riffpe/tests/data/public.jsonl"


def _load():
    with VECTORS.open() as f:
        return [json.loads(line) for line in f if line.strip()]


CASES = _load()


def _build(case, module):
    key, tweak = bytes.fromhex(case["key"]), bytes.fromhex(case["tweak"])
    b = case["bytes_per_value"]
    if case["scheme"] == "riffpe":
        return module.Riffpe(case["radix"], case["digits"], key, tweak, b)
    return module.RiffpeX(case["radices"], key, tweak, b)


def test_vector_file_is_there():
    assert len(CASES) > 100


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['scheme']}-{len(c['plaintext'])}")
def test_vector(case):
    fpe = _build(case, __import__("riffpe"))
    assert fpe.encrypt(case["plaintext"]) == case["ciphertext"]
    assert fpe.decrypt(case["ciphertext"]) == case["plaintext"]
    batch = fpe.encrypt_digits(np.array([case["plaintext"]] * 3, dtype=np.uint32), threads=1)
    assert batch.tolist() == [case["ciphertext"]] * 3


@pytest.mark.parametrize("case", [c for c in CASES if c.get("radix", 0) <= 100][:40])
def test_vector_plain_python(case):
    fpe = _build(case, plain)
    assert fpe.encrypt(case["plaintext"]) == case["ciphertext"]
    assert fpe.decrypt(case["ciphertext"]) == case["plaintext"]


def test_riffpex_type():
    assert issubclass(RiffpeX, object) and issubclass(Riffpe, object)
