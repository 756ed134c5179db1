"""Spark column functions that encrypt and decrypt integer and string columns, through Arrow.

Values travel as Arrow ``int64`` or strings (never through pandas or floating point), so 16- to
19-digit values stay exact and nulls stay null. Integer columns take ``radix``/``digits`` or
``radices``; string columns take ``format``, ``template`` or ``alphabet`` and the other
arguments of :class:`riffpe.FormatCipher`. The key never enters the query plan: each executor reads
it itself, from an environment variable (hex, ``key_env``) or a ``key_provider`` callable (for a
secrets file or a key service), and builds the cipher once per Python worker process.

``encrypt_column``/``decrypt_column`` return a Column (Arrow UDF, pyspark 4.1 or later);
``encrypt_udf``/``decrypt_udf`` return the UDF itself, to register as a SQL function;
``encrypt_columns``/``decrypt_columns`` transform whole DataFrames with ``mapInArrow`` and work
on pyspark 3.3 or later.

Example::

    from riffpe.spark import encrypt_column
    cards = df.withColumn("card", encrypt_column("card", radix=10, digits=16))
    people = df.withColumn("ssn", encrypt_column("ssn", format="ssn", key_env="SSN_KEY"))
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ._arrow import decimal_strings
from ._cipher import FormatCipher, Riffpe, RiffpeX

KeyProvider = Callable[[], bytes]


def _key_source(key_env: str | None, key_provider: KeyProvider | None, key_id: str | None):
    """What names the key in the per-worker cache: the variable, or the provider's identity."""
    if key_provider is None:
        return ("env", key_env)
    name = f"{getattr(key_provider, '__module__', '')}.{getattr(key_provider, '__qualname__', '')}"
    return ("provider", key_id or name)


def _read_key(key_env: str | None, key_provider: KeyProvider | None) -> bytes:
    if key_provider is not None:
        key = key_provider()
        if not isinstance(key, (bytes, bytearray, memoryview)):
            raise TypeError("key_provider must return bytes")
        return bytes(key)
    text = os.environ.get(key_env or "")
    if text is None:
        raise RuntimeError(f"the environment variable {key_env} is not set on this executor")
    try:
        return bytes.fromhex(text.strip())
    except ValueError:
        raise ValueError(f"{key_env} does not hold a hex key") from None


@dataclass(frozen=True)
class CipherSpec:
    """What an executor needs to build the cipher: parameters and where the key is, not the key."""

    radix: int | None
    digits: int | None
    radices: tuple[int, ...] | None
    tweak: bytes
    bytes_per_value: int
    order: str
    threads: int | None
    key_env: str | None
    key_provider: KeyProvider | None
    key_id: str | None
    constant_time: bool | None = None

    def cache_key(self) -> tuple:
        source = _key_source(self.key_env, self.key_provider, self.key_id)
        return (
            self.radix, self.digits, self.radices, self.tweak, self.bytes_per_value,
            self.constant_time, source,
        )

    def key(self) -> bytes:
        return _read_key(self.key_env, self.key_provider)

    def build(self, key: bytes) -> Riffpe | RiffpeX:
        ct = self.constant_time
        if self.radices is not None:
            return RiffpeX(self.radices, key, self.tweak, self.bytes_per_value, constant_time=ct)
        return Riffpe(
            self.radix, self.digits, key, self.tweak, self.bytes_per_value, constant_time=ct
        )


@dataclass(frozen=True)
class FormatSpec:
    """The same for a string column: :class:`riffpe.FormatCipher`'s keyword arguments."""

    options: tuple[tuple[str, Any], ...]
    threads: int | None
    key_env: str | None
    key_provider: KeyProvider | None
    key_id: str | None

    def cache_key(self) -> tuple:
        return ("format", self.options, _key_source(self.key_env, self.key_provider, self.key_id))

    def key(self) -> bytes:
        return _read_key(self.key_env, self.key_provider)

    def build(self, key: bytes) -> FormatCipher:
        options = dict(self.options)
        if options.get("alphabets") is not None:
            options["alphabets"] = dict(options["alphabets"])
        return FormatCipher(key, **options)


_CIPHERS: dict[tuple, Riffpe | RiffpeX | FormatCipher] = {}
_LOCK = threading.Lock()


def cipher_for(spec: CipherSpec | FormatSpec) -> Riffpe | RiffpeX | FormatCipher:
    """The cipher for ``spec``, built on first use in this process and kept."""
    cache_key = spec.cache_key()
    fpe = _CIPHERS.get(cache_key)
    if fpe is None:
        with _LOCK:
            fpe = _CIPHERS.get(cache_key)
            if fpe is None:
                key = spec.key()
                fpe = spec.build(key)
                del key
                _CIPHERS[cache_key] = fpe
    return fpe


_FORMAT_ARGS = (
    "format", "template", "alphabet", "passthrough", "alphabets", "keep_prefix", "keep_suffix",
    "luhn", "fold_case", "literals_optional", "allow_small_domain", "context", "security",
)


def _spec(
    radix: int | None,
    digits: int | None,
    radices: Sequence[int] | None,
    key_env: str | None,
    key_provider: KeyProvider | None,
    key_id: str | None,
    tweak: bytes,
    bytes_per_value: int,
    order: str,
    threads: int | None,
    formats: dict[str, Any],
    constant_time: bool | None = None,
) -> CipherSpec | FormatSpec:
    if (key_provider is None) == (key_env is None):
        raise ValueError("give exactly one of key_env and key_provider")
    given = {k: v for k, v in formats.items() if v is not None}
    if any(given.get(k) is not None for k in ("format", "template", "alphabet")):
        if constant_time is not None:
            given["constant_time"] = bool(constant_time)
        if radix is not None or digits is not None or radices is not None:
            raise ValueError("give a string format or integer radices, not both")
        if given.get("alphabets") is not None:
            given["alphabets"] = tuple(sorted(dict(given["alphabets"]).items()))
        if "context" in given:
            given["context"] = bytes(given["context"])
        spec = FormatSpec(tuple(sorted(given.items())), threads, key_env, key_provider, key_id)
        # Fails on the driver, not in a task, when the format is refused.
        spec.build(bytes(16))
        return spec
    if set(given) - {"allow_small_domain", "security"} or given.get("allow_small_domain"):
        raise ValueError("format options need format, template or alphabet")
    if (radices is None) == (radix is None or digits is None):
        raise ValueError(
            "give radix and digits (Riffpe), radices (RiffpeX), or a string format"
        )
    if order not in ("little", "big"):
        raise ValueError("order must be 'little' or 'big'")
    spec = CipherSpec(
        radix, digits, None if radices is None else tuple(radices), bytes(tweak),
        bytes_per_value, order, threads, key_env, key_provider, key_id,
        None if constant_time is None else bool(constant_time),
    )
    # Fails on the driver, not in a task, when the domain cannot be a Spark long.
    probe = RiffpeX(spec.radices, bytes(16), b"", 1) if spec.radices is not None \
        else Riffpe(spec.radix, spec.digits, bytes(16), b"", 1)
    if probe._max_u64 is None or probe._max_u64 >= 2**63:
        raise ValueError("the domain does not fit a Spark long (int64)")
    return spec


def _transform(
    spec: CipherSpec | FormatSpec, values: pa.Array, encrypt: bool, to: str | None = None
) -> pa.Array:
    """``values`` through the cipher. Integers held as strings (``to`` given) are parsed here,
    not cast by Spark, which would make a malformed value null (or, under ANSI SQL, print it):
    ``to='string'`` writes them back as zero-padded strings, ``to='int64'`` as longs."""
    fpe = cipher_for(spec)
    if isinstance(fpe, FormatCipher):
        strings = fpe.encrypt_strings if encrypt else fpe.decrypt_strings
        return strings(values, threads=spec.threads)
    if to is not None:
        return decimal_strings(fpe, values, encrypt, spec.order, spec.threads, to)
    method = fpe.encrypt_ints if encrypt else fpe.decrypt_ints
    return method(values, order=spec.order, threads=spec.threads)


def _udf_input(values: pa.Array, string: bool) -> tuple[pa.Array, str | None]:
    """A function's argument as :func:`_transform` reads it: with how integers held as text come
    back (``'int64'``), or ``None``. Spark has no unsigned integers, so any integer fits int64."""
    text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    if string:
        if text:
            return values, None
        raise TypeError(
            f"a format function takes strings, not {values.type}: cast its argument to string"
        )
    if pa.types.is_integer(values.type):
        return values.cast(pa.int64()), None
    if text:
        return values, "int64"
    if pa.types.is_decimal(values.type) and values.type.scale == 0:
        return values.cast(pa.string()), "int64"
    raise TypeError(
        f"an integer function takes integers, decimal(p, 0) or strings, not {values.type}"
    )


def _udf(spec: CipherSpec | FormatSpec, encrypt: bool):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType

    if not hasattr(F, "arrow_udf"):
        raise RuntimeError(
            "column functions need pyspark 4.1 or later; use encrypt_columns/decrypt_columns"
        )

    string = isinstance(spec, FormatSpec)

    def riffpe_fpe(values: pa.Array) -> pa.Array:
        values, to = _udf_input(values, string)
        return _transform(spec, values, encrypt, to)

    return F.arrow_udf(riffpe_fpe, StringType() if string else LongType())


def _column(col: Any, spec: CipherSpec | FormatSpec, encrypt: bool):
    from pyspark.sql import functions as F

    column = F.col(col) if isinstance(col, str) else col
    if isinstance(spec, FormatSpec):
        # Strings of any column, as a cast makes them.
        column = column.cast("string")
    return _udf(spec, encrypt)(column)


def _column_spec(kwargs: dict) -> CipherSpec | FormatSpec:
    key_provider = kwargs.pop("key_provider", None)
    key_env = kwargs.pop("key_env", "RIFFPE_KEY")
    formats = {name: kwargs.pop(name, None) for name in _FORMAT_ARGS}
    spec = _spec(
        kwargs.pop("radix", None), kwargs.pop("digits", None), kwargs.pop("radices", None),
        None if key_provider else key_env, key_provider, kwargs.pop("key_id", None),
        kwargs.pop("tweak", b""), kwargs.pop("bytes_per_value", 16),
        kwargs.pop("order", "little"), kwargs.pop("threads", 1), formats,
        kwargs.pop("constant_time", None),
    )
    if kwargs:
        raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
    return spec


def encrypt_column(
    col: Any,
    *,
    radix: int | None = None,
    digits: int | None = None,
    radices: Sequence[int] | None = None,
    key_env: str | None = "RIFFPE_KEY",
    key_provider: KeyProvider | None = None,
    key_id: str | None = None,
    tweak: bytes = b"",
    bytes_per_value: int = 16,
    order: str = "little",
    threads: int | None = 1,
    constant_time: bool | None = None,
    **format_options: Any,
):
    """A Column that encrypts ``col`` (name or Column).

    Integers: the domain is Riffpe(``radix``, ``digits``) or RiffpeX(``radices``) and must fit a
    long; the column holds integers, ``decimal(p, 0)`` values or strings, and the result is a
    long column. Strings are parsed here, not cast by Spark: a value that is no decimal integer
    raises naming its row, where a cast to long would make it null or print it. Strings: give
    ``format``, ``template`` or ``alphabet`` and any other keyword argument of
    :class:`riffpe.FormatCipher` (``keep_suffix``, ``luhn``, ``context`` …); the column is cast
    to string and nulls stay null.

    The key is read on each executor from ``key_env`` (hex) or by calling ``key_provider``
    (give it ``key_provider=...`` and ``key_env=None``; ``key_id`` names it for the cache when
    it is a lambda). ``threads`` per batch: Spark already runs one task per core.
    ``constant_time=True`` selects with timing that does not depend on the values, ``False``
    with faster lookups whose timing does (the same results); by default constant-time up to
    radix 256, as :class:`riffpe.Riffpe`.
    """
    spec = _column_spec(dict(
        radix=radix, digits=digits, radices=radices, key_env=key_env, key_provider=key_provider,
        key_id=key_id, tweak=tweak, bytes_per_value=bytes_per_value, order=order,
        threads=threads, constant_time=constant_time, **format_options,
    ))
    return _column(col, spec, True)


def decrypt_column(
    col: Any,
    *,
    radix: int | None = None,
    digits: int | None = None,
    radices: Sequence[int] | None = None,
    key_env: str | None = "RIFFPE_KEY",
    key_provider: KeyProvider | None = None,
    key_id: str | None = None,
    tweak: bytes = b"",
    bytes_per_value: int = 16,
    order: str = "little",
    threads: int | None = 1,
    constant_time: bool | None = None,
    **format_options: Any,
):
    """A Column that decrypts ``col``; the inverse of :func:`encrypt_column`."""
    spec = _column_spec(dict(
        radix=radix, digits=digits, radices=radices, key_env=key_env, key_provider=key_provider,
        key_id=key_id, tweak=tweak, bytes_per_value=bytes_per_value, order=order,
        threads=threads, constant_time=constant_time, **format_options,
    ))
    return _column(col, spec, False)


def encrypt_udf(**options: Any):
    """An Arrow UDF that encrypts its one argument (pyspark 4.1 or later), for SQL.

    Takes the keyword arguments of :func:`encrypt_column`. Register it to call it from SQL,
    or call it on a Column::

        spark.udf.register("encrypt_card", encrypt_udf(radix=10, digits=16))
        spark.sql("SELECT encrypt_card(card) AS card FROM payments")

    With ``radix``/``radices`` it takes integer, ``decimal(p, 0)`` or string values (decimal
    integers, parsed by riffpe) and returns longs; with a string format, strings (``CAST(x AS
    STRING)`` for others). Another type raises ``TypeError`` when the query runs. The key is
    read on each executor, as for :func:`encrypt_column`, and is not in the registered function.
    """
    return _udf(_column_spec(dict(options)), True)


def decrypt_udf(**options: Any):
    """An Arrow UDF that decrypts its one argument; the inverse of :func:`encrypt_udf`."""
    return _udf(_column_spec(dict(options)), False)


def _integer_input(name: str, data_type: Any) -> str | None:
    """How an integer cipher reads a column: as longs (``None``), or as text written back as
    text (``'string'``) or as longs (``'int64'``, for decimals)."""
    from pyspark.sql import types as T

    if isinstance(data_type, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        return None
    if isinstance(data_type, T.StringType):
        return "string"
    if isinstance(data_type, T.DecimalType) and data_type.scale == 0:
        return "int64"
    raise TypeError(
        f"column {name!r} is {data_type.simpleString()}: integer ciphers take integer, "
        "decimal(p, 0) or string columns"
    )


def _columns(df: Any, columns: Iterable[str], encrypt: bool, kwargs: dict) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    names = list(columns)
    spec = _column_spec(kwargs)
    integers = not isinstance(spec, FormatSpec)
    reads: dict[str, str | None] = {}
    for name in names:
        reads[name] = _integer_input(name, df.schema[name].dataType) if integers else None
        as_long = integers and reads[name] is None
        df = df.withColumn(name, F.col(name).cast("long" if as_long else "string"))
    # Decimals, read as text, come back as longs; every other column as the casts made it.
    schema = T.StructType([
        T.StructField(f.name, T.LongType() if reads.get(f.name) == "int64" else f.dataType,
                      f.nullable, f.metadata)
        for f in df.schema.fields
    ])

    def batches(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in it:
            arrays = list(batch.columns)
            for name in names:
                at = batch.schema.get_field_index(name)
                arrays[at] = _transform(spec, arrays[at], encrypt, reads[name])
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)

    return df.mapInArrow(batches, schema)


def encrypt_columns(df: Any, columns: Iterable[str], **kwargs: Any) -> Any:
    """``df`` with ``columns`` encrypted (``mapInArrow``; pyspark 3.3 or later).

    Takes the keyword arguments of :func:`encrypt_column`: integer columns with ``radix`` and
    ``digits`` or ``radices``, string columns with ``format``, ``template`` or ``alphabet``.

    With ``radix``/``radices``, a long, int, short or byte column becomes a long column; a
    string column of decimal integers stays a string column, each value zero-padded to the
    domain's width between the spaces or tabs it had (as the ``riffpe`` command writes a
    CSV field), empty and blank values kept; a ``decimal(p, 0)`` column becomes a long column.
    Other types are refused on the driver. A string that is no decimal integer raises
    ``ValueError`` naming its row (in its batch), never the value.
    """
    return _columns(df, columns, True, dict(kwargs))


def decrypt_columns(df: Any, columns: Iterable[str], **kwargs: Any) -> Any:
    """``df`` with ``columns`` decrypted; the inverse of :func:`encrypt_columns`."""
    return _columns(df, columns, False, dict(kwargs))


__all__ = (
    "encrypt_column",
    "decrypt_column",
    "encrypt_columns",
    "decrypt_columns",
    "encrypt_udf",
    "decrypt_udf",
    "cipher_for",
    "CipherSpec",
    "FormatSpec",
)
