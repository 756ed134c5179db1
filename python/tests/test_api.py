"""The reference's API: constructors, errors, converters, the keystream generator, the CLI."""

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import riffpe
import riffpe._fallback
from riffpe import (
    CBCTweakablePRNG,
    Riffpe,
    RiffpeX,
    TweakablePRNG,
    digits_to_int,
    find_best_bases,
    int_to_bases,
    int_to_digits,
)
from riffpe._native import Riffpe as NativeRiffpe


def test_bytes_like_keys_and_tweaks(key):
    expected = Riffpe(100, 8, key, b"Alice").encrypt([1] * 8)
    for k, t in [(bytearray(key), bytearray(b"Alice")), (memoryview(key), memoryview(b"Alice"))]:
        assert Riffpe(100, 8, k, t).encrypt([1] * 8) == expected
    assert Riffpe(100, 8, key, b"Alice", 16).encrypt((1,) * 8) == expected
    assert NativeRiffpe(100, 8, key, b"Alice").encrypt([1] * 8) == expected


def test_returns_new_list(key):
    message = [1, 2, 3]
    out = Riffpe(10, 3, key, b"").encrypt(message)
    assert message == [1, 2, 3] and isinstance(out, list)


@pytest.mark.parametrize(
    "args",
    [
        (1, 8),
        (2**32, 8),
        (-5, 8),
        (100, 0),
        (100, -1),
        (10, 300),
    ],
)
def test_bad_parameters(key, args):
    with pytest.raises(ValueError):
        Riffpe(*args, key, b"")


def test_bad_keys_and_types(key):
    for bad in (b"", b"x" * 15, b"x" * 33):
        with pytest.raises(ValueError):
            Riffpe(100, 8, bad, b"")
    with pytest.raises(TypeError):
        Riffpe(100, 8, key.hex(), b"")
    with pytest.raises(ValueError):
        Riffpe(100, 8, key, b"", 0)
    with pytest.raises(ValueError):
        RiffpeX([10, 1], key, b"")


def test_bad_messages(key):
    fpe = Riffpe(100, 8, key, b"")
    for bad in ([1] * 7, [1] * 9, [100] + [0] * 7, [-1] + [0] * 7, [2**70] * 8):
        with pytest.raises(ValueError):
            fpe.encrypt(bad)
        with pytest.raises(ValueError):
            fpe.decrypt(bad)
    with pytest.raises(TypeError):
        fpe.encrypt(["1"] * 8)


def test_no_key_in_repr(key):
    for fpe in (Riffpe(100, 8, key, b"t"), RiffpeX([26, 10], key, b"t")):
        assert key.hex() not in repr(fpe)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(Riffpe(100, 8, key, b""))


@given(st.lists(st.integers(2, 300), min_size=1, max_size=5), st.data())
def test_riffpex_roundtrip(radices, data):
    fpe = RiffpeX(radices, bytes(16), b"tw")
    message = [data.draw(st.integers(0, r - 1)) for r in radices]
    ct = fpe.encrypt(message)
    assert all(0 <= d < r for d, r in zip(ct, radices))
    assert fpe.decrypt(ct) == message


def test_prng(key):
    prng = CBCTweakablePRNG(key, bytes(16))
    assert isinstance(prng, TweakablePRNG) and prng.block_size == 16
    first = prng.get_bytes(32)
    prng.reset(bytes(16))
    assert prng.get_bytes(32) == first
    prng.reset(b"", iv=bytes(range(16)))
    assert prng.get_bytes(16) != first[:16]
    with pytest.raises(NotImplementedError):
        prng.get_bytes(5)
    with pytest.raises(ValueError):
        prng.reset(b"abc")
    with pytest.raises(ValueError):
        CBCTweakablePRNG(b"short", b"")


def test_converters():
    assert int_to_digits(1234, 6) == [0, 0, 1, 2, 3, 4]
    assert int_to_digits(1234, 6, order="little") == [4, 3, 2, 1, 0, 0]
    assert digits_to_int([0, 0, 1, 2, 3, 4]) == 1234
    assert digits_to_int([4, 3, 2, 1], order="little") == 1234
    assert int_to_bases(7 * 10 + 3, [26, 10]) == [7, 3]
    assert int_to_bases(7 * 10 + 3, [10, 26], order="little") == [3, 7]
    with pytest.raises(ValueError):
        int_to_digits(10**6, 6)
    big = 10**40 + 7
    assert digits_to_int(int_to_digits(big, 41)) == big


@given(st.integers(0, 10**30), st.sampled_from(["big", "little"]))
def test_converters_roundtrip(x, order):
    assert digits_to_int(int_to_digits(x, 31, 10, order), 10, order) == x


def test_find_best_bases():
    assert find_best_bases(7_000_000_000, 30) == (35, 40, 40, 50, 50, 50)
    assert find_best_bases(227_840_000, 24) == (40, 40, 40, 40, 89)
    assert find_best_bases(xfactors={2: 2, 5: 2}, threshold=10) == (10, 10)
    assert find_best_bases(101, 36) == (101,)
    huge = 36**30
    bases = find_best_bases(huge, 36)
    assert isinstance(bases, tuple) and all(b >= 36 for b in bases)
    product = 1
    for b in bases:
        product *= b
    assert product == huge
    with pytest.raises(ValueError):
        find_best_bases()
    with pytest.raises(ValueError):
        find_best_bases(100, 10, {2: 2})


def test_cli():
    key = "00112233445566778899aabbccddeeff"
    run = [sys.executable, "-m", "riffpe.encrypt", "-k", key, "-n", "100", "-l", "8"]
    out = subprocess.run(run + ["1234123456785678"], capture_output=True, text=True, check=True)
    assert out.stdout == "5158543106053628\n"
    back = [sys.executable, "-m", "riffpe.decrypt", "-k", key, "-B", "-t", "416C696365"]
    ct = subprocess.run(run + ["-B", "-t", "416C696365", "42"], capture_output=True, text=True,
                        check=True).stdout.strip()
    assert len(ct) == 16
    assert subprocess.run(back + [ct], capture_output=True, text=True).stdout == f"{42:016d}\n"
    bad = subprocess.run(run[:-4] + ["-k", "00", "1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_all():
    assert set(riffpe.__all__) >= {"Riffpe", "RiffpeX", "find_best_bases", "CBCTweakablePRNG"}


def test_aes_backend_names_the_cpus_backend():
    # As the command line's --version names it; which one depends on the CPU.
    assert riffpe.aes_backend() in {
        "VAES-512 (AVX-512, riffpe's own)",
        "VAES-256 (AVX2, riffpe's own)",
        "AES-NI (riffpe's own)",
        "AES-NI (the aes crate's)",
        "ARMv8 crypto extensions (AESE/AESMC)",
        "software (constant-time fixslice)",
    }


def test_aes_engine_id_as_the_reference_names_it():
    # The reference's own notebook prints c._aes_engine_id() before anything else.
    key = bytes(range(16))
    for fpe in (
        Riffpe(1000, 2, key, b"abcdab"),
        RiffpeX([10, 26, 10], key, b""),
        riffpe._fallback.Riffpe(1000, 2, key, b"abcdab"),
        riffpe._fallback.RiffpeX([10, 26, 10], key, b""),
    ):
        assert fpe._aes_engine_id() == f"AES Engine riffpe {riffpe.aes_backend()}"
