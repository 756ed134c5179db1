"""pandas Series in, Series out: the same index, name and dtype, missing values kept.

pandas stays optional: a value can only be a Series once pandas has been imported.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_series(values: Any) -> bool:
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(values, pandas.Series)


def _like(series, data, dtype=None):
    return sys.modules["pandas"].Series(data, index=series.index, name=series.name, dtype=dtype)


def _through_arrow(series, run, accepts, wanted: str):
    """An extension-dtype Series (nullable ``Int64``, ``string``, ``int64[pyarrow]``, ...)
    through Arrow, where its nulls are a validity mask, and back to its own dtype; refused,
    naming its dtype, unless ``accepts`` its Arrow type."""
    from ._arrow import _pyarrow

    array = _pyarrow().array(series)
    if not accepts(array.type):
        raise TypeError(f"values must be {wanted}, not {series.dtype}")
    out = run(array).to_pandas(types_mapper=lambda _: series.dtype)
    return _like(series, out.array)


def ints(fpe, series, encrypt: bool, order: str, threads: int | None) -> Any:
    from . import _batch
    from ._arrow import _pyarrow, arrow_ints

    dtype = series.dtype
    if dtype == np.dtype(object):
        return _like(series, _batch.ints(fpe, series.tolist(), encrypt, order, threads), object)
    if isinstance(dtype, np.dtype):
        if dtype not in _batch._INT_DTYPES:
            hint = " (read the column as Int64, which keeps all its digits)" \
                if dtype.kind == "f" else ""
            raise TypeError(f"values must be uint64 or int64, not {dtype}{hint}")
        return _like(series, _batch.ints(fpe, series.to_numpy(), encrypt, order, threads))

    pa = _pyarrow()
    return _through_arrow(
        series, lambda a: arrow_ints(fpe, a, encrypt, order, threads),
        lambda t: t in (pa.int64(), pa.uint64()), "uint64 or int64",
    )


def strings(fc, series, encrypt: bool, threads: int | None) -> Any:
    from ._arrow import _is_string_type, _pyarrow, arrow_strings

    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        if dtype != np.dtype(object):
            raise TypeError(f"values must be strings, not {dtype}")
        # None, NaN (what read_csv leaves in an empty cell) and pd.NA are missing, and stay so.
        missing = series.isna().tolist()
        items = series.tolist()
        out = fc._strings([None if m else v for v, m in zip(items, missing)], encrypt, threads)
        return _like(series, [v if m else o for v, o, m in zip(items, out, missing)], object)

    pa = _pyarrow()
    return _through_arrow(
        series, lambda a: arrow_strings(fc, a, encrypt, threads),
        lambda t: _is_string_type(pa, t), "strings",
    )
