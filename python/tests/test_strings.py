"""FormatCipher: the format crate's vectors, many strings against one at a time, nulls, the
format kept, errors that name rows and positions but never values."""

import json
import pickle
import string
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riffpe import FormatCipher

KEY = bytes(range(16))
VECTORS = Path(__file__).resolve().parents[2] / "crates/riffpe-format/tests/data/vectors.jsonl"


def _vectors():
    return [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("vector", _vectors(), ids=lambda v: f"{v['format']}")
def test_vectors(vector):
    # The vector file spells the format and its options as FormatCipher's arguments do.
    options = {k: v for k, v in vector.items() if k not in ("input", "output", "tweak", "key")}
    fmt = options.pop("format")
    if "context" in options:
        options["context"] = bytes.fromhex(options["context"])
    if fmt.startswith("template:"):
        options["template"] = fmt[len("template:"):]
    else:
        options["format"] = fmt
    fc = FormatCipher(bytes.fromhex(vector["key"]), **options)
    assert fc.encrypt(vector["input"]) == vector["output"]
    assert fc.decrypt(vector["output"]) == vector["input"]
    assert fc.encrypt_strings([vector["input"]]) == [vector["output"]]


def _luhn_residue(number: str) -> int:
    total = 0
    for i, c in enumerate(reversed(number)):
        d = int(c)
        if i % 2 == 1:
            d = 2 * d - 9 if d > 4 else 2 * d
        total += d
    return total % 10


def _cards():
    return st.lists(st.sampled_from("0123456789"), min_size=13, max_size=19).map("".join).map(
        lambda s: " ".join(s[i:i + 4] for i in range(0, len(s), 4))
    )


def _ssns():
    return st.from_regex(r"\A[0-9]{3}-[0-9]{2}-[0-9]{4}\Z") | st.from_regex(r"\A[0-9]{9}\Z")


def _phones():
    return st.from_regex(r"\A\+?[0-9]{1,3} \([0-9]{3}\) [0-9]{3}-[0-9]{4}\Z")


def _uuids():
    return st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper())


def _ids():
    return st.from_regex(r"\A[A-Z][0-9]{7}\Z")


def _dna():
    return st.from_regex(r"\A[ACGT]{10,20}(-[ACGT]{1,8})?\Z")


DECIMAL, LOWER, UPPER = set(string.digits), set(string.ascii_lowercase), set(string.ascii_uppercase)
HEX, UPPER_HEX = set("0123456789abcdef"), set("0123456789ABCDEF")

# Each format's character classes: a character of a class encrypts to one of the same class.
CLASSES = {
    "card": [DECIMAL],
    "ssn": [DECIMAL],
    "phone": [DECIMAL],
    "uuid": [HEX, UPPER_HEX],
    "template": [DECIMAL, UPPER],
    "alphabet": [set("ACGT")],
}

FORMATS = {
    "card": (lambda: FormatCipher(KEY, "card"), _cards),
    "ssn": (lambda: FormatCipher(KEY, "ssn", context=b"people.ssn"), _ssns),
    "phone": (lambda: FormatCipher(KEY, "phone"), _phones),
    "uuid": (lambda: FormatCipher(KEY, "uuid"), _uuids),
    "template": (lambda: FormatCipher(KEY, template="A9{7}", keep_suffix=2), _ids),
    "alphabet": (lambda: FormatCipher(KEY, alphabet="ACGT", passthrough="-"), _dna),
}
CIPHERS = {name: make() for name, (make, _) in FORMATS.items()}


def _format_and_values():
    return st.sampled_from(sorted(FORMATS)).flatmap(
        lambda name: st.tuples(
            st.just(name),
            st.lists(FORMATS[name][1]() | st.none(), max_size=40),
        )
    )


@settings(max_examples=60, deadline=None)
@given(_format_and_values(), st.sampled_from([None, 1, 2]))
def test_many_equals_one_at_a_time(case, threads):
    name, values = case
    fc = CIPHERS[name]
    before = list(values)
    out = fc.encrypt_strings(values, threads=threads)
    assert values == before
    assert out == [None if v is None else fc.encrypt(v) for v in values]
    assert fc.decrypt_strings(out, threads=threads) == values


@settings(max_examples=60, deadline=None)
@given(_format_and_values())
def test_format_is_kept(case):
    name, values = case
    fc = CIPHERS[name]
    for value, token in zip(values, fc.encrypt_strings(values)):
        if value is None:
            assert token is None
            continue
        assert len(token) == len(value)
        for a, b in zip(value, token):
            classes = [c for c in CLASSES[name] if a in c]
            if classes:
                assert b in classes[-1] or b in classes[0]
            else:
                assert a == b
        if name == "uuid":
            assert not (value.islower() and token.isupper())
            assert not (value.isupper() and token.islower())
        if name == "card":
            digits = value.replace(" ", "")
            assert _luhn_residue(token.replace(" ", "")) == _luhn_residue(digits)
        if name == "template":
            assert token[-2:] == value[-2:]
        if name == "alphabet":
            assert set(token) <= set("ACGT-")


def test_luhn_options():
    valid = "4111111111111111"
    preserve = FormatCipher(KEY, "card")
    assert _luhn_residue(preserve.encrypt(valid)) == 0
    invalid = FormatCipher(KEY, "card", luhn="invalid")
    token = invalid.encrypt(valid)
    assert _luhn_residue(token) != 0
    assert invalid.decrypt(token) == valid
    with pytest.raises(ValueError, match="Luhn"):
        invalid.encrypt("4111111111111112")
    off = FormatCipher(KEY, "card", luhn="off")
    assert off.decrypt(off.encrypt(valid)) == valid


def test_parallel_chunks_equal_one_thread():
    rng = np.random.default_rng(7)
    numbers = rng.integers(0, 10**16, size=20_000, dtype=np.uint64)
    values = [f"{n:016d}" for n in numbers.tolist()]
    values[5_000] = "12-34-56-78"
    fc = FormatCipher(KEY, "phone")
    one = fc.encrypt_strings(values, threads=1)
    assert fc.encrypt_strings(values, threads=None) == one
    assert fc.encrypt_strings(values, threads=2) == one
    assert fc.decrypt_strings(one, threads=2) == values


@pytest.mark.parametrize("threads", [1, None, 2])
def test_refused_value_far_into_a_batch_is_named_by_its_row(threads):
    values = [f"555-010-{i % 10_000:04d}" for i in range(20_000)]
    values[13_001] = "555-O10-0000"
    values[17_500] = "555-010-000x"
    before = list(values)
    with pytest.raises(ValueError, match=r"^row 13001: the 5th character ") as e:
        CIPHERS["phone"].encrypt_strings(values, threads=threads)
    assert "O" not in str(e.value)
    assert values == before


def test_numpy_arrays():
    fc = CIPHERS["ssn"]
    values = np.array(["123-45-6789", "000-00-0000", "999-99-9999"])
    copy = values.copy()
    out = fc.encrypt_strings(values)
    assert isinstance(out, np.ndarray) and out.dtype == values.dtype
    assert (values == copy).all()
    assert out.tolist() == [fc.encrypt(v) for v in values.tolist()]
    objects = np.array(["123-45-6789", None, "999-99-9999"], dtype=object)
    out = fc.encrypt_strings(objects)
    assert out.dtype == object and out[1] is None
    assert fc.decrypt_strings(out).tolist() == objects.tolist()
    with pytest.raises(TypeError):
        fc.encrypt_strings(np.arange(3))
    with pytest.raises(ValueError, match="one-dimensional"):
        fc.encrypt_strings(values.reshape(1, 3))


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string()])
def test_arrow_arrays(arrow_type):
    fc = CIPHERS["phone"]
    values = ["+1 (555) 010-9999", None, "555.010.1234", "", None, "+44 20 7946 0000"]
    values[3] = "(555) 010-0000"
    array = pa.array(values, type=arrow_type)
    out = fc.encrypt_strings(array)
    assert isinstance(out, pa.Array) and out.type == arrow_type
    assert out.to_pylist() == [None if v is None else fc.encrypt(v) for v in values]
    assert array.to_pylist() == values
    assert fc.decrypt_strings(out).to_pylist() == values
    # A slice keeps its own offset into the parent's buffers.
    sliced = array.slice(1, 4)
    assert fc.encrypt_strings(sliced).to_pylist() == out.slice(1, 4).to_pylist()
    chunked = pa.chunked_array([array.slice(0, 3), array.slice(3)])
    out_chunked = fc.encrypt_strings(chunked)
    assert isinstance(out_chunked, pa.ChunkedArray)
    assert out_chunked.to_pylist() == out.to_pylist()


@pytest.mark.parametrize(
    "dtype", [object, "string", "string[pyarrow]", "large_string[pyarrow]"]
)
def test_pandas_series_keep_index_name_dtype_and_nulls(dtype):
    pd = pytest.importorskip("pandas")
    fc = CIPHERS["card"]
    cards = ["4111 1111 1111 1111", "5500-0000-0000-0004"]
    series = pd.Series([cards[0], None, cards[1]], dtype=dtype, index=[3, 1, 2], name="card")
    copy = series.copy()
    out = fc.encrypt_strings(series, threads=2)
    assert isinstance(out, pd.Series) and out.dtype == series.dtype
    assert out.index.equals(series.index) and out.name == "card"
    assert out.isna().tolist() == [False, True, False]
    assert [out[3], out[2]] == [fc.encrypt(c) for c in cards]
    assert series.equals(copy)
    assert fc.decrypt_strings(out).equals(series)
    with pytest.raises(ValueError, match="^row 2: "):
        fc.encrypt_strings(pd.Series(cards + ["4111 1111 1111 111x"], dtype=dtype))


def test_pandas_read_csv_empty_cells_stay_empty():
    pd = pytest.importorskip("pandas")
    import io

    frame = pd.read_csv(io.StringIO("card,name\n4111 1111 1111 1111,a\n,b\n"))
    # object in pandas 2, str (Arrow-backed, NaN for missing) in pandas 3: both keep the NaN.
    out = CIPHERS["card"].encrypt_strings(frame["card"])
    assert out[0] == CIPHERS["card"].encrypt("4111 1111 1111 1111")
    assert isinstance(out[1], float) and pd.isna(out[1])
    assert CIPHERS["card"].decrypt_strings(out).equals(frame["card"])
    with pytest.raises(TypeError, match="strings, not int64"):
        CIPHERS["card"].encrypt_strings(pd.Series([1, 2]))
    with pytest.raises(TypeError, match="strings, not Int64"):
        CIPHERS["card"].encrypt_strings(pd.Series([1, None], dtype="Int64"))


def test_arrow_errors_name_the_row_of_the_whole_input():
    fc = CIPHERS["ssn"]
    chunked = pa.chunked_array([["123-45-6789", "123-45-6789"], [None, "123-45-67x9"]])
    with pytest.raises(ValueError, match=r"^row 3: the 10th character ") as e:
        fc.encrypt_strings(chunked)
    assert "x" not in str(e.value).replace("max", "")
    with pytest.raises(TypeError, match="strings"):
        fc.encrypt_strings(pa.array([1, 2]))


SECRET = "SECRET-VALUE-1234"


def test_errors_name_row_and_position_never_the_value():
    fc = FormatCipher(KEY, "digits")
    values = ["1234567", "7654321", "12345678x90", None]
    with pytest.raises(ValueError, match=r"^row 2: the 9th character ") as e:
        fc.encrypt_strings(values)
    assert "x" not in str(e.value).replace("max", "").replace("expected", "")
    with pytest.raises(ValueError) as e:
        fc.encrypt(SECRET)
    assert SECRET not in str(e.value) and "SECRET" not in str(e.value)
    with pytest.raises(TypeError, match="row 1"):
        fc.encrypt_strings(["1234567", 1234567])
    with pytest.raises(TypeError, match="encrypt"):
        fc.encrypt_strings("1234567")
    with pytest.raises(ValueError, match="row 0: the value is not valid Unicode") as e:
        fc.encrypt_strings(["12345\ud800"])
    with pytest.raises(ValueError, match="^row 1: .*10 characters, the template 11"):
        FormatCipher(KEY, "ssn").encrypt_strings(["123-45-6789", "123-456789"])


def test_ssn_with_or_without_dashes():
    fc = FormatCipher(KEY, "ssn")
    dashed = fc.encrypt("123-45-6789")
    assert fc.encrypt("123456789") == dashed.replace("-", "")
    tokens = fc.encrypt_strings(["123-45-6789", "123456789", None])
    assert tokens == [dashed, dashed.replace("-", ""), None]
    assert fc.decrypt_strings(tokens) == ["123-45-6789", "123456789", None]
    with pytest.raises(ValueError, match="the 4th character"):
        fc.encrypt("123x56789")


def test_literals_optional():
    strict = FormatCipher(KEY, template="(999) 999-9999")
    optional = FormatCipher(KEY, template="(999) 999-9999", literals_optional=True)
    token = strict.encrypt("(555) 123-4567")
    assert optional.encrypt("(555) 123-4567") == token
    bare = "".join(c for c in token if c.isdigit())
    assert optional.encrypt("5551234567") == bare
    assert optional.decrypt(bare) == "5551234567"
    with pytest.raises(ValueError, match="10 characters, the template 14$"):
        strict.encrypt("5551234567")
    # Only a template has literals to leave out; a named template turns it off too.
    with pytest.raises(ValueError, match="optional literals need a template"):
        FormatCipher(KEY, "card", literals_optional=True)
    with pytest.raises(ValueError, match="optional literals need a template"):
        FormatCipher(KEY, alphabet="digits", passthrough="-", literals_optional=True)
    with pytest.raises(ValueError, match="9 characters, the template 11$"):
        FormatCipher(KEY, "ssn", literals_optional=False).encrypt("123456789")


def test_constructor():
    with pytest.raises(TypeError, match="exactly one"):
        FormatCipher(KEY)
    with pytest.raises(TypeError, match="exactly one"):
        FormatCipher(KEY, "ssn", template="999")
    with pytest.raises(ValueError, match="no named format"):
        FormatCipher(KEY, "nope")
    # Options of another kind of format are refused, not ignored.
    with pytest.raises(TypeError, match="passthrough needs alphabet"):
        FormatCipher(KEY, "card", passthrough="/")
    with pytest.raises(TypeError, match="passthrough needs alphabet"):
        FormatCipher(KEY, template="9{8}", passthrough="/")
    with pytest.raises(TypeError, match="alphabets needs template"):
        FormatCipher(KEY, alphabet="digits", alphabets={"dna": "ACGT"})
    with pytest.raises(ValueError, match="luhn"):
        FormatCipher(KEY, "card", luhn="yes")
    with pytest.raises(ValueError, match="security"):
        FormatCipher(KEY, "card", security=192)
    with pytest.raises(ValueError, match="AES key"):
        FormatCipher(KEY[:15], "card")
    with pytest.raises(ValueError, match="template error at its 2nd character"):
        FormatCipher(KEY, template="9[")
    with pytest.raises(ValueError, match="allow_small_domain"):
        FormatCipher(KEY, template="99-99")
    small = FormatCipher(KEY, template="99-99", allow_small_domain=True)
    assert small.decrypt(small.encrypt("12-34")) == "12-34"
    dna = FormatCipher(KEY, template="{dna}{12}", alphabets={"dna": "ACGT"})
    assert set(dna.encrypt("ACGTACGTACGT")) <= set("ACGT")
    assert FormatCipher(KEY, alphabet="hex").encrypt("00ff00ff").islower()
    assert FormatCipher(KEY, "card").bytes_per_value == 18
    assert FormatCipher(KEY, "card", security=256).bytes_per_value == 34
    kept = FormatCipher(KEY, "card", keep_prefix=6)
    assert kept.encrypt("4111111111111111")[:6] == "411111"


def test_context_separates():
    a = FormatCipher(KEY, "ssn", context=b"a").encrypt("123-45-6789")
    b = FormatCipher(KEY, "ssn", context=b"b").encrypt("123-45-6789")
    assert a != b


def test_no_key_in_repr_and_no_pickle():
    fc = FormatCipher(KEY, "card")
    assert repr(fc) == 'FormatCipher(format="card")'
    assert KEY.hex() not in repr(fc)
    with pytest.raises(TypeError):
        pickle.dumps(fc)


def test_every_selection_gives_the_same_strings():
    values = [f"Id{i:06}x{i % 7}" for i in range(300)]
    for name in ("alnum", "card"):
        inputs = values if name == "alnum" else ["4111 1111 1111 1111", "5500-0000-0000-0004"]
        fast = FormatCipher(KEY, name, constant_time=False)
        tokens = fast.encrypt_strings(inputs)
        for constant_time in (True, None):
            other = FormatCipher(KEY, name, constant_time=constant_time)
            assert other.encrypt_strings(inputs) == tokens
            assert other.decrypt_strings(tokens) == inputs
            assert other.encrypt(inputs[0]) == tokens[0]
