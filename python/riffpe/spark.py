"""Spark column functions that encrypt and decrypt integer columns, through Arrow.

Values travel as Arrow ``int64`` (never through pandas or floating point), so 16- to 19-digit
values stay exact and nulls stay null. The key never enters the query plan: each executor reads
it itself, from an environment variable (hex, ``key_env``) or a ``key_provider`` callable (for a
secrets file or a key service), and builds the cipher once per Python worker process.

``encrypt_column``/``decrypt_column`` return a Column (Arrow UDF, pyspark 4.1 or later);
``encrypt_columns``/``decrypt_columns`` transform whole DataFrames with ``mapInArrow`` and work
on pyspark 3.3 or later.

Example::

    from riffpe.spark import encrypt_column
    cards = df.withColumn("card", encrypt_column("card", radix=10, digits=16))
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ._cipher import Riffpe, RiffpeX

KeyProvider = Callable[[], bytes]


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

    def cache_key(self) -> tuple:
        if self.key_provider is None:
            source: Any = ("env", self.key_env)
        else:
            provider = self.key_provider
            name = f"{getattr(provider, '__module__', '')}.{getattr(provider, '__qualname__', '')}"
            source = ("provider", self.key_id or name)
        return (self.radix, self.digits, self.radices, self.tweak, self.bytes_per_value, source)

    def key(self) -> bytes:
        if self.key_provider is not None:
            key = self.key_provider()
            if not isinstance(key, (bytes, bytearray, memoryview)):
                raise TypeError("key_provider must return bytes")
            return bytes(key)
        text = os.environ.get(self.key_env or "")
        if text is None:
            raise RuntimeError(
                f"the environment variable {self.key_env} is not set on this executor"
            )
        try:
            return bytes.fromhex(text.strip())
        except ValueError:
            raise ValueError(f"{self.key_env} does not hold a hex key") from None


_CIPHERS: dict[tuple, Riffpe | RiffpeX] = {}
_LOCK = threading.Lock()


def cipher_for(spec: CipherSpec) -> Riffpe | RiffpeX:
    """The cipher for ``spec``, built on first use in this process and kept."""
    cache_key = spec.cache_key()
    fpe = _CIPHERS.get(cache_key)
    if fpe is None:
        with _LOCK:
            fpe = _CIPHERS.get(cache_key)
            if fpe is None:
                key = spec.key()
                if spec.radices is not None:
                    fpe = RiffpeX(spec.radices, key, spec.tweak, spec.bytes_per_value)
                else:
                    fpe = Riffpe(spec.radix, spec.digits, key, spec.tweak, spec.bytes_per_value)
                del key
                _CIPHERS[cache_key] = fpe
    return fpe


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
) -> CipherSpec:
    if (radices is None) == (radix is None or digits is None):
        raise ValueError("give radix and digits (Riffpe) or radices (RiffpeX)")
    if (key_provider is None) == (key_env is None):
        raise ValueError("give exactly one of key_env and key_provider")
    if order not in ("little", "big"):
        raise ValueError("order must be 'little' or 'big'")
    spec = CipherSpec(
        radix, digits, None if radices is None else tuple(radices), bytes(tweak),
        bytes_per_value, order, threads, key_env, key_provider, key_id,
    )
    # Fails on the driver, not in a task, when the domain cannot be a Spark long.
    probe = RiffpeX(spec.radices, bytes(16), b"", 1) if spec.radices is not None \
        else Riffpe(spec.radix, spec.digits, bytes(16), b"", 1)
    if probe._max_u64 is None or probe._max_u64 >= 2**63:
        raise ValueError("the domain does not fit a Spark long (int64)")
    return spec


def _transform(spec: CipherSpec, values: pa.Array, encrypt: bool) -> pa.Array:
    fpe = cipher_for(spec)
    method = fpe.encrypt_ints if encrypt else fpe.decrypt_ints
    return method(values, order=spec.order, threads=spec.threads)


def _column(col: Any, spec: CipherSpec, encrypt: bool):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    if not hasattr(F, "arrow_udf"):
        raise RuntimeError(
            "column functions need pyspark 4.1 or later; use encrypt_columns/decrypt_columns"
        )

    def riffpe_fpe(values: pa.Array) -> pa.Array:
        return _transform(spec, values, encrypt)

    udf = F.arrow_udf(riffpe_fpe, LongType())
    column = F.col(col) if isinstance(col, str) else col
    return udf(column.cast("long"))


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
):
    """A Column that encrypts the integer column ``col`` (name or Column) as a long.

    The domain is Riffpe(``radix``, ``digits``) or RiffpeX(``radices``) and must fit a long.
    The key is read on each executor from ``key_env`` (hex) or by calling ``key_provider``
    (give it ``key_provider=...`` and ``key_env=None``; ``key_id`` names it for the cache when
    it is a lambda). ``threads`` per batch: Spark already runs one task per core.
    """
    spec = _spec(radix, digits, radices, None if key_provider else key_env, key_provider,
                 key_id, tweak, bytes_per_value, order, threads)
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
):
    """A Column that decrypts ``col``; the inverse of :func:`encrypt_column`."""
    spec = _spec(radix, digits, radices, None if key_provider else key_env, key_provider,
                 key_id, tweak, bytes_per_value, order, threads)
    return _column(col, spec, False)


def _columns(df: Any, columns: Iterable[str], encrypt: bool, kwargs: dict) -> Any:
    from pyspark.sql import functions as F

    names = list(columns)
    key_provider = kwargs.pop("key_provider", None)
    key_env = None if key_provider else kwargs.pop("key_env", "RIFFPE_KEY")
    kwargs.pop("key_env", None)
    spec = _spec(
        kwargs.pop("radix", None), kwargs.pop("digits", None), kwargs.pop("radices", None),
        key_env, key_provider, kwargs.pop("key_id", None), kwargs.pop("tweak", b""),
        kwargs.pop("bytes_per_value", 16), kwargs.pop("order", "little"),
        kwargs.pop("threads", 1),
    )
    if kwargs:
        raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
    for name in names:
        df = df.withColumn(name, F.col(name).cast("long"))

    def batches(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in it:
            arrays = list(batch.columns)
            for name in names:
                at = batch.schema.get_field_index(name)
                arrays[at] = _transform(spec, arrays[at], encrypt)
            yield pa.RecordBatch.from_arrays(arrays, schema=batch.schema)

    return df.mapInArrow(batches, df.schema)


def encrypt_columns(df: Any, columns: Iterable[str], **kwargs: Any) -> Any:
    """``df`` with the integer ``columns`` encrypted (``mapInArrow``; pyspark 3.3 or later).

    Takes the keyword arguments of :func:`encrypt_column`.
    """
    return _columns(df, columns, True, dict(kwargs))


def decrypt_columns(df: Any, columns: Iterable[str], **kwargs: Any) -> Any:
    """``df`` with the integer ``columns`` decrypted; the inverse of :func:`encrypt_columns`."""
    return _columns(df, columns, False, dict(kwargs))


__all__ = (
    "encrypt_column",
    "decrypt_column",
    "encrypt_columns",
    "decrypt_columns",
    "cipher_for",
    "CipherSpec",
)
