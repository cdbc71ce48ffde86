"""anonkit for Python: anonymize pandas DataFrames (or dicts of lists) with
libanonkit, in memory.

    import anonkit, pandas as pd
    df = pd.read_csv("adult.csv", sep=";")
    out, report = anonkit.anonymize(df, qi=["age", "sex"], hierarchy={"sex": "sex.csv"}, k=10, seed=1)
    anonkit.check(out, qi=["age", "sex"], k=10)              # True, or raises ViolationError
    anonkit.metrics(df, out, qi=["age", "sex"], hierarchy={"sex": "sex.csv"})   # dict

Keyword arguments are the command line's long options with underscores for
dashes (``l_variant="distinct"``, ``keep_order=True``; ``class_`` for the
keyword ``--class``); lists may be Python
lists (``qi=["a", "b"]``); ``hierarchy`` (or ``hierarchies``) maps a column to
an ARX hierarchy file, a DataFrame of its rows or a list of rows. Failures
raise an :class:`anonkit.Error` subclass carrying the library's message. The
GIL is released while the library runs. See docs/python.md.
"""
from __future__ import annotations

import csv as _csv
import json as _json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from ._convert import CTable, TableLike, _shortest, from_ctable, text_ctable, to_ctable
from ._lib import ffi, lib, library_path
from .errors import (CancelledError, Error, FileError, IneligibleError, InputError, InternalError, OutOfMemoryError,
                     UsageError, ViolationError, error_for)

__all__ = [
    "anonymize", "check", "metrics", "recode", "generate", "sequential", "risk", "hierarchy", "Report",
    "Error", "InputError", "UsageError", "IneligibleError", "FileError", "OutOfMemoryError", "ViolationError",
    "InternalError", "CancelledError", "library_version", "library_path", "options",
]

Table = Union[pd.DataFrame, Dict[str, list]]
HierarchySpec = Union[str, os.PathLike, pd.DataFrame, Sequence[Sequence[Any]]]


def library_version() -> str:
    """The version of the loaded libanonkit ("0.1.0")."""
    return ffi.string(lib.anonkit_version_string()).decode()


def options() -> List[str]:
    """Every option name the keyword arguments accept (the CLI's long options, underscores for dashes)."""
    return [ffi.string(lib.anonkit_option_name(i)).decode().replace("-", "_") for i in range(lib.ANONKIT_OPT__COUNT)]


@dataclass
class Report:
    """What a run reports: the counts, the human summary and the JSON report (parsed)."""

    rows_read: int = 0
    rows_published: int = 0
    rows_suppressed: int = 0
    classes: int = 0
    rows_outside: int = 0
    summary: Optional[str] = None
    json: Optional[Dict[str, Any]] = field(default=None, repr=False)


# Options the functions set themselves from their arguments.
_MANAGED = {"input", "output", "previous"}


class _Job:
    """One anonkit_job, its settings given as keyword arguments."""

    def __init__(self) -> None:
        self.ptr = lib.anonkit_job_create()
        if self.ptr == ffi.NULL:
            raise MemoryError("anonkit_job_create")

    def close(self) -> None:
        if self.ptr is not None:
            lib.anonkit_job_free(self.ptr)
            self.ptr = None
        table = getattr(self, "input_table", None)  # borrowed by the job until here
        if table is not None:
            table.close()
            self.input_table = None

    def __enter__(self) -> "_Job":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def set_progress(self, fn: Callable[[Dict[str, Any]], Any]) -> None:
        """Calls fn(progress) during the run, on the calling thread; a true return value (or an
        exception, raised again after the run) cancels it: the verb then raises CancelledError and
        leaves every output path as it was."""
        if not callable(fn):
            raise UsageError("progress must be a callable taking one dict", lib.ANONKIT_E_USAGE)

        def call(_ctx: Any, p: Any) -> int:
            info = {"phase": ffi.string(p.phase_name).decode(), "done": int(p.done), "total": int(p.total),
                    "fraction": float(p.fraction), "pass": int(getattr(p, "pass")), "passes": int(p.passes),
                    "elapsed": float(p.elapsed), "phase_elapsed": float(p.phase_elapsed)}
            try:
                return 1 if fn(info) else 0
            except BaseException as exc:  # raised again once the library has cleaned up
                self.progress_error = exc
                return 1

        # the callback object must live as long as the job may call it
        self.progress_cb = ffi.callback("int(void *, const anonkit_progress *)", call)
        self.progress_error: Optional[BaseException] = None
        lib.anonkit_job_set_progress(self.ptr, self.progress_cb, ffi.NULL)

    def fail(self, rc: int) -> Error:
        err = getattr(self, "progress_error", None)
        if err is not None:
            self.progress_error = None
            raise err
        return error_for(rc, ffi.string(lib.anonkit_errmsg(self.ptr)).decode("utf-8", "replace"))

    def check(self, rc: int) -> None:
        if rc != 0:
            raise self.fail(rc)

    def set(self, name: str, value: Any) -> None:
        """Sets the option `name` (CLI spelling or underscores) to a Python value."""
        opt_name = name.rstrip("_").replace("_", "-")  # class_ for --class (a Python keyword)
        code = lib.anonkit_option_find(opt_name.encode())
        if code == lib.ANONKIT_OPT__COUNT:
            raise UsageError(f"unknown option '{name}' (anonkit.options() lists them)", lib.ANONKIT_E_USAGE)
        flags = lib.anonkit_option_flags(code)
        if value is None or value is False:
            return
        if value is True:
            text = "true" if flags & lib.ANONKIT_OPTF_FLAG else "1"
        elif isinstance(value, Mapping):
            text = ",".join(f"{k}={_text(v)}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            text = ",".join(_text(v) for v in value)
        else:
            text = _text(value)
        self.check(lib.anonkit_job_set(self.ptr, code, text.encode("utf-8")))

    def configure(self, opts: Mapping[str, Any]) -> None:
        """Sets every option of opts (hierarchies and tables after the others, so the delimiter comes first)."""
        hier = None
        for name, value in opts.items():
            key = name.replace("-", "_")
            if key in ("hierarchy", "hierarchies"):
                hier = value
                continue
            if key == "progress":
                if value is not None and value is not False:
                    self.set_progress(value)
                continue
            if key in _MANAGED:
                raise UsageError(f"'{name}' is given as an argument of the function, not as an option",
                                 lib.ANONKIT_E_USAGE)
            self.set(key, value)
        if hier is not None:
            self.set_hierarchies(hier)

    def set_hierarchies(self, hier: Mapping[str, HierarchySpec]) -> None:
        if not isinstance(hier, Mapping):
            raise UsageError("hierarchy: a dict mapping each column to a file, a DataFrame or a list of rows",
                             lib.ANONKIT_E_USAGE)
        for column, spec in hier.items():
            if isinstance(spec, (str, os.PathLike)):
                self.check(lib.anonkit_job_set(self.ptr, lib.ANONKIT_OPT_HIERARCHY,
                                               f"{column}={os.fspath(spec)}".encode("utf-8")))
                continue
            frame = spec if isinstance(spec, pd.DataFrame) else pd.DataFrame([list(r) for r in spec])
            # every cell as its text (a hierarchy is small: cell by cell beats pandas' machinery), missing as None
            cols = [[None if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                     else v if isinstance(v, str) else str(v) for v in frame.iloc[:, i].tolist()]
                    for i in range(frame.shape[1])]
            t = text_ctable(cols)  # read by the job into its own copy during the call
            self.check(lib.anonkit_job_set_hierarchy_table(self.ptr, str(column).encode("utf-8"), t.ptr))
            t.close()

    def set_input(self, data: Union[TableLike, str, os.PathLike]) -> None:
        if isinstance(data, (str, os.PathLike)):
            self.check(lib.anonkit_job_set(self.ptr, lib.ANONKIT_OPT_INPUT, os.fspath(data).encode("utf-8")))
            return
        t = to_ctable(data)
        self.input_table = t  # the job borrows it (and it the numpy buffers) until the job is freed
        self.check(lib.anonkit_job_set_input_table(self.ptr, t.ptr))


def _text(v: Any) -> str:
    if isinstance(v, float):
        return _shortest(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _report(r: Any) -> Report:
    summary = lib.anonkit_result_summary(r)
    js = lib.anonkit_result_json(r)
    return Report(
        rows_read=lib.anonkit_result_rows_read(r),
        rows_published=lib.anonkit_result_rows_published(r),
        rows_suppressed=lib.anonkit_result_rows_suppressed(r),
        classes=lib.anonkit_result_classes(r),
        rows_outside=lib.anonkit_result_rows_outside(r),
        summary=ffi.string(summary).decode("utf-8") if summary != ffi.NULL else None,
        json=_json.loads(ffi.string(js).decode("utf-8")) if js != ffi.NULL else None,
    )


def _names(value: Any) -> List[str]:
    """Column names given as a list or as the command line's comma-separated text."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.split(",") if v]
    return [str(v) for v in value]


def _qi_of(options: Mapping[str, Any]) -> List[str]:
    """The QIs named by a call's options: qi=, else the "qi" of its job= file."""
    if options.get("qi") is not None:
        return _names(options["qi"])
    job = options.get("job")
    if job is not None:
        try:
            with open(os.fspath(job), encoding="utf-8") as f:
                return _names(_json.load(f).get("qi"))
        except (OSError, ValueError, AttributeError):
            return []
    return []


def _rules_qi(rules: Any) -> List[str]:
    """The QIs of a rules file (its "column,NAME,qi..." lines), [] when it cannot be read."""
    try:
        with open(os.fspath(rules), encoding="utf-8", newline="") as f:
            return [row[1] for row in _csv.reader(f) if len(row) >= 3 and row[0] == "column" and row[2].startswith("qi")]
    except (OSError, ValueError, _csv.Error):
        return []


def _run_publishing(verb: Callable[..., int], job: _Job, data: Any, output: Optional[str],
                    categorical: bool = True, qi: Sequence[str] = ()) -> Tuple[Optional[Table], Report]:
    """Runs a verb that publishes a table: into a table unless output names a
    file (generalized columns, and text QI columns, as Categorical when categorical)."""
    if output is not None:
        job.check(lib.anonkit_job_set(job.ptr, lib.ANONKIT_OPT_OUTPUT, os.fspath(output).encode("utf-8")))
    else:
        job.check(lib.anonkit_job_set_output_table(job.ptr))
    rp = ffi.new("anonkit_result **")
    job.check(verb(job.ptr, rp))  # the GIL is released during the call
    r = rp[0]
    try:
        report = _report(r)
        t = lib.anonkit_result_table(r)
        like = data if isinstance(data, (pd.DataFrame, Mapping)) else None
        out = None
        if t != ffi.NULL:
            out = from_ctable(t, like=like, as_dict=isinstance(data, Mapping) and not isinstance(data, pd.DataFrame),
                              categorical=categorical, qi=qi)
    finally:
        lib.anonkit_result_free(r)
    return out, report


def anonymize(data: Union[TableLike, str, os.PathLike], *, output: Optional[str] = None, categorical: bool = True,
              **options: Any) -> Tuple[Optional[Table], Report]:
    """Anonymizes a table: returns (the published table, the report).

    ``data`` is a DataFrame, a dict of lists, or the name of a source the
    command line reads (a CSV path, ``sqlite:...``). The published table has
    the input's type (a dict of lists for a dict) and, column by column, the
    input's dtype where its values allow it. A generalized QI column
    ("30-39", "*") is a pandas Categorical: its categories are the distinct
    published values, in the library's order (unordered; a categorical input
    column keeps sorted categories); with ``categorical=False`` it is text in
    the input column's dtype (object, or string) instead. A QI column whose
    every published value is a number (classes of one value) is numeric either way.
    With ``output="file.csv"`` it is written there instead and None returned.
    Options: those of ``anonkit anonymize`` (``qi``, ``k``, ``l``, ``sensitive``,
    ``algorithm``, ``seed``, ``hierarchy``, ``memory``, ...)."""
    with _Job() as job:
        job.configure(options)
        job.set_input(data)
        return _run_publishing(lib.anonkit_anonymize, job, data, output, categorical, _qi_of(options))


def recode(data: Union[TableLike, str, os.PathLike], *, rules: str, output: Optional[str] = None,
           categorical: bool = True, **options: Any) -> Tuple[Optional[Table], Report]:
    """Recodes new rows with the rules an earlier anonymize wrote (``rules=`` its
    ``rules`` file): returns (the recoded table, the report with rows_outside).
    The rules' QI columns come back as in :func:`anonymize` (``categorical``)."""
    with _Job() as job:
        job.configure(dict(options, rules=rules))
        job.set_input(data)
        return _run_publishing(lib.anonkit_recode, job, data, output, categorical, _rules_qi(rules))


def sequential(data: Union[TableLike, str, os.PathLike], *, previous: Iterable[Union[TableLike, str]],
               output: Optional[str] = None, **options: Any) -> Tuple[Optional[Table], Report]:
    """Sequential release ([Wang06]): generalizes ``data`` so that its join with
    the earlier releases ``previous`` (tables or files) satisfies (X,Y)-privacy
    (options ``x``, ``y``, ``anonymity``, ``linkability``, ...). Its generalized
    columns come back as text (object), as the published file has them."""
    with _Job() as job:
        job.configure(options)
        for p in previous:
            if isinstance(p, (str, os.PathLike)):
                job.check(lib.anonkit_job_set(job.ptr, lib.ANONKIT_OPT_PREVIOUS, os.fspath(p).encode("utf-8")))
            else:
                t = to_ctable(p)
                job.check(lib.anonkit_job_add_previous_table(job.ptr, t.ptr))
                t.close()
        job.set_input(data)
        return _run_publishing(lib.anonkit_sequential, job, data, output, categorical=False)


def check(published: Union[TableLike, str, os.PathLike], **options: Any) -> Union[bool, Report]:
    """Proves the privacy model on a published table with the independent
    verifier: True, or raises :class:`ViolationError` naming the first
    violating class. With ``achieved=True`` returns the Report whose json holds
    the parameters the table achieves."""
    with _Job() as job:
        job.configure(options)
        rp = ffi.new("anonkit_result **")
        if isinstance(published, (str, os.PathLike)):
            job.check(lib.anonkit_check(job.ptr, os.fspath(published).encode("utf-8"), rp))
        else:
            t = to_ctable(published)
            job.check(lib.anonkit_check_table(job.ptr, t.ptr, rp))
            t.close()
        try:
            report = _report(rp[0])
        finally:
            lib.anonkit_result_free(rp[0])
        return report if options.get("achieved") else True


def metrics(original: Union[TableLike, str, os.PathLike], published: Union[TableLike, str, os.PathLike],
            **options: Any) -> Dict[str, Any]:
    """Information-loss metrics of a published table against its original (the
    JSON of ``anonkit metrics`` as a dict: dm, cavg, gcp, ncp, ...)."""
    with _Job() as job:
        job.configure(options)
        rp = ffi.new("anonkit_result **")
        paths = [isinstance(x, (str, os.PathLike)) for x in (original, published)]
        if all(paths):
            job.check(lib.anonkit_metrics(job.ptr, os.fspath(original).encode(), os.fspath(published).encode(), rp))
        else:
            o = to_ctable(pd.read_csv(original, sep=options.get("delimiter", ",")) if paths[0] else original)
            p = to_ctable(pd.read_csv(published, sep=options.get("delimiter", ",")) if paths[1] else published)
            job.check(lib.anonkit_metrics_table(job.ptr, o.ptr, p.ptr, rp))
            o.close()
            p.close()
        try:
            js = lib.anonkit_result_json(rp[0])
            return _json.loads(ffi.string(js).decode("utf-8")) if js != ffi.NULL else {}
        finally:
            lib.anonkit_result_free(rp[0])


def risk(data: Union[TableLike, str, os.PathLike], **options: Any) -> Dict[str, Any]:
    """Re-identification risk of a table (the JSON of ``anonkit risk`` as a
    dict: prosecutor, journalist and marketer risk, sample uniques, ...)."""
    with _Job() as job:
        job.configure(options)
        job.set_input(data)
        rp = ffi.new("anonkit_result **")
        job.check(lib.anonkit_risk(job.ptr, rp))
        try:
            js = lib.anonkit_result_json(rp[0])
            return _json.loads(ffi.string(js).decode("utf-8")) if js != ffi.NULL else {}
        finally:
            lib.anonkit_result_free(rp[0])


def hierarchy(data: Union[pd.Series, TableLike, str, os.PathLike], *, column: Optional[str] = None,
              **options: Any) -> pd.DataFrame:
    """Builds a generalization hierarchy for one column with one builder
    (``interval=5, fanout=[2, 2]``, ``quantiles``, ``mask``, ``date``, ``order``,
    ``flat=True``; docs/hierarchies.md) and returns its rows as a DataFrame of
    text (column 0 the values, the last the most general level), ready to be
    given as ``hierarchy={column: frame}``."""
    if isinstance(data, pd.Series):
        column = column or (str(data.name) if data.name is not None else "value")
        data = pd.DataFrame({column: data})
    if column is None:
        raise UsageError("hierarchy: give the column (column=...)", lib.ANONKIT_E_USAGE)
    tmp = tempfile.mkdtemp(prefix="anonkit-")
    try:
        out = os.path.join(tmp, "hierarchy.csv")
        with _Job() as job:
            job.configure(dict(options, column=column))
            job.set_input(data)
            job.check(lib.anonkit_job_set(job.ptr, lib.ANONKIT_OPT_OUTPUT, out.encode()))
            rp = ffi.new("anonkit_result **")
            job.check(lib.anonkit_hierarchy(job.ptr, rp))
            lib.anonkit_result_free(rp[0])
        if not os.path.exists(out):  # preview
            return pd.DataFrame()
        return pd.read_csv(out, sep=";", header=None, dtype=str, keep_default_na=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def generate(rows: int, *, seed: Optional[int] = None, salary: Optional[str] = None) -> Tuple[pd.DataFrame, int]:
    """Synthetic records of [LeFevre07] Figure 7 (salary, commission, age, ...):
    returns (the DataFrame, the seed used). The same seed gives the same rows."""
    tmp = tempfile.mkdtemp(prefix="anonkit-")
    try:
        out = os.path.join(tmp, "generated.csv")
        seedp = ffi.new("uint64_t *", seed) if seed is not None else ffi.NULL
        used = ffi.new("uint64_t *")
        err = ffi.new("char[]", 1024)
        rc = lib.anonkit_generate(out.encode(), rows, seedp, b"csv", salary.encode() if salary else ffi.NULL, used,
                                  err, 1024)
        if rc != 0:
            raise error_for(rc, ffi.string(err).decode("utf-8", "replace"))
        return pd.read_csv(out), int(used[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
