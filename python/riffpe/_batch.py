"""Many messages at once: numpy arrays, Arrow arrays, pandas Series and plain sequences,
checked up front."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _pandas

_INT_DTYPES = (np.dtype(np.uint64), np.dtype(np.int64))


def _is_arrow(values: Any) -> bool:
    return not isinstance(values, np.ndarray) and (
        hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__")
    )


def ints(fpe, values: Any, encrypt: bool, order: str, threads: int | None) -> Any:
    """Integers of ``fpe``'s domain through ``fpe``; the result has the input's type."""
    if isinstance(values, np.ndarray):
        if values.dtype not in _INT_DTYPES:
            raise TypeError(f"values must be uint64 or int64, not {values.dtype}")
        if values.ndim != 1:
            raise ValueError(f"values must be one-dimensional, not {values.ndim}-dimensional")
        return fpe._ints(values, encrypt, order, threads)
    if _pandas.is_series(values):
        return _pandas.ints(fpe, values, encrypt, order, threads)
    if _is_arrow(values):
        from ._arrow import arrow_ints

        return arrow_ints(fpe, values, encrypt, order, threads)
    return _sequence_ints(fpe, values, encrypt, order, threads)


def _sequence_ints(fpe, values: Any, encrypt: bool, order: str, threads: int | None) -> list:
    items = list(values)
    for row, v in enumerate(items):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"row {row}: values must be ints")
        if not 0 <= v < 2**64:
            raise ValueError(f"row {row}: value is not below the size of the domain")
    array = np.array(items, dtype=np.uint64)
    return fpe._ints(array, encrypt, order, threads).tolist()


def digits(fpe, messages: Any, encrypt: bool, threads: int | None) -> Any:
    """A 2-D array of messages, one per row; the result has the input's dtype."""
    array = np.asarray(messages)
    if array.ndim != 2:
        raise ValueError(f"digits must be two-dimensional (one message per row), not {array.ndim}")
    if array.dtype.kind not in "iu":
        raise TypeError(f"digits must be integers, not {array.dtype}")
    if array.size and (int(array.min()) < 0 or int(array.max()) >= 2**32):
        row = int(np.argwhere((array < 0) | (array >= 2**32))[0][0])
        raise ValueError(f"row {row}: digit is out of range")
    if max(fpe.radices) - 1 > np.iinfo(array.dtype).max:
        raise TypeError(f"{array.dtype} cannot hold every digit of radix {max(fpe.radices)}")
    out = fpe._digits(np.ascontiguousarray(array, dtype=np.uint32), encrypt, threads)
    if isinstance(messages, np.ndarray):
        return out.astype(array.dtype, copy=False)
    return out.tolist()
