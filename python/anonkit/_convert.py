"""Tables between pandas (or dicts of lists) and anonkit_table.

Into the library: int, uint and bool columns go as int64, float columns as
double (NaN is missing), pandas' nullable integers (Int8..Int64, UInt*) and
Float32/64 as their values plus their mask; these buffers are handed to the
library as they are (ffi.from_buffer, no copy in Python; an int32 column is
widened once). int64 and float64 buffers are BORROWED by the table
(anonkit_table_add_*_ref): the CTable keeps them alive until it is freed, and
the caller's frame must not change during the call. Text (object, string,
category and anything else) goes in dictionary form when its distinct values
are all str (or it is a categorical): the codes and each distinct value
encoded once (anonkit_table_add_text_codes); else one UTF-8 buffer with int64
offsets (Arrow's layout). The library copies text.

Out of the library: each column is read in the kind the library gives
(int64, double, text) and, when the input had a column of that name, turned
back into the input's dtype where the values allow it. A generalized QI
column (in dictionary form: its distinct published values and a code per
row, anonkit_table_column_codes) becomes a pandas Categorical made from
those codes and values (each value decoded once, no Python object per cell;
categories in the library's order, unordered); with categorical=False it
becomes text in the input's dtype (object, or string), as a copied text
column does. A copied text column comes back in dictionary form too when it
went in so (the codes of a categorical or of pandas' factorize), and is then
gathered from its decoded values by code.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ._lib import ffi, lib
from .errors import error_for

TableLike = Union[pd.DataFrame, Mapping[str, Any]]


def _shortest(v: float) -> str:
    """The text the library writes for a double: the first of %.15g, %.16g,
    %.17g that reads back exactly."""
    for p in (15, 16, 17):
        s = "%.*g" % (p, v)
        if float(s) == v:
            return s
    return repr(v)


class CTable:
    """An owned anonkit_table (freed when garbage collected or by close())."""

    def __init__(self, ptr: Any = None) -> None:
        self.ptr = ptr if ptr is not None else lib.anonkit_table_create()
        if self.ptr == ffi.NULL:
            raise MemoryError("anonkit_table_create")
        self.keep: List[Any] = []  # the numpy arrays the table borrows, alive until it is freed

    def close(self) -> None:
        if self.ptr is not None:
            lib.anonkit_table_free(self.ptr)
            self.ptr = None
        self.keep = []

    def __del__(self) -> None:
        self.close()

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise error_for(rc, ffi.string(lib.anonkit_table_errmsg(self.ptr)).decode("utf-8", "replace"))


def _mask_ptr(mask: Optional[np.ndarray]) -> Any:
    if mask is None or not mask.any():
        return ffi.NULL
    return ffi.from_buffer("uint8_t[]", np.ascontiguousarray(mask).view(np.uint8))


# Texts are moved between Python and the library's offsets + bytes layout
# with numpy, not one Python call per cell: a column's distinct values are
# found first (pandas' factorize, or a categorical's own codes), each is
# encoded or decoded once, and the rows are gathered from them by code.
# Fixed-width byte rows of at most _WIDE bytes (longer texts go the per-cell
# way, whose memory is proportional to the text itself).
_WIDE = 256
# Rows from which a published table's columns are converted on several threads.
_THREADED_ROWS = 100000


def _factorize_texts(off: np.ndarray, data: np.ndarray, n: int) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Codes of the n texts of an offsets + bytes buffer, equal texts equal
    codes (0, 1, ... in order of first appearance), and the row at which each
    code first appears; None when the rows are too long for this. The rows are laid into one
    fixed-width byte grid, NUL-padded to a multiple of 8, and its 8-byte
    words factorized (a hash, not a sort) one after the other together with
    the codes so far, starting from the lengths (so a NUL inside a text is
    not taken for padding)."""
    lens = np.diff(off)
    width = int(lens.max()) if n else 0
    w8 = max(8, (width + 7) // 8 * 8)
    if width > _WIDE or n * w8 > 4 * len(data) + (1 << 24):
        return None
    grid = np.zeros((n, w8), dtype=np.uint8)
    if n and int(lens.min()) == width:  # every row as long (codes, flags): the bytes are the grid's rows
        grid[:, :width] = data[:n * width].reshape(n, width)
    else:
        grid[np.arange(w8)[None, :] < lens[:, None]] = data  # row-major: row by row, byte by byte
    words = grid.view(np.uint64)[:, :(width + 7) // 8]
    # First one hash of each row (its words mixed with odd multipliers, the
    # length added), factorized once; kept when every row equals its code's
    # first row (no two texts share a hash), which is checked exactly.
    with np.errstate(over="ignore"):
        h = lens.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for j in range(words.shape[1]):
            h = (h ^ words[:, j]) * np.uint64(0xBF58476D1CE4E5B9 + 2 * j)
            h ^= h >> np.uint64(31)
    codes, uniq = pd.factorize(h)
    codes = np.asarray(codes, dtype=np.int64)
    first = _first_rows(codes, len(uniq))
    rep = first[codes]
    if np.array_equal(lens[rep], lens) and np.array_equal(words[rep], words):
        return codes, first
    codes, uniq = pd.factorize(lens)  # a collision: word by word, exactly
    for j in range(words.shape[1]):
        c, u = pd.factorize(words[:, j])
        codes, uniq = pd.factorize(codes.astype(np.int64) * len(u) + c)
    codes = np.asarray(codes, dtype=np.int64)
    return codes, _first_rows(codes, len(uniq))


def _first_rows(codes: np.ndarray, count: int) -> np.ndarray:
    """For codes 0..count-1 numbered in order of first appearance: the row at
    which each first appears."""
    first = np.empty(count, dtype=np.int64)
    n = len(codes)
    first[codes[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)  # the last write wins
    return first


def _text_buffers(values: np.ndarray, mask: np.ndarray) -> Tuple[np.ndarray, bytes]:
    """Offsets (n + 1, int64) and the UTF-8 bytes of the strings of an object
    array, one Python call per cell: for values that are not all str (1 and
    1.0 are one key to factorize but two texts)."""
    strs = [("" if m else (v if isinstance(v, str) else str(v))) for v, m in zip(values.tolist(), mask.tolist())]
    joined = "".join(strs)
    data = joined.encode("utf-8")
    n = len(strs)
    if len(data) == len(joined):  # ASCII: characters are bytes
        lens = np.fromiter(map(len, strs), dtype=np.int64, count=n)
    else:
        lens = np.fromiter((len(s.encode("utf-8")) for s in strs), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return offsets, data


def _values_buffer(uniques: List[str]) -> Tuple[np.ndarray, bytes]:
    """Offsets (len + 1, int64) and UTF-8 bytes of a few distinct values."""
    enc = [u.encode("utf-8") for u in uniques]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=len(enc)), out=offsets[1:])
    return offsets, b"".join(enc)


def _add_text_column(t: "CTable", cname: bytes, s: pd.Series, values: Any, n: int) -> None:
    """Adds a text column: in dictionary form (the codes and the distinct
    values, each encoded once, anonkit_table_add_text_codes: no text per row)
    for a categorical or a column whose distinct values are all str, else
    cell by cell as offsets + bytes."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = np.ascontiguousarray(s.cat.codes, dtype=np.int32)
        uniques = [u if isinstance(u, str) else str(u) for u in s.cat.categories.tolist()]
    else:
        fcodes, uniq = pd.factorize(values)  # missing values (None, NaN, pd.NA) get the code -1
        uniques = uniq.tolist() if hasattr(uniq, "tolist") else list(uniq)
        if not all(type(u) is str for u in uniques):  # 1 and 1.0 are one key but two texts: cell by cell
            mask = np.asarray(pd.isna(values), dtype=bool)
            offsets, data = _text_buffers(values, mask)
            t._check(lib.anonkit_table_add_text(t.ptr, cname, ffi.from_buffer("int64_t[]", offsets),
                                                ffi.from_buffer("char[]", data) if data else ffi.NULL,
                                                _mask_ptr(mask), n))
            return
        codes = np.ascontiguousarray(fcodes, dtype=np.int32)
    offsets, data = _values_buffer(uniques)
    t._check(lib.anonkit_table_add_text_codes(t.ptr, cname, ffi.from_buffer("int32_t[]", codes) if n else ffi.NULL, n,
                                              ffi.from_buffer("int64_t[]", offsets),
                                              ffi.from_buffer("char[]", data) if data else ffi.NULL, len(uniques)))


def text_ctable(columns: Sequence[Sequence[Optional[str]]]) -> "CTable":
    """A table of text columns "0", "1", ... from lists of str (None:
    missing), each as offsets + bytes in one call: for a hierarchy's few
    rows, without pandas' machinery."""
    t = CTable()
    for i, col in enumerate(columns):
        n = len(col)
        enc = [b"" if v is None else v.encode("utf-8") for v in col]
        offsets = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=n), out=offsets[1:])
        data = b"".join(enc)
        mask = np.fromiter((v is None for v in col), dtype=bool, count=n)
        t._check(lib.anonkit_table_add_text(t.ptr, str(i).encode(), ffi.from_buffer("int64_t[]", offsets),
                                            ffi.from_buffer("char[]", data) if data else ffi.NULL, _mask_ptr(mask), n))
    return t


def _columns_of(data: TableLike) -> List[Tuple[str, Any]]:
    if isinstance(data, pd.DataFrame):
        return [(str(name), data[name]) for name in data.columns]
    if isinstance(data, Mapping):
        return [(str(name), pd.Series(values)) for name, values in data.items()]
    raise TypeError(f"a table is a pandas DataFrame or a dict of lists, not {type(data).__name__}")


def to_ctable(data: TableLike) -> CTable:
    """An anonkit_table with the columns of a DataFrame or a dict of lists."""
    t = CTable()
    for name, s in _columns_of(data):
        add_series(t, name, s)
    return t


def add_series(t: CTable, name: str, s: pd.Series) -> None:
    """Adds one column (see the module's text for the kinds)."""
    cname = name.encode("utf-8")
    n = len(s)
    dtype = s.dtype
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and not isinstance(dtype, np.dtype):
        arr = s.array
        if isinstance(dtype, (pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype, pd.UInt8Dtype,
                              pd.UInt16Dtype, pd.UInt32Dtype, pd.UInt64Dtype)):
            values = np.ascontiguousarray(arr._data, dtype=np.int64)
            mask = np.asarray(arr._mask)
            t.keep.append(values)
            t._check(lib.anonkit_table_add_int64_ref(t.ptr, cname, ffi.from_buffer("int64_t[]", values),
                                                     _mask_ptr(mask), n))
            return
        if isinstance(dtype, (pd.Float32Dtype, pd.Float64Dtype)):
            values = np.ascontiguousarray(arr._data, dtype=np.float64)
            mask = np.asarray(arr._mask)
            t.keep.append(values)
            t._check(lib.anonkit_table_add_double_ref(t.ptr, cname, ffi.from_buffer("double[]", values),
                                                      _mask_ptr(mask), n))
            return
        values = None if isinstance(dtype, pd.CategoricalDtype) else np.asarray(s.astype(object))
    else:
        values = s.to_numpy()
        if values.dtype.kind in "iub":
            values = np.ascontiguousarray(values, dtype=np.int64)  # no copy for int64
            t.keep.append(values)  # borrowed by the table, not copied
            t._check(lib.anonkit_table_add_int64_ref(t.ptr, cname, ffi.from_buffer("int64_t[]", values), ffi.NULL, n))
            return
        if values.dtype.kind == "f":
            values = np.ascontiguousarray(values, dtype=np.float64)  # no copy for float64; NaN is missing
            t.keep.append(values)
            t._check(lib.anonkit_table_add_double_ref(t.ptr, cname, ffi.from_buffer("double[]", values), ffi.NULL, n))
            return
        values = values.astype(object, copy=False)  # (an object column as it is)
    _add_text_column(t, cname, s, values, n)


def _text_column(ptr: Any, c: int, n: int, mask: Optional[np.ndarray]) -> Tuple[np.ndarray, List[str]]:
    """Text column c of a table as codes (-1: missing) into its distinct
    values, each decoded once: the library's own codes for a column in
    dictionary form (a generalized column), else _factorize_texts."""
    offp = ffi.new("const int64_t **")
    bp = ffi.new("const char **")
    codesp = ffi.new("const int32_t **")
    countp = ffi.new("uint32_t *")
    if lib.anonkit_table_column_codes(ptr, c, codesp, countp, offp, bp) == 0:
        nd = int(countp[0])
        codes = np.frombuffer(ffi.buffer(codesp[0], n * 4), dtype=np.int32).astype(np.int64) if n \
            else np.zeros(0, np.int64)
        doff = np.frombuffer(ffi.buffer(offp[0], (nd + 1) * 8), dtype=np.int64)
        return codes, _decode_values(ffi.buffer(bp[0], int(doff[-1]))[:] if doff[-1] else b"", doff)
    lib.anonkit_table_column_text(ptr, c, offp, bp)
    off = np.frombuffer(ffi.buffer(offp[0], (n + 1) * 8), dtype=np.int64) if n else np.zeros(1, np.int64)
    total = int(off[-1])
    data = np.frombuffer(ffi.buffer(bp[0], total), dtype=np.uint8) if total else np.zeros(0, np.uint8)
    found = _factorize_texts(off, data, n)
    if found is not None:
        codes, first = found
        raw = data.tobytes()
        text = raw.decode("utf-8")
        lo, hi = off[first].tolist(), off[first + 1].tolist()
        if len(text) == len(raw):  # ASCII: characters are bytes
            uniques = [text[a:b] for a, b in zip(lo, hi)]
        else:
            uniques = [raw[a:b].decode("utf-8") for a, b in zip(lo, hi)]
    else:  # long texts: cell by cell
        raw = data.tobytes()
        o = off.tolist()
        codes, uniq = pd.factorize(np.array([raw[o[i]:o[i + 1]] for i in range(n)], dtype=object))
        uniques = [u.decode("utf-8") for u in uniq.tolist()]
        codes = np.asarray(codes, dtype=np.int64)
    if mask is not None:
        codes[mask] = -1
    return codes, uniques


def _dict_codes(ptr: Any, c: int, n: int) -> Optional[Tuple[np.ndarray, List[str]]]:
    """Column c in dictionary form (a generalized column): a view of its codes
    (int32, -1 missing; the table's memory, valid while the table lives) and
    its distinct values, each decoded once; None for a column not in that form."""
    offp = ffi.new("const int64_t **")
    bp = ffi.new("const char **")
    codesp = ffi.new("const int32_t **")
    countp = ffi.new("uint32_t *")
    if lib.anonkit_table_column_codes(ptr, c, codesp, countp, offp, bp) != 0:
        return None
    nd = int(countp[0])
    codes = np.frombuffer(ffi.buffer(codesp[0], n * 4), dtype=np.int32) if n else np.zeros(0, np.int32)
    doff = np.frombuffer(ffi.buffer(offp[0], (nd + 1) * 8), dtype=np.int64)
    return codes, _decode_values(ffi.buffer(bp[0], int(doff[-1]))[:] if doff[-1] else b"", doff)


def _decode_values(raw: bytes, doff: np.ndarray) -> List[str]:
    """The len(doff) - 1 texts raw[doff[i]:doff[i+1]] (UTF-8), each decoded once:
    when no text holds a NUL byte, a NUL is laid after each (numpy) and the
    whole decoded and split at them (str.split makes the strings without a
    Python call per text); else sliced from the decoded whole when it is
    ASCII (characters are bytes), else one by one."""
    nd = len(doff) - 1
    if nd >= 64 and b"\0" not in raw:
        buf = np.empty(len(raw) + nd, dtype=np.uint8)
        ends = doff[1:] - doff[0] + np.arange(nd)  # where each text's NUL goes
        data = np.ones(len(buf), dtype=bool)
        data[ends] = False
        buf[data] = np.frombuffer(raw, dtype=np.uint8)
        buf[ends] = 0
        return buf.tobytes().decode("utf-8").split("\0")[:-1]
    lo, hi = doff[:-1].tolist(), doff[1:].tolist()
    text = raw.decode("utf-8")
    if len(text) == len(raw):
        return [text[a:b] for a, b in zip(lo, hi)]
    return [raw[a:b].decode("utf-8") for a, b in zip(lo, hi)]


def _categorical(codes: np.ndarray, uniques: List[str]) -> pd.Categorical:
    """A Categorical from a view of a generalized column's codes and its
    values: the codes copied once into the narrowest integer type pandas
    keeps as they are (so nothing points into the library's table)."""
    nd = len(uniques)
    small = codes.astype(np.int8 if nd < 127 else np.int16 if nd < 32767 else np.int32)
    categories = pd.Index(uniques, dtype=object)
    # The library's values are distinct and its codes within -1 .. nd - 1, so
    # pandas' own checks (a hash of every category, a pass over the codes:
    # most of the time here) are skipped through its constructors for trusted
    # input where they exist (pandas 1.x and 2.x), else from_codes checks.
    try:
        dtype = pd.CategoricalDtype._from_fastpath(categories, False)
        cat = pd.Categorical._simple_new(small, dtype)
        if len(cat) == len(small) and cat.categories is categories:
            return cat
    except (AttributeError, TypeError, ValueError):
        pass
    return pd.Categorical.from_codes(small, categories=categories)


def _number_texts(values: np.ndarray, kind: int, mask: Optional[np.ndarray]) -> Tuple[np.ndarray, List[str]]:
    """A numeric column as codes into the sorted texts of its distinct
    values (the text the library writes for each), each formatted once."""
    uniq, codes = np.unique(values, return_inverse=True)
    fmt = str if kind == lib.ANONKIT_COLUMN_INT64 else _shortest
    codes = codes.astype(np.int64, copy=False)
    if mask is not None:
        codes[mask] = -1
    return codes, [fmt(v) for v in uniq.tolist()]


def _text_series(codes: np.ndarray, uniques: List[str], like: Optional[pd.Series]) -> pd.Series:
    """Texts given as codes into uniques (-1: missing, None) as a column of
    object dtype, or of like's dtype when that is a categorical (categories
    sorted, only the values present) or a string dtype."""
    if like is not None and isinstance(like.dtype, pd.CategoricalDtype):
        order = sorted(range(len(uniques)), key=uniques.__getitem__)
        rank = np.empty(len(uniques) + 1, dtype=np.int64)
        rank[order] = np.arange(len(uniques))
        rank[-1] = -1
        cat = pd.Categorical.from_codes(rank[codes], categories=[uniques[i] for i in order])
        if (codes < 0).any():
            cat = cat.remove_unused_categories()
        return pd.Series(cat)
    table = np.empty(len(uniques) + 1, dtype=object)
    table[:-1] = uniques
    table[-1] = None
    out = pd.Series(table[codes], dtype=object)
    if like is not None and isinstance(like.dtype, pd.StringDtype):
        return out.astype(like.dtype)
    return out


def _restore(values: Any, kind: int, mask: Optional[np.ndarray], like: Optional[pd.Series]) -> Any:
    """A column in the dtype of the input column `like` when its values allow
    it; a text column comes as (codes, uniques) from _text_column."""
    if kind == lib.ANONKIT_COLUMN_TEXT:
        return _text_series(values[0], values[1], like)
    n = len(values)
    has_missing = mask is not None and bool(mask.any())
    if like is not None:
        ld = like.dtype
        if isinstance(ld, (pd.CategoricalDtype, pd.StringDtype)) or (isinstance(ld, np.dtype) and ld.kind == "O"):
            # text that the library read as numbers: its exact text again
            codes, uniques = _number_texts(values, kind, mask if has_missing else None)
            return _text_series(codes, uniques, like)
        if isinstance(ld, np.dtype) and ld.kind == "f":
            out = values.astype(ld, copy=False)  # (values is a fresh copy already)
            if has_missing:
                out[mask] = np.nan
            return out
        if isinstance(ld, np.dtype) and ld.kind in "iu" and kind == lib.ANONKIT_COLUMN_INT64 and not has_missing:
            return values.astype(ld, copy=False)
        if isinstance(ld, np.dtype) and ld.kind == "b" and kind == lib.ANONKIT_COLUMN_INT64 and not has_missing:
            return values.astype(bool)
        if isinstance(ld, (pd.Float32Dtype, pd.Float64Dtype)):
            return pd.arrays.FloatingArray(values.astype(np.float64), mask if has_missing else np.zeros(n, bool)).astype(ld)
        if isinstance(ld, pd.api.extensions.ExtensionDtype) and kind == lib.ANONKIT_COLUMN_INT64 and ld.kind in "iu":
            return pd.arrays.IntegerArray(values, mask if has_missing else np.zeros(n, bool)).astype(ld)
    if kind == lib.ANONKIT_COLUMN_INT64:
        if has_missing:
            return pd.arrays.IntegerArray(values, mask.copy())
        return values
    out = values
    if has_missing:
        out[mask] = np.nan
    return out


def from_ctable(ptr: Any, like: Optional[TableLike] = None, as_dict: bool = False, categorical: bool = True,
                qi: Sequence[str] = ()) -> Union[pd.DataFrame, Dict[str, list]]:
    """The columns of an anonkit_table (borrowed) as a DataFrame, or a dict of
    lists when as_dict; dtypes follow the same-named columns of `like`, but a
    text column named in `qi` (a generalized QI) is a Categorical when
    `categorical` (and not as_dict; a categorical input column keeps its
    sorted categories either way). A column copied through in dictionary
    form (from a categorical or factorized input column) is read by its codes too."""
    qis = set(qi)
    ncols = lib.anonkit_table_columns(ptr)
    n = lib.anonkit_table_rows(ptr)
    like_cols = dict(_columns_of(like)) if like is not None else {}

    def convert(c: int) -> Tuple[str, Any]:
        name = ffi.string(lib.anonkit_table_column_name(ptr, c)).decode("utf-8")
        kind = lib.anonkit_table_column_kind(ptr, c)
        mp = lib.anonkit_table_column_missing(ptr, c)
        mask = np.frombuffer(ffi.buffer(mp, n), dtype=np.uint8).astype(bool) if mp != ffi.NULL and n else None
        if kind == lib.ANONKIT_COLUMN_DOUBLE:
            values: Any = np.frombuffer(ffi.buffer(lib.anonkit_table_column_double(ptr, c), n * 8),
                                        dtype=np.float64).copy() if n else np.zeros(0)
        elif kind == lib.ANONKIT_COLUMN_INT64:
            values = np.frombuffer(ffi.buffer(lib.anonkit_table_column_int64(ptr, c), n * 8),
                                   dtype=np.int64).copy() if n else np.zeros(0, np.int64)
        else:
            like_c = like_cols.get(name)
            if categorical and not as_dict and name in qis and \
                    not (like_c is not None and isinstance(like_c.dtype, pd.CategoricalDtype)):
                d = _dict_codes(ptr, c, n)
                if d is not None:  # a generalized column: the library's codes
                    return name, _categorical(*d)
                # a QI published as text rows (out-of-core algorithms, recode): the codes found here
                return name, _categorical(*_text_column(ptr, c, n, mask))
            values = _text_column(ptr, c, n, mask)
        return name, _restore(values, kind, mask, like_cols.get(name))

    # Columns are independent and the table is only read: on a large table
    # they are converted on as many threads as there are cores (numpy and
    # pandas' hashing release the GIL for most of the work).
    workers = min(ncols, os.cpu_count() or 1) if n >= _THREADED_ROWS else 1
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            cols: Dict[str, Any] = dict(pool.map(convert, range(ncols)))
    else:
        cols = dict(convert(c) for c in range(ncols))
    if as_dict:
        return {k: [None if (isinstance(x, float) and np.isnan(x)) or x is pd.NA else x
                    for x in (v.tolist() if hasattr(v, "tolist") else list(v))] for k, v in cols.items()}
    # copy=False: the columns are arrays made here and owned by nobody else, so the frame
    # keeps them as they are instead of copying them into one consolidated block
    return pd.DataFrame(cols, copy=False) if cols else pd.DataFrame(index=range(n))
