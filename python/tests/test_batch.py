"""The array methods: the same answers as one message at a time, dtypes, nulls and errors."""

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riffpe import Riffpe, RiffpeX, int_to_bases

KEY = bytes(range(16))
CARDS = Riffpe(100, 8, KEY, b"cards")
IDS = RiffpeX([26, 10, 10, 10, 10, 10, 10, 10], KEY, b"ids")


def one_at_a_time(fpe, values, order, encrypt=True):
    radices = list(fpe.radices)
    # int_to_bases' 'big' puts the least significant digit last, as the batch's order does.
    out = []
    for v in values:
        digits = int_to_bases(int(v), radices, order)
        done = fpe.encrypt(digits) if encrypt else fpe.decrypt(digits)
        out.append(_from_bases(done, radices, order))
    return out


def _from_bases(digits, radices, order):
    value = 0
    positions = range(len(digits)) if order == "big" else range(len(digits) - 1, -1, -1)
    for i in positions:
        value = value * radices[i] + digits[i]
    return value


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, 10**16 - 1), max_size=300),
    st.sampled_from(["little", "big"]),
    st.sampled_from([None, 1, 2]),
)
def test_batch_equals_one_at_a_time(values, order, threads):
    array = np.array(values, dtype=np.uint64)
    out = CARDS.encrypt_ints(array, order=order, threads=threads)
    assert out.dtype == np.uint64 and out.shape == array.shape
    assert out.tolist() == one_at_a_time(CARDS, values, order)
    assert CARDS.decrypt_ints(out, order=order, threads=threads).tolist() == values


def test_int64_and_lists():
    values = [0, 1, 4111111111111111, 9999999999999999]
    out64 = CARDS.encrypt_ints(np.array(values, dtype=np.int64))
    assert out64.dtype == np.int64
    assert out64.tolist() == CARDS.encrypt_ints(values) == one_at_a_time(CARDS, values, "little")
    assert isinstance(CARDS.encrypt_ints(values), list)


def test_riffpex_ints():
    size = 26 * 10**7
    values = np.arange(0, size, size // 997, dtype=np.uint64)
    out = IDS.encrypt_ints(values, order="big")
    assert (out < size).all()
    assert out.tolist() == one_at_a_time(IDS, values.tolist(), "big")
    assert (IDS.decrypt_ints(out, order="big") == values).all()


def test_nineteen_digit_values_are_exact():
    fpe = Riffpe(10, 19, KEY, b"")
    values = np.array([10**19 - 1, 10**18 + 12345, 0], dtype=np.uint64)
    out = fpe.encrypt_ints(values)
    assert out.tolist() == one_at_a_time(fpe, values.tolist(), "little")
    assert fpe.decrypt_ints(out).tolist() == values.tolist()


def test_errors_name_the_row_and_leave_input_alone():
    values = np.array([5, 6, 10**16 + 3, 7], dtype=np.uint64)
    before = values.copy()
    with pytest.raises(ValueError, match="row 2") as info:
        CARDS.encrypt_ints(values)
    assert str(10**16 + 3) not in str(info.value)
    assert (values == before).all()
    with pytest.raises(ValueError, match="row 1"):
        CARDS.encrypt_ints(np.array([1, -1], dtype=np.int64))
    with pytest.raises(TypeError):
        CARDS.encrypt_ints(np.array([1.0]))
    with pytest.raises(ValueError):
        CARDS.encrypt_ints(np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(ValueError):
        CARDS.encrypt_ints(np.array([1], dtype=np.uint64), order="middle")
    with pytest.raises(ValueError):
        CARDS.encrypt_ints(np.array([1], dtype=np.uint64), threads=0)
    with pytest.raises(ValueError, match="64-bit"):
        Riffpe(100, 10, KEY, b"").encrypt_ints(np.array([1], dtype=np.uint64))
    with pytest.raises(ValueError, match="int64"):
        Riffpe(10, 19, KEY, b"").encrypt_ints(np.array([1], dtype=np.int64))


INT_DTYPES = ["int64", "uint64", "Int64", "UInt64", "int64[pyarrow]", "uint64[pyarrow]"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_pandas_series_keep_index_name_dtype_and_nulls(dtype):
    pd = pytest.importorskip("pandas")
    values = [0, 4111111111111111, 9999999999999999]
    expected = one_at_a_time(CARDS, values, "little")
    series = pd.Series(values, dtype=dtype, index=[30, 10, 20], name="card")
    copy = series.copy()
    out = CARDS.encrypt_ints(series, threads=2)
    assert isinstance(out, pd.Series) and out.dtype == series.dtype
    assert out.index.equals(series.index) and out.name == "card"
    assert out.tolist() == expected
    assert series.equals(copy)
    assert CARDS.decrypt_ints(out).equals(series)
    if dtype[0] in "IU" or "pyarrow" in dtype:
        with_nulls = pd.Series([values[1], None, values[2]], dtype=dtype)
        out = CARDS.encrypt_ints(with_nulls)
        assert out.dtype == with_nulls.dtype
        assert out.isna().tolist() == [False, True, False]
        assert out.dropna().tolist() == expected[1:]
        assert CARDS.decrypt_ints(out).equals(with_nulls)


def test_pandas_series_of_objects_and_errors():
    pd = pytest.importorskip("pandas")
    values = [5, 10**16 - 1]
    out = CARDS.encrypt_ints(pd.Series(values, dtype=object))
    assert out.dtype == object and out.tolist() == one_at_a_time(CARDS, values, "little")
    # read_csv gives a column of cards with an empty cell float64, which has lost digits;
    # read as Int64, it keeps them and the empty cell.
    csv = "card,name\n9999999999999999,a\n,b\n"
    with pytest.raises(TypeError, match="not float64 .*Int64"):
        CARDS.encrypt_ints(pd.read_csv(io.StringIO(csv))["card"])
    out = CARDS.encrypt_ints(pd.read_csv(io.StringIO(csv), dtype={"card": "Int64"})["card"])
    assert out[0] == one_at_a_time(CARDS, [10**16 - 1], "little")[0] and out.isna()[1]
    with pytest.raises(TypeError, match="not Int32"):
        CARDS.encrypt_ints(pd.Series([1, None], dtype="Int32"))
    for dtype in INT_DTYPES:
        series = pd.Series([1, 2, 10**16 + 3], dtype=dtype)
        with pytest.raises(ValueError, match="^row 2: ") as info:
            CARDS.encrypt_ints(series)
        assert str(10**16 + 3) not in str(info.value)
        assert series.tolist() == [1, 2, 10**16 + 3]


def test_empty():
    assert CARDS.encrypt_ints(np.array([], dtype=np.uint64)).tolist() == []
    assert CARDS.encrypt_digits(np.zeros((0, 8), dtype=np.uint8)).shape == (0, 8)


def test_digits():
    rng = np.random.default_rng(1)
    messages = rng.integers(0, 100, size=(200, 8), dtype=np.int64)
    out = CARDS.encrypt_digits(messages)
    assert out.dtype == np.int64 and out.shape == messages.shape
    assert out.tolist() == [CARDS.encrypt(m) for m in messages.tolist()]
    assert (CARDS.decrypt_digits(out, threads=1) == messages).all()
    # Column-major input is read row by row all the same.
    assert (CARDS.encrypt_digits(np.asfortranarray(messages)) == out).all()
    assert CARDS.encrypt_digits(messages[:3].astype(np.uint8)).dtype == np.uint8
    assert CARDS.encrypt_digits(messages[:3].tolist()) == out[:3].tolist()


def test_digit_errors():
    messages = np.zeros((4, 8), dtype=np.uint32)
    messages[3, 5] = 100
    before = messages.copy()
    with pytest.raises(ValueError, match="row 3"):
        CARDS.encrypt_digits(messages)
    assert (messages == before).all()
    with pytest.raises(ValueError, match="row 1"):
        CARDS.encrypt_digits(np.array([[0] * 8, [-1] + [0] * 7]))
    with pytest.raises(ValueError):
        CARDS.encrypt_digits(np.zeros((2, 7), dtype=np.uint32))
    with pytest.raises(ValueError):
        CARDS.encrypt_digits(np.zeros(8, dtype=np.uint32))
    with pytest.raises(TypeError):
        Riffpe(1000, 2, KEY, b"").encrypt_digits(np.zeros((1, 2), dtype=np.uint8))


pa = pytest.importorskip("pyarrow")


@pytest.mark.parametrize("arrow_type", [pa.int64(), pa.uint64()])
def test_arrow_keeps_nulls_and_type(arrow_type):
    values = [4111111111111111, None, 0, None, 9999999999999999]
    array = pa.array(values, type=arrow_type)
    out = CARDS.encrypt_ints(array, order="big")
    assert isinstance(out, pa.Array) and out.type == arrow_type
    assert out.is_null().to_pylist() == [False, True, False, True, False]
    plain = [v for v in values if v is not None]
    assert [v for v in out.to_pylist() if v is not None] == one_at_a_time(CARDS, plain, "big")
    assert CARDS.decrypt_ints(out, order="big").to_pylist() == values


class CapsuleOnly:
    """An Arrow producer that is not pyarrow: only the PyCapsule interface."""

    def __init__(self, array):
        self.array = array

    def __arrow_c_array__(self, requested_schema=None):
        return self.array.__arrow_c_array__(requested_schema)


def test_arrow_pycapsule_and_chunked():
    array = pa.array([1, None, 3], type=pa.int64())
    out = CARDS.encrypt_ints(CapsuleOnly(array))
    assert out.to_pylist() == CARDS.encrypt_ints(array).to_pylist()
    chunked = pa.chunked_array([array, pa.array([10**16], type=pa.int64())])
    with pytest.raises(ValueError, match="row 3"):
        CARDS.encrypt_ints(chunked)
    good = pa.chunked_array([array, pa.array([5], type=pa.int64())])
    assert CARDS.encrypt_ints(good).to_pylist()[:3] == out.to_pylist()
    with pytest.raises(TypeError):
        CARDS.encrypt_ints(pa.array([1.5]))


@pytest.mark.parametrize(
    "make",
    [
        lambda ct: Riffpe(100, 8, KEY, b"cards", constant_time=ct),
        lambda ct: Riffpe(10, 16, KEY, b"cards", 18, constant_time=ct),
        lambda ct: RiffpeX([200, 255, 256, 1000], KEY, b"wide", constant_time=ct),
    ],
)
def test_every_selection_gives_the_same_answers(make):
    fast, constant_time, default = make(False), make(True), make(None)
    size = 1
    for r in fast.radices:
        size *= r
    step = np.uint64(0x9E3779B97F4A7C15 % size)
    values = np.arange(500, dtype=np.uint64) * step % np.uint64(size)
    tokens = fast.encrypt_ints(values)
    np.testing.assert_array_equal(constant_time.encrypt_ints(values), tokens)
    np.testing.assert_array_equal(constant_time.decrypt_ints(tokens), values)
    np.testing.assert_array_equal(default.encrypt_ints(values), tokens)
    np.testing.assert_array_equal(default.decrypt_ints(tokens), values)
    message = int_to_bases(int(values[7]), list(fast.radices), "little")
    assert constant_time.encrypt(message) == fast.encrypt(message)
    assert default.encrypt(message) == fast.encrypt(message)
