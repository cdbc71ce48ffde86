"""Tests of the Python package (docs/python.md), run by CTest (python_package):

- the DataFrame path publishes the same rows as the command line on the same
  CSV with the same seed (multisets) for every algorithm, on random tables;
- dtypes round-trip: int, float, object, string, category, bool, nullable
  Int64 and Float64 with missing values;
- errors raise the Error subclass of the status with the command line's message;
- check, metrics, recode, sequential, risk, hierarchy, generate work on frames;
- the GIL is released during a run;
- the cffi declarations cover every function of include/anonkit/anonkit.h.
"""
from __future__ import annotations

import collections
import os
import random
import re
import subprocess
import threading
import time

import numpy as np
import pandas as pd
import pytest

import anonkit
from anonkit._lib import ffi, lib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLI = os.environ.get("ANONKIT_CLI") or os.path.join(os.path.dirname(anonkit.library_path), "anonkit")

ALGORITHMS = [
    ("mondrian", {}),
    ("rothko-t", {"memory": "4M"}),
    ("rothko-s", {"memory": "4M"}),
    ("incognito", {}),
    ("local", {}),
    ("hilbert", {}),
    ("hilbert-fast", {}),
    ("idistance", {}),
    ("idistance-fast", {}),
]
HIERARCHIES = {
    "sex": "female;*\nmale;*\n",
    "zip": "02139;021**;*\n02140;021**;*\n10001;100**;*\n94110;941**;*\n",
    "job": "a;ab;*\nb;ab;*\nc;c;*\n",
}


def random_frame(seed: int, rows: int) -> pd.DataFrame:
    rng = random.Random(seed)
    return pd.DataFrame({
        "id": range(rows),
        "age": [rng.randint(18, 80) for _ in range(rows)],
        "income": [rng.randint(0, 10 ** 6) / 7 for _ in range(rows)],
        "zip": [rng.choice(["02139", "02140", "10001", "94110"]) for _ in range(rows)],
        "sex": [rng.choice(["female", "male"]) for _ in range(rows)],
        "job": [rng.choice(["a", "b", "c"]) for _ in range(rows)],
        "s": [rng.choice(["x", "y", "z", "w"]) for _ in range(rows)],
    })


def write_csv(df: pd.DataFrame, path: str) -> None:
    """The CSV the command line reads: doubles as the library writes them."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = [anonkit._shortest(v) for v in out[c]]
    out.to_csv(path, index=False)


def rows_of(df: pd.DataFrame) -> collections.Counter:
    """The rows as text, numbers written as the library writes them."""
    text = pd.DataFrame({c: [("" if pd.isna(v) else anonkit._shortest(v) if isinstance(v, float) else str(v))
                             for v in df[c].tolist()] for c in df.columns})
    return collections.Counter(map(tuple, text.values.tolist()))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True)


@pytest.mark.parametrize("algorithm,extra", ALGORITHMS)
@pytest.mark.parametrize("seed", [1, 2])
def test_same_rows_as_cli(tmp_path, algorithm, extra, seed):
    df = random_frame(seed, 400)
    for name, text in HIERARCHIES.items():
        (tmp_path / f"h{name}.csv").write_text(text)
    hier = {name: str(tmp_path / f"h{name}.csv") for name in HIERARCHIES}
    # the full-domain and local-recoding algorithms need a hierarchy for every QI
    qi = ["zip", "sex", "job"] if algorithm in ("incognito", "local") else ["age", "zip", "sex", "job"]
    write_csv(df, str(tmp_path / "in.csv"))
    args = ["anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--qi", ",".join(qi),
            "--k", "5", "--seed", "3", "--identifier", "id", "--algorithm", algorithm]
    for name, path in hier.items():
        args += ["--hierarchy", f"{name}={path}"]
    for name, value in extra.items():
        args += ["--" + name, value]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    expected = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)

    # hierarchies given as frames, the way a notebook has them
    frames = {name: pd.read_csv(path, sep=";", header=None, dtype=str) for name, path in hier.items()}
    out, report = anonkit.anonymize(df, qi=qi, hierarchy=frames, k=5, seed=3, identifier="id", algorithm=algorithm,
                                    **extra)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(expected.columns)
    assert report.rows_published == len(expected)
    assert rows_of(out) == rows_of(expected)


def test_dtypes_round_trip():
    n = 50
    mask = np.arange(n) % 7 == 3
    df = pd.DataFrame({
        "q": np.arange(n) % 5,                               # the QI
        "i64": np.arange(n, dtype=np.int64) * 3 - 40,
        "i32": np.arange(n, dtype=np.int32),
        "f": np.linspace(-1, 1, n) / 3,
        "fnan": np.where(mask, np.nan, np.arange(n) / 10),
        "obj": [f"v{i % 4}" if i % 9 else None for i in range(n)],
        "zip": [f"{i:05d}" for i in range(n)],               # text that looks like numbers
        "str": pd.array([f"s{i}, \"q\"" for i in range(n)], dtype="string"),
        "cat": pd.Categorical([["lo", "mid", "hi"][i % 3] for i in range(n)]),
        "b": np.arange(n) % 2 == 0,
        "nint": pd.array([None if m else i for i, m in zip(range(n), mask)], dtype="Int64"),
        "nfloat": pd.array([None if m else i / 4 for i, m in zip(range(n), mask)], dtype="Float64"),
        "uni": ["ünï-" + "€" * (i % 3) for i in range(n)],
    })
    out, report = anonkit.anonymize(df, qi=["q"], k=1, keep_order=True)
    assert report.rows_published == n
    for c in df.columns:
        assert out[c].dtype == df[c].dtype, c
    pd.testing.assert_frame_equal(out, df, check_exact=True)


def _cell_by_cell(values):
    """The texts a column should carry, built the slow, obvious way."""
    return [None if (v is None or (isinstance(v, float) and np.isnan(v))) else (v if isinstance(v, str) else str(v))
            for v in values]


def test_text_conversion_paths():
    """Text columns to the library and back through every path of the
    converter (python/anonkit/_convert.py), checked against the texts built
    cell by cell: short and long (over 256 bytes: the per-cell fallback)
    texts, non-ASCII, NUL bytes inside, delimiters, quotes and line ends,
    empty texts, missing values, mixed-type object columns (1, 1.0 and True
    are one key to a hash but three texts), categoricals with missing values
    and unused categories, a forced hash collision, an empty table."""
    from anonkit import _convert
    rng = random.Random(7)
    pool = ["", "a", "a\x00", "a\x00b", "\x00", "x,y", 'say "hi"', "two\nlines", "cr\r\n", " pad ", "ünï€",
            "12345678", "123456789", "1234567890123456", "12345678901234567", "l" * 300, "l" * 299 + "m", None]
    cols = {
        "short": [rng.choice(pool[:-3] + [None]) for _ in range(500)],
        "long": [rng.choice(pool) for _ in range(500)],
        "mixed": [rng.choice([1, 1.0, True, "1", None, 2.5, "x"]) for _ in range(500)],
        "unique": [f"u{i}-{'é' * (i % 3)}" for i in range(500)],
    }
    for name, values in cols.items():
        t = _convert.CTable()
        _convert.add_series(t, name, pd.Series(values, dtype=object))
        codes, uniques = _convert._text_column(t.ptr, 0, len(values), _mask_of(t.ptr, 0, len(values)))
        back = [None if c < 0 else uniques[c] for c in codes.tolist()]
        want = _cell_by_cell(values)
        want = [None if w == "" else w for w in want]  # the library's text columns: "" and missing are one
        got = [None if g == "" else g for g in back]
        assert got == want, name
        t.close()
    cat = pd.Series(pd.Categorical(["b", None, "a", "b"], categories=["c", "b", "a"]))
    t = _convert.to_ctable(pd.DataFrame({"cat": cat}))
    out = _convert.from_ctable(t.ptr, like=pd.DataFrame({"cat": cat}))
    assert out["cat"].tolist()[0] == "b" and pd.isna(out["cat"].tolist()[1]) and out["cat"].tolist()[2:] == ["a", "b"]
    assert list(out["cat"].cat.categories) == ["a", "b"]
    # a collision of the 64-bit row hash: the exact word-by-word path must still tell texts apart
    off = np.array([0, 1, 2, 3, 4], dtype=np.int64)
    data = np.frombuffer(b"abab", dtype=np.uint8)
    real = _convert.pd.factorize
    calls = []

    def colliding(values, *a, **kw):
        calls.append(1)
        if len(calls) == 1:  # the hash: every row the same
            return np.zeros(len(values), dtype=np.int64), np.zeros(1, dtype=np.uint64)
        return real(values, *a, **kw)
    _convert.pd.factorize = colliding
    try:
        codes, first = _convert._factorize_texts(off, data, 4)
    finally:
        _convert.pd.factorize = real
    assert codes.tolist() == [0, 1, 0, 1] and first.tolist() == [0, 1]
    empty = pd.DataFrame({"s": pd.Series([], dtype=object), "c": pd.Series(pd.Categorical([])), "n": np.zeros(0)})
    t = _convert.to_ctable(empty)
    out = _convert.from_ctable(t.ptr, like=empty)
    assert list(out.columns) == ["s", "c", "n"] and len(out) == 0


def test_suppressed_rows(tmp_path):
    """Rows suppressed by incognito's suppression limit are published with "*"
    in every QI: the DataFrame path publishes the command line's rows, and
    the categories are exactly the values published ("*" among them only
    when a row has it)."""
    rng = np.random.default_rng(3)
    n = 500
    df = pd.DataFrame({"zip": ["a"] * 250 + ["b"] * 247 + ["c"] * 3, "sex": rng.choice(["female", "male"], n),
                       "x": rng.integers(0, 9, n)})
    (tmp_path / "sex.csv").write_text("female;*\nmale;*\n")
    (tmp_path / "zip.csv").write_text("a;*\nb;*\nc;*\n")
    df.to_csv(tmp_path / "in.csv", index=False)
    hier = {"sex": str(tmp_path / "sex.csv"), "zip": str(tmp_path / "zip.csv")}
    for limit in ("0.05", "0"):
        r = cli("anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "o.csv"), "--qi", "zip,sex", "--k", "20",
                "--seed", "2", "--hierarchy", f"sex={hier['sex']}", "--hierarchy", f"zip={hier['zip']}",
                "--algorithm", "incognito", "--suppression", limit)
        assert r.returncode == 0, r.stderr
        expected = pd.read_csv(tmp_path / "o.csv", dtype=str, keep_default_na=False)
        out, rep = anonkit.anonymize(df, qi=["zip", "sex"], k=20, seed=2, hierarchy=hier, algorithm="incognito",
                                     suppression=limit)
        assert rows_of(out) == rows_of(expected)
        stars = int((expected["zip"] == "*").sum())
        assert rep.rows_suppressed == (3 if limit != "0" else 0) and (stars == 3) == (limit != "0")
        assert isinstance(out["zip"].dtype, pd.CategoricalDtype)
        assert set(out["zip"].cat.categories) == set(expected["zip"])  # "*" only when a row has it


def test_decode_values():
    """The distinct values of a column in dictionary form decoded every way
    (_convert._decode_values: split at laid NULs, sliced, one by one) give
    the texts decoded one by one: few and many, ASCII and not, empty texts,
    NUL bytes inside."""
    from anonkit import _convert
    rng = random.Random(11)
    pools = [["a", "bc", "", "30-39", "*"], ["ünï", "€", "x", ""], ["a\x00b", "c", ""]]
    for pool in pools:
        for count in (0, 1, 63, 64, 500):
            texts = [rng.choice(pool) + str(i) * rng.randint(0, 1) for i in range(count)]
            enc = [t.encode("utf-8") for t in texts]
            doff = np.zeros(count + 1, dtype=np.int64)
            np.cumsum([len(e) for e in enc], out=doff[1:])
            assert _convert._decode_values(b"".join(enc), doff) == texts, (pool, count)


def _mask_of(ptr, c, n):
    mp = lib.anonkit_table_column_missing(ptr, c)
    return np.frombuffer(ffi.buffer(mp, n), dtype=np.uint8).astype(bool) if mp != ffi.NULL and n else None


@pytest.mark.parametrize("threaded", [False, True])
def test_large_frame_same_as_cli(tmp_path, monkeypatch, threaded):
    """A frame large enough for the vectorized conversions to matter (20,000
    rows; generalized QIs come back as text, a categorical and a string
    column with missing values and delimiters pass through) publishes the
    command line's rows on the same CSV, its columns converted back on one
    thread or on several."""
    from anonkit import _convert
    monkeypatch.setattr(_convert, "_THREADED_ROWS", 1000 if threaded else 10 ** 12)
    rng = np.random.default_rng(3)
    n = 20000
    words = np.array(["alpha", "b,eta", 'ga"mma', "del\nta", "ünï"], dtype=object)
    df = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "income": rng.integers(0, 200000, n),
        "w": words[rng.integers(0, 5, n)],
        "cat": pd.Categorical(words[rng.integers(0, 5, n)]),
        "f": (rng.integers(-100000, 100000, n) * 2 + 1) / 8,  # never integral: pandas writes it as we do
    })
    df.loc[rng.integers(0, n, 50), "w"] = None
    path = tmp_path / "big.csv"
    df.to_csv(path, index=False)
    out, _ = anonkit.anonymize(df, qi=["age", "income"], k=10, seed=4)
    subprocess.run([CLI, "anonymize", str(path), "-o", str(tmp_path / "o.csv"), "--qi", "age,income", "--k", "10",
                    "--seed", "4"], check=True, capture_output=True)
    cli = pd.read_csv(tmp_path / "o.csv", dtype=str, keep_default_na=False)
    mine = out.astype(object).where(out.notna(), "")
    mine["f"] = [anonkit._shortest(v) for v in out["f"]]
    key = lambda frame: collections.Counter(map(tuple, frame[list(df.columns)].astype(str).values.tolist()))
    assert key(mine) == key(cli)


def test_generalized_categorical(tmp_path):
    """Generalized columns come back as pandas Categoricals built from the
    library's codes (categories: the distinct published values), holding the
    same values as with categorical=False, which gives text in the input's
    dtype; a categorical input column keeps its sorted categories; copied
    columns keep their dtype either way."""
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "zip": np.array([f"{z:05d}" for z in rng.integers(0, 99999, n)], dtype=object),
        "tag": pd.Categorical(rng.choice(["b", "a", "c"], n)),
        "note": np.array(["x", "y", None], dtype=object)[rng.integers(0, 3, n)],
    })
    hier = {"tag": [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]]}
    kw = dict(qi=["age", "zip", "tag"], hierarchy=hier, k=10, seed=2)
    out, _ = anonkit.anonymize(df, **kw)
    text, _ = anonkit.anonymize(df, categorical=False, **kw)
    assert isinstance(out["age"].dtype, pd.CategoricalDtype) and isinstance(out["zip"].dtype, pd.CategoricalDtype)
    assert text["age"].dtype == object and text["zip"].dtype == object
    for c in ("age", "zip"):
        assert out[c].astype(object).where(out[c].notna(), None).tolist() == text[c].tolist(), c
        cats = out[c].cat.categories
        assert cats.is_unique and set(cats) == set(text[c].dropna()), c  # exactly the values present
    assert isinstance(out["tag"].dtype, pd.CategoricalDtype)
    assert list(out["tag"].cat.categories) == sorted(out["tag"].cat.categories)
    assert out["tag"].tolist() == text["tag"].tolist()
    assert out["note"].dtype == object and out["note"].tolist() == text["note"].tolist()
    assert sorted(x for x in out["note"].tolist() if x is not None) == sorted(x for x in df["note"] if x is not None)
    # as a dict of lists: plain lists either way
    d, _ = anonkit.anonymize({c: df[c].tolist() for c in ("age", "zip")}, qi=["age", "zip"], k=10, seed=2)
    assert all(isinstance(v, str) for v in d["age"])
    # QIs published as text rows (an out-of-core algorithm; recode with the rules): Categoricals too,
    # named by qi= as a list or as text, and by the rules file
    small = df[["age", "zip", "note"]]
    for qi in (["age", "zip"], "age,zip"):
        ooc, _ = anonkit.anonymize(small, qi=qi, k=10, seed=2, algorithm="rothko-t", memory="4M")
        ooc_text, _ = anonkit.anonymize(small, qi=qi, k=10, seed=2, algorithm="rothko-t", memory="4M",
                                        categorical=False)
        assert isinstance(ooc["age"].dtype, pd.CategoricalDtype) and ooc_text["age"].dtype == object
        assert ooc["age"].astype(object).where(ooc["age"].notna(), None).tolist() == ooc_text["age"].tolist()
        assert ooc["note"].dtype == object
    rules = str(tmp_path / "rules")
    anonkit.anonymize(small, qi=["age", "zip"], k=10, seed=2, rules=rules)
    rec, _ = anonkit.recode(small.head(100), rules=rules)
    rec_text, _ = anonkit.recode(small.head(100), rules=rules, categorical=False)
    assert isinstance(rec["age"].dtype, pd.CategoricalDtype) and rec_text["age"].dtype == object
    assert rec["age"].astype(object).where(rec["age"].notna(), None).tolist() == rec_text["age"].tolist()
    assert rec["note"].dtype == object


def test_dict_of_lists():
    data = {"q": [1, 2, 3, 4, 5, 6], "s": ["a", "b", "a", "b", None, "c"], "x": [0.5, 1.5, None, 2.0, 3.0, 4.0]}
    out, _ = anonkit.anonymize(data, qi=["q"], k=1, keep_order=True)
    assert isinstance(out, dict)
    assert out == {"q": [1, 2, 3, 4, 5, 6], "s": ["a", "b", "a", "b", None, "c"],
                   "x": [0.5, 1.5, None, 2.0, 3.0, 4.0]}


def message_tail(text: str) -> str:
    """A message without its first 'NAME:LINE: ' (the file or 'the input table')."""
    return re.sub(r"^.*?:\d+: ", "", text.strip())


def test_errors_carry_cli_message(tmp_path):
    df = pd.DataFrame({"a": [1, 3], "b": [2, 4], "s": ["x", "y"]})
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "h.csv").write_text("x;*\n")

    with pytest.raises(anonkit.UsageError) as e:
        anonkit.anonymize(df, qi=["a", "nope"], k=2)
    r = cli("anonymize", str(tmp_path / "t.csv"), "--qi", "a,nope", "--k", "2", "-o", str(tmp_path / "o.csv"))
    assert r.returncode == 1
    assert message_tail(e.value.message) == message_tail(r.stderr.removeprefix("anonkit: "))
    assert "the input table" in e.value.message and "/proc/" not in e.value.message

    with pytest.raises(anonkit.Error) as e:
        anonkit.anonymize(df, qi=["a", "b"], k=5)
    r = cli("anonymize", str(tmp_path / "t.csv"), "--qi", "a,b", "--k", "5", "-o", str(tmp_path / "o.csv"))
    assert e.value.message == r.stderr.strip().removeprefix("anonkit: ")
    assert e.value.status == lib.ANONKIT_E_INELIGIBLE and isinstance(e.value, anonkit.IneligibleError)

    with pytest.raises(anonkit.InputError) as e:
        anonkit.anonymize(df, qi=["a", "s"], hierarchy={"s": str(tmp_path / "h.csv")}, k=1)
    r = cli("anonymize", str(tmp_path / "t.csv"), "--qi", "a,s", "--hierarchy", f"s={tmp_path / 'h.csv'}", "--k",
            "1", "-o", str(tmp_path / "o.csv"))
    cli_message = r.stderr.removeprefix("anonkit: ").replace(str(tmp_path / "t.csv"), "the input table")
    assert message_tail(e.value.message) == message_tail(cli_message)
    assert "not a leaf of hierarchy" in e.value.message

    with pytest.raises(anonkit.UsageError):
        anonkit.anonymize(df, qi=["a"], k=1, no_such_option=3)


def test_check_metrics_and_violation():
    df = random_frame(5, 300)
    hier = {name: pd.DataFrame([r.split(";") for r in text.strip().split("\n")])
            for name, text in HIERARCHIES.items() if name != "job"}
    opts = dict(qi=["age", "zip", "sex"], hierarchy=hier, k=8, l=2, sensitive="s", seed=1)
    out, report = anonkit.anonymize(df, **opts)
    assert report.classes > 0 and report.rows_published == 300
    assert anonkit.check(out, qi=["age", "zip", "sex"], k=8, l=2, sensitive="s") is True
    achieved = anonkit.check(out, qi=["age", "zip", "sex"], k=8, sensitive="s", achieved=True)
    assert achieved.rows_read == 300
    m = anonkit.metrics(df, out, qi=["age", "zip", "sex"], hierarchy=hier)
    assert 0 <= m["gcp"] <= 1
    with pytest.raises(anonkit.ViolationError) as e:
        anonkit.check(df, qi=["age", "zip", "sex"], k=8)
    assert "class" in e.value.message


def test_other_verbs(tmp_path):
    df = random_frame(7, 300)
    rules = str(tmp_path / "rules.json")
    out, _ = anonkit.anonymize(df, qi=["age"], k=10, seed=1, rules=rules)
    new = random_frame(8, 50)
    recoded, rep = anonkit.recode(new, rules=rules)
    assert len(recoded) == 50 and rep.rows_read == 50
    assert set(recoded["age"]) <= set(out["age"]) | set(recoded["age"])

    risk = anonkit.risk(df, qi=["age", "zip"])
    assert "prosecutor" in str(risk)

    h = anonkit.hierarchy(df["age"], interval=5, fanout=[2, 2])
    assert h.shape[0] == df["age"].nunique() and (h.iloc[:, -1] == "*").all()
    out2, _ = anonkit.anonymize(df, qi=["age"], hierarchy={"age": h}, k=10, seed=1)
    assert len(out2) == 300

    g, seed = anonkit.generate(100, seed=5)
    g2, _ = anonkit.generate(100, seed=5)
    assert seed == 5 and len(g) == 100 and g.equals(g2)

    # [Wang06] Table 1 (tests/data/sequential), the current release a frame, the earlier one too
    d = os.path.join(ROOT, "tests", "data", "sequential")
    t1 = pd.read_csv(os.path.join(d, "t1.csv"))
    t2 = pd.read_csv(os.path.join(d, "t2.csv"))
    seq, rep = anonkit.sequential(t1, previous=[t2], x=["Name"], y=["Disease"], anonymity=2, class_="Class",
                                  hierarchy={"Job": os.path.join(d, "job.csv"), "Name": os.path.join(d, "name.csv")},
                                  keep_order=True)
    r = cli("sequential", os.path.join(d, "t1.csv"), "--previous", os.path.join(d, "t2.csv"), "-o",
            str(tmp_path / "seq.csv"), "--x", "Name", "--y", "Disease", "--anonymity", "2", "--class", "Class",
            "--hierarchy", f"Job={d}/job.csv", "--hierarchy", f"Name={d}/name.csv", "--keep-order")
    assert r.returncode == 0, r.stderr
    assert rows_of(seq) == rows_of(pd.read_csv(tmp_path / "seq.csv", dtype=str, keep_default_na=False))
    assert rep.rows_read == len(t1)


def test_gil_released():
    """A counting thread advances while the library runs in another one."""
    df = random_frame(9, 200_000)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=count)
    t.start()
    failed = []

    def run():
        try:
            anonkit.anonymize(df, qi=["age", "zip"], k=10, seed=1, threads=1)
        except anonkit.Error as e:  # pragma: no cover - reported below
            failed.append(e)

    ran = threading.Thread(target=run)
    before = None
    ran.start()
    time.sleep(0.05)
    while ran.is_alive():
        if before is None:
            before = counter[0]
        time.sleep(0.01)
    ran.join()
    stop.set()
    t.join()
    assert not failed
    assert before is not None and counter[0] > before


def test_cdef_covers_header():
    header = open(os.path.join(ROOT, "include", "anonkit", "anonkit.h"), encoding="utf-8").read()
    declared = set(re.findall(r"ANONKIT_API[^;(]*?\b(anonkit_\w+)\s*\(", header))
    assert declared
    missing = [name for name in declared if not hasattr(lib, name)]
    assert not missing


def test_pip_install_offline(tmp_path):
    """pip install --no-build-isolation works offline (Debian's setuptools), and the installed package imports."""
    import shutil
    import sys

    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "python"), src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                        "--target", str(target), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (target / "anonkit" / "py.typed").exists()
    r = subprocess.run([sys.executable, "-c", "import anonkit; print(anonkit.__file__)"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(target)), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(target))


def test_progress_and_cancel(tmp_path):
    """The progress callback sees the phases; cancelling from it (a true return value, or an
    exception, raised again after the run) leaves the output path as it was."""
    df = random_frame(5, 20000)
    seen = []
    out, _ = anonkit.anonymize(df, qi=["age", "zip"], k=5, seed=1, progress=lambda p: seen.append(dict(p)))
    assert out is not None and len(out) == len(df)
    phases = [p["phase"] for p in seen]
    assert "partitioning" in phases and "writing" in phases
    for p in seen:
        assert 0 <= p["done"] and (p["total"] == 0 or p["done"] <= p["total"])
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    for stop_at in (1, 3):
        calls = []

        def stop(p, calls=calls, stop_at=stop_at):
            calls.append(p)
            return len(calls) >= stop_at

        with pytest.raises(anonkit.CancelledError):
            anonkit.anonymize(df, output=str(target), qi=["age", "zip"], k=5, seed=1, progress=stop)
        assert target.read_text() == "old\n"
        assert sorted(os.listdir(tmp_path)) == ["out.csv"]

    class Boom(Exception):
        pass

    def boom(p):
        raise Boom("from the callback")

    with pytest.raises(Boom):
        anonkit.anonymize(df, output=str(target), qi=["age", "zip"], k=5, seed=1, progress=boom)
    assert target.read_text() == "old\n"


def test_no_private_copy(tmp_path):
    """A DataFrame is anonymized and checked without any file: with the
    temporary folder missing (where a private copy would have to go) the run
    succeeds and publishes what the command line publishes from its CSV; a
    run that needs the copy (a hierarchy built from the data) fails there."""
    df = random_frame(5, 300)
    write_csv(df, str(tmp_path / "in.csv"))
    (tmp_path / "hsex.csv").write_text(HIERARCHIES["sex"])
    r = cli("anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--qi", "age,sex", "--k", "4",
            "--seed", "2", "--hierarchy", f"sex={tmp_path / 'hsex.csv'}")
    assert r.returncode == 0, r.stderr
    expected = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    missing = str(tmp_path / "no-such-folder")
    out, report = anonkit.anonymize(df, qi=["age", "sex"], k=4, seed=2, hierarchy={"sex": str(tmp_path / "hsex.csv")},
                                    tmpdir=missing)
    assert rows_of(out) == rows_of(expected)
    assert anonkit.check(out, qi=["age", "sex"], k=4, tmpdir=missing)
    with pytest.raises(anonkit.Error) as e:
        anonkit.anonymize(df, qi=["age", "sex"], k=4, hierarchy={"sex": "auto"}, tmpdir=missing)
    assert "no-such-folder" in e.value.message
