"""The Python package against the command line (bench/bench_python.sh).

What is measured, in the same run:
- cli s: the whole `anonkit anonymize` process on the CSV (start, read,
  run, write), wall time;
- python s: the one call anonkit.anonymize(df) -> (DataFrame, report) in
  this already started interpreter with pandas and anonkit imported, wall
  time: conversions in and out, the library's run, everything between;
- ratio: python s / cli s (the goal: at most 1.3);
- cpu ratio: the same two measured in CPU seconds (user + system, all
  threads: getrusage of the child for the cli, time.process_time for the
  call), best of REPEAT each; on a loaded machine wall times mostly measure
  waiting for a core, CPU seconds much less so;
- frame->t, lib run, t->frame: the parts of python s, timed apart:
  DataFrame -> anonkit_table (numeric buffers borrowed), the library's run
  alone (anonkit_anonymize, a table in and a table out: no CSV text
  between), the published table -> DataFrame;
- start: starting /usr/bin/python3 and importing pandas and anonkit, in a
  fresh process, printed apart (not in python s; a script run from the
  shell pays it once, a notebook never again).
Best of REPEAT each. Prints a table; never fails on time.

usage: bench_python.py ANONKIT_CLI ADULT_DIR GENERATED_CSV [REPEAT]
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import pandas as pd

import anonkit
from anonkit import _Job
from anonkit._convert import from_ctable, to_ctable
from anonkit._lib import ffi, lib


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def best_cpu(fn, repeat, child=False):
    """Least CPU seconds (user + system) of fn over repeat calls: of this
    process (all its threads), or of the child processes it waited for."""
    who = resource.RUSAGE_CHILDREN if child else resource.RUSAGE_SELF
    times = []
    for _ in range(repeat):
        r0 = resource.getrusage(who)
        fn()
        r1 = resource.getrusage(who)
        times.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return min(times)


def case(name, cli, csv, sep, cli_args, py_kwargs, df, repeat, tmp):
    out = os.path.join(tmp, name + ".csv")
    t_cli, _ = best(lambda: subprocess.run([cli, "anonymize", csv, "-o", out] + cli_args, check=True,
                                           capture_output=True), repeat)
    t_py, (frame, report) = best(lambda: anonkit.anonymize(df, **py_kwargs), repeat)
    c_cli = best_cpu(lambda: subprocess.run([cli, "anonymize", csv, "-o", out] + cli_args, check=True,
                                            capture_output=True), repeat, child=True)
    c_py = best_cpu(lambda: anonkit.anonymize(df, **py_kwargs), repeat)
    t_in, table = best(lambda: to_ctable(df), repeat)
    with _Job() as job:  # the library's run alone, table in, table out
        job.configure(py_kwargs)
        job.check(lib.anonkit_job_set_input_table(job.ptr, table.ptr))
        job.check(lib.anonkit_job_set_output_table(job.ptr))
        rp = ffi.new("anonkit_result **")

        def run():
            if rp[0] != ffi.NULL:
                lib.anonkit_result_free(rp[0])
            job.check(lib.anonkit_anonymize(job.ptr, rp))

        t_run, _ = best(run, repeat)
        pub = lib.anonkit_result_table(rp[0])  # the published table itself, to time its way back
        t_out, _ = best(lambda: from_ctable(pub, like=df, qi=py_kwargs["qi"]), repeat)
        lib.anonkit_result_free(rp[0])
    table.close()
    cli_rows = sum(1 for _ in open(out)) - 1
    assert cli_rows == len(frame), (cli_rows, len(frame))
    print(f"{name:<22} {len(df):>9} {t_cli:>8.3f} {t_py:>9.3f} {t_py / t_cli:>6.2f}x {t_in:>9.3f} {t_run:>9.3f} "
          f"{t_out:>9.3f} {c_cli:>8.3f} {c_py:>8.3f} {c_py / c_cli:>6.2f}x")
    return t_cli, t_py


def startup(repeat):
    """Seconds to start the interpreter and import pandas and anonkit (best of repeat)."""
    t, _ = best(lambda: subprocess.run([sys.executable, "-c", "import pandas, anonkit"], check=True), repeat)
    return t


def main():
    cli, adult, generated = sys.argv[1], sys.argv[2], sys.argv[3]
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    tmp = tempfile.mkdtemp(prefix="anonkit-bench-python.")
    print(f"{'case':<22} {'rows':>9} {'cli s':>8} {'python s':>9} {'ratio':>7} {'frame->t':>9} {'lib run':>9} "
          f"{'t->frame':>9} {'cli cpu':>8} {'py cpu':>8} {'cpu ratio':>7}")
    settings = json.load(open(os.path.join(adult, "job.json")))
    df = pd.read_csv(os.path.join(adult, settings["input"]), sep=";")
    hier = {c: pd.read_csv(os.path.join(adult, p), sep=";", header=None, dtype=str)
            for c, p in settings["hierarchy"].items()}
    case("adult mondrian k10 l3", cli, os.path.join(adult, settings["input"]), ";",
         ["--job", os.path.join(adult, "job.json"), "--threads", "2"],
         dict(qi=settings["qi"], numeric=settings["numeric"], sensitive=settings["sensitive"], k=10, l=3,
              hierarchy=hier, seed=1, threads=2), df, repeat, tmp)
    g = pd.read_csv(generated)
    qis = ["age", "salary", "commission", "elevel", "car", "zipcode", "hvalue", "hyears"]
    case("generated mondrian k10", cli, generated, ",",
         ["--qi", ",".join(qis), "--k", "10", "--seed", "1", "--threads", "2"],
         dict(qi=qis, k=10, seed=1, threads=2), g, repeat, tmp)
    t_start = startup(repeat)
    print(f"start: /usr/bin/python3 started and pandas, anonkit imported in a fresh process: {t_start:.3f} s "
          f"(not in python s)")
    print(f"(cli s: the whole `anonkit anonymize` process on the CSV, wall time; python s: the call "
          f"anonkit.anonymize(df) -> df in an already started interpreter, conversions included; ratio: "
          f"python s / cli s; frame->t, lib run, t->frame: the conversion in, the library's run (table in, table "
          f"out) and the conversion out, parts of python s; cli cpu, py cpu: the same two in CPU seconds (user + system, "
          f"all threads), cpu ratio their ratio; "
          f"best of {repeat})")


if __name__ == "__main__":
    main()
