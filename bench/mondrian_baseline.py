"""A straightforward Mondrian in Python (numpy + pandas), written for
bench/bench_python.sh as the baseline a pandas user could write or pick: the
strict multidimensional top-down split of [LeFevre06] on numeric QIs —
choose the QI of widest normalized range, cut at the median, recurse while
both halves keep k rows; each class's QIs published as "min-max". It is not
qiyuangong's implementation (not available offline here), but the same
algorithm in the same language.

usage: mondrian_baseline.py CSV K QI[,QI...] [DELIMITER]   prints seconds and classes
"""
import sys
import time

import numpy as np
import pandas as pd


def mondrian(values: np.ndarray, k: int) -> list:
    """The classes (index arrays) of the strict Mondrian partition of values (rows x QIs)."""
    spans = values.max(axis=0) - values.min(axis=0)
    spans[spans == 0] = 1
    done, todo = [], [np.arange(len(values))]
    while todo:
        idx = todo.pop()
        part = values[idx]
        if len(idx) < 2 * k:
            done.append(idx)
            continue
        widths = (part.max(axis=0) - part.min(axis=0)) / spans
        for dim in np.argsort(-widths):
            if widths[dim] == 0:
                break
            col = part[:, dim]
            median = np.median(col)
            left = col <= median
            if left.all():  # the median is the largest value: cut below it
                left = col < median
            nl = int(left.sum())
            if nl >= k and len(idx) - nl >= k:
                todo.append(idx[left])
                todo.append(idx[~left])
                break
        else:
            done.append(idx)
            continue
        if widths[dim] == 0:
            done.append(idx)
    return done


def publish(df: pd.DataFrame, qis: list, classes: list) -> pd.DataFrame:
    out = df.copy()
    for q in qis:
        col = out[q].to_numpy()
        text = np.empty(len(col), dtype=object)
        for idx in classes:
            lo, hi = col[idx].min(), col[idx].max()
            text[idx] = f"{lo}" if lo == hi else f"{lo}-{hi}"
        out[q] = text
    return out


def main() -> None:
    path, k, qis = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    sep = sys.argv[4] if len(sys.argv) > 4 else ","
    df = pd.read_csv(path, sep=sep)
    t0 = time.perf_counter()
    classes = mondrian(df[qis].to_numpy(dtype=np.float64), k)
    publish(df, qis, classes)
    print(f"{time.perf_counter() - t0:.3f} {len(classes)}")


if __name__ == "__main__":
    main()
