#!/usr/bin/env python3
"""[LeFevre07] Figure 28 re-run: pruning and non-minimality in Rothko-S.

Generated data ([LeFevre07] Figure 7), Median split, growth phases cut at depth 8 as in
[LeFevre07] §5.6, sample sizes 100..25,000. Each cell: nodes pruned with the hypothesis
tests of [LeFevre07] §3.1, then (in parentheses) with the naive rule; "x" marks a run
in which some partition larger than the sample admitted no high-confidence
split ([LeFevre07] §3.2: potentially non-minimal; anonkit then finishes it with
Rothko-T under k/l, so its output stays minimal, or publishes it as one class
under variance diversity). The paper's table is printed beside ours.

usage: rothko_s_figure28.py ANONKIT ROWS WORKDIR
"""
import json
import subprocess
import sys

anonkit, rows, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = f"{work}/fig28.csv"
normal = f"{work}/fig28-normal.csv"  # salary normal, variance 1.1e8 ([LeFevre07] §5.6)
for path, salary in ((data, "uniform"), (normal, "normal")):
    subprocess.run([anonkit, "generate", "--rows", str(rows), "--seed", "28", "--salary", salary, "-o", path],
                   check=True, stderr=subprocess.DEVNULL)
SIZES = [100, 250, 500, 1000, 2500, 5000, 10000, 25000]
QI = "commission,age,elevel,car,hvalue,hyears,loan"

PAPER = {
    "k": {10: ["68 (1384)", "30 (1110)", "11 (419)", "0 (0)", "0 (0)", "0 (0)", "0 (0)", "0 (0)"],
          100: ["x (x)", "7 (97)", "12 (55)", "5 (6)", "2 (1)", "0 (0)", "0 (0)", "0 (0)"],
          1000: ["x (x)", "x (x)", "x (x)", "x (x)", "1 (3)", "1 (4)", "0 (0)", "0 (0)"],
          10000: ["x (x)"] * 7 + ["0 (0)"]},
    "l": {2: ["97 (631)", "65 (87)", "2 (763)", "112 (91)", "0 (0)", "0 (0)", "0 (0)", "0 (0)"],
          4: ["x (x)", "x (x)", "x (111)", "1 (170)", "0 (2)", "0 (2)", "0 (1)", "0 (1)"],
          6: ["x (x)", "8 (67)", "2 (32)", "1 (33)", "1 (0)", "0 (0)", "0 (0)", "0 (0)"],
          8: ["x (x)", "x (x)", "x (x)", "x (16)", "0 (2)", "0 (9)", "0 (0)", "0 (0)"]},
    "v": {1.1e9: ["x (x)", "x (510)", "x (443)", "0 (456)", "0 (0)", "0 (0)", "0 (0)", "0 (0)"],
          1.2e9: ["x (x)", "x (x)", "x (434)", "x (372)", "0 (87)", "0 (0)", "0 (0)", "0 (2)"],
          1.3e9: ["x (x)", "x (x)", "x (x)", "x (x)", "x (146)", "0 (47)", "0 (5)", "0 (7)"]},
    "vn": {7e7: ["x (x)", "x (396)", "x (599)", "0 (402)", "0 (18)", "0 (0)", "0 (0)", "0 (0)"],
           8e7: ["x (x)", "x (x)", "x (457)", "0 (405)", "0 (66)", "0 (0)", "0 (0)", "0 (0)"],
           9e7: ["x (x)", "x (x)", "x (x)", "x (278)", "x (169)", "0 (6)", "0 (13)", "0 (17)"]},
}


def run(args, test, n, source):
    cmd = [anonkit, "anonymize", source, "-o", f"{work}/o.csv", "--qi", QI, "--algorithm", "rothko-s",
           "--memory", "256M", "--sample-size", str(n), "--growth-depth", "8", "--test", test, "--seed", "1",
           "--report", f"{work}/r.json"] + args
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return "err"
    io = json.load(open(f"{work}/r.json"))["out_of_core"]
    check = subprocess.run([anonkit, "check", f"{work}/o.csv", "--qi", QI] + [a for a in args if a != "--seed"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mark = "" if check.returncode == 0 else "!"  # "!" would mean the verifier refused the output
    return ("x" if io["no_confident_split"] else str(io["pruned_nodes"])) + mark


def table(title, key, params, args_of, source=data):
    print(f"\n{title}   cells: ours: hypothesis (naive)   |   [LeFevre07] Figure 28")
    label = lambda p: f"{p:.1e}" if isinstance(p, float) else str(p)
    print(f"{'n':>6}  " + "  ".join(f"{label(p):>13}" for p in params) + "   |  " +
          "  ".join(f"{label(p):>11}" for p in params))
    for i, n in enumerate(SIZES):
        ours = []
        for p in params:
            ours.append(f"{run(args_of(p), 'hypothesis', n, source)} ({run(args_of(p), 'naive', n, source)})")
        paper = [PAPER[key][p][i] for p in params]
        print(f"{n:>6}  " + "  ".join(f"{c:>13}" for c in ours) + "   |  " + "  ".join(f"{c:>11}" for c in paper))
        sys.stdout.flush()


print(f"[LeFevre07] Figure 28: {rows} generated rows, Median, growth depth 8, QIs {QI}")
table("(a) k-anonymity", "k", [10, 100, 1000, 10000], lambda k: ["--k", str(k)])
table("(b) recursive (1,l)-diversity, zipcode sensitive", "l", [2, 4, 6, 8],
      lambda l: ["--sensitive", "zipcode", "--l", str(l), "--l-variant", "recursive", "--c", "1"])
table("(c) variance diversity, salary sensitive (uniform)", "v", [1.1e9, 1.2e9, 1.3e9],
      lambda v: ["--sensitive", "salary", "--variance", f"{v:.3g}"])
table("(d) variance diversity, salary sensitive (normal)", "vn", [7e7, 8e7, 9e7],
      lambda v: ["--sensitive", "salary", "--variance", f"{v:.3g}"], normal)
