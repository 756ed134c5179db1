"""Arrow integer and string arrays (anything with ``__arrow_c_array__`` or
``__arrow_c_stream__``)."""

from __future__ import annotations

from typing import Any


def _pyarrow():
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("Arrow input needs pyarrow: pip install 'riffpe[arrow]'") from e
    return pyarrow


def arrow_ints(fpe, values: Any, encrypt: bool, order: str, threads: int | None) -> Any:
    """Encrypts or decrypts an int64 or uint64 Arrow array; nulls stay null.

    Returns a ``pyarrow.Array`` (or ``ChunkedArray`` for stream input), which itself exports
    ``__arrow_c_array__``. Row numbers in errors count from the start of the whole input.
    """
    pa = _pyarrow()
    if isinstance(values, pa.ChunkedArray) or (
        not isinstance(values, pa.Array) and not hasattr(values, "__arrow_c_array__")
    ):
        chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array(values)
        _check_type(pa, chunked.type)
        out, offset = [], 0
        for chunk in chunked.chunks:
            out.append(_array(pa, fpe, chunk, encrypt, order, threads, offset))
            offset += len(chunk)
        return pa.chunked_array(out, type=chunked.type)
    array = values if isinstance(values, pa.Array) else pa.array(values)
    return _array(pa, fpe, array, encrypt, order, threads, 0)


def _check_type(pa, arrow_type) -> None:
    if arrow_type not in (pa.int64(), pa.uint64()):
        raise TypeError(f"Arrow values must be int64 or uint64, not {arrow_type}")


def _array(pa, fpe, array, encrypt: bool, order: str, threads: int | None, offset: int):
    _check_type(pa, array.type)
    valid = array.is_valid().to_numpy(zero_copy_only=False) if array.null_count else None
    # Nulls are encrypted as 0 (always in the domain) and masked again afterwards.
    data = array.fill_null(0).to_numpy(zero_copy_only=False) if valid is not None \
        else array.to_numpy(zero_copy_only=False)
    try:
        out = fpe._ints(data, encrypt, order, threads)
    except ValueError as e:
        raise _shift_row(e, offset) from None
    return pa.array(out, type=array.type, mask=None if valid is None else ~valid)


def _shift_row(error: ValueError, offset: int) -> ValueError:
    message = str(error)
    if offset and message.startswith("row "):
        row, _, rest = message[4:].partition(":")
        if row.isdigit():
            return ValueError(f"row {int(row) + offset}:{rest}")
    return error


def arrow_strings(fc, values: Any, encrypt: bool, threads: int | None) -> Any:
    """Encrypts or decrypts an Arrow string array (``string``, ``large_string`` or
    ``string_view``); nulls stay null, and the result has the input's type.

    Returns a ``pyarrow.Array`` (or ``ChunkedArray`` for stream input). Row numbers in errors
    count from the start of the whole input.
    """
    pa = _pyarrow()
    if isinstance(values, pa.ChunkedArray) or (
        not isinstance(values, pa.Array) and not hasattr(values, "__arrow_c_array__")
    ):
        chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array(values)
        _check_string_type(pa, chunked.type)
        out, offset = [], 0
        for chunk in chunked.chunks:
            out.append(_string_array(pa, fc, chunk, encrypt, threads, offset))
            offset += len(chunk)
        return pa.chunked_array(out, type=chunked.type)
    array = values if isinstance(values, pa.Array) else pa.array(values)
    return _string_array(pa, fc, array, encrypt, threads, 0)


def _is_string_type(pa, arrow_type) -> bool:
    is_view = getattr(pa.types, "is_string_view", lambda _: False)
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
        or is_view(arrow_type)


def _check_string_type(pa, arrow_type) -> None:
    if not _is_string_type(pa, arrow_type):
        raise TypeError(f"Arrow values must be strings, not {arrow_type}")


def _string_array(pa, fc, array, encrypt: bool, threads: int | None, offset: int):
    import numpy as np

    _check_string_type(pa, array.type)
    # One layout for the compiled side: 64-bit offsets into one UTF-8 buffer.
    large = array if pa.types.is_large_string(array.type) else array.cast(pa.large_string())
    n = len(large)
    _, offsets_buffer, data_buffer = large.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64, count=large.offset + n + 1)
    offsets = offsets[large.offset:]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None \
        else np.empty(0, dtype=np.uint8)
    valid = large.is_valid().to_numpy(zero_copy_only=False) if large.null_count else None
    try:
        out_offsets, out_data = fc._arrow_strings(offsets, data, valid, encrypt, threads)
    except ValueError as e:
        raise _shift_row(e, offset) from None
    validity = None if valid is None else pa.array(valid, type=pa.bool_()).buffers()[1]
    out = pa.Array.from_buffers(
        pa.large_string(), n,
        [validity, pa.py_buffer(out_offsets), pa.py_buffer(out_data)],
        null_count=large.null_count,
    )
    return out if out.type == array.type else out.cast(array.type)


_BLANKS, _DIGITS = " \t", "0123456789"


def decimal_strings(fpe, values, encrypt: bool, order: str, threads: int | None, to: str):
    """Encrypts or decrypts decimal integers held as strings (an Arrow string array).

    ``to='string'``: strings of the input's type, each integer zero-padded to the domain's
    width between the spaces or tabs it had (as the command line writes a CSV field); nulls,
    empty and blank values stay as they are. ``to='int64'``: the integers, blank values null.
    A value that is no decimal integer raises ``ValueError`` naming its row, never the value,
    where a cast would make it null (or, under ANSI SQL, print it).
    """
    import pyarrow.compute as pc

    pa = _pyarrow()
    _check_string_type(pa, values.type)
    # Trims and character-class kernels, not a regex, which is slow beside the cipher.
    core = pc.utf8_trim(values, _BLANKS)
    blank = pc.fill_null(pc.equal(pc.utf8_length(core), 0), True)
    _refuse_first(pc.invert(pc.or_kleene(blank, pc.ascii_is_decimal(core))),
                  "the value is not a decimal integer (digits, with spaces or tabs around)")
    # Leading zeros can be any number, as on the command line; more than 19 other digits
    # cannot be below a domain that fits 64 bits, nor fit the cast.
    significant = pc.utf8_ltrim(core, "0")
    length = pc.utf8_length(significant)
    _refuse_first(pc.greater(length, 19), "value is not below the size of the domain")
    significant = pc.if_else(pc.equal(length, 0), pa.scalar("0", core.type), significant)
    numbers = pc.cast(pc.if_else(blank, pa.scalar(None, core.type), significant), pa.uint64())
    out = arrow_ints(fpe, numbers, encrypt, order, threads)
    if to == "int64":
        return pc.cast(out, pa.int64())
    width = len(str(fpe._max_u64))
    padded = pc.utf8_lpad(pc.cast(out, values.type), width, "0")
    # A checked value is blanks, digits, blanks: what lies before and after the digits.
    lead = pc.utf8_rtrim(pc.utf8_rtrim(values, _BLANKS), _DIGITS)
    trail = pc.utf8_ltrim(pc.utf8_ltrim(values, _BLANKS), _DIGITS)
    text = pc.binary_join_element_wise(lead, padded, trail, pa.scalar("", values.type))
    return pc.if_else(blank, values, text)


def _refuse_first(mask, reason: str) -> None:
    import pyarrow.compute as pc

    if pc.any(mask).as_py():
        raise ValueError(f"row {pc.index(mask, True).as_py()}: {reason}")
