"""Many strings at once: lists, numpy ``str``/``object`` arrays, Arrow string arrays and
pandas Series."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _pandas
from ._batch import _is_arrow


def strings(fc, values: Any, encrypt: bool, threads: int | None) -> Any:
    """Strings through the format cipher ``fc``; the result has the input's type."""
    if isinstance(values, (str, bytes)):
        raise TypeError("values must be a sequence of str: use encrypt() for one value")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"values must be one-dimensional, not {values.ndim}-dimensional")
        if values.dtype.kind not in "UO":
            raise TypeError(f"values must be str or object, not {values.dtype}")
        out = fc._strings(values.tolist(), encrypt, threads)
        # The format keeps every value's length, so a fixed-width str dtype still fits.
        return np.array(out, dtype=values.dtype)
    if _pandas.is_series(values):
        return _pandas.strings(fc, values, encrypt, threads)
    if _is_arrow(values):
        from ._arrow import arrow_strings

        return arrow_strings(fc, values, encrypt, threads)
    return fc._strings(list(values), encrypt, threads)
