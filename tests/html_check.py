#!/usr/bin/python3
"""html_check.py — checks a release report (docs/report.md) as Chromium rendered it.

usage:
  html_check.py dom DOM.html RAW.html REPORT.json [--cwd DIR] [--original CSV] [--figures-of OTHER.json]
      DOM.html: the DOM Chromium dumped (--dump-dom); RAW.html: the file anonkit wrote;
      REPORT.json: the JSON the figures come from (anonymize --report). With
      --figures-of, every figure outside /parameters must also equal OTHER.json's
      (anonkit report against the anonymize run's report).
  html_check.py png SHOT.png
      the screenshot is not blank (its decompressed pixels take many values).

Checks of `dom`: every section is there; every SHA-256 printed equals `sha256sum`
of its file; every figure with data-json equals the JSON's figure at that pointer,
printed as anonkit prints it; the figures computed from the files (data-derived)
equal what this script counts itself (risk per record before and after, the
verifier's counts, the lattice size); the raw file references nothing outside
itself (no http, no src=, no <link>, no <script>, no url() but #patterns); the
DOM holds no <script> element. Prints what failed and exits 1.
"""
import csv
import html.parser
import json
import math
import os
import re
import subprocess
import sys
import zlib

SECTIONS = ["summary", "identity", "configuration", "privacy", "rows", "loss", "risk", "distributions",
            "generalization", "timings", "out-of-core"]

problems = []


def problem(text):
    problems.append(text)


class Dom(html.parser.HTMLParser):
    """Collects sections, figures (data-json, data-derived), checksum rows and script elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections = set()
        self.figures = []   # (pointer, text)
        self.derived = {}   # name -> text
        self.sums = []      # [path, hex]
        self.scripts = 0
        self.stack = []     # open capture: (kind, key, [text])
        self.in_path = False
        self.path_text = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "section" and "id" in a:
            self.sections.add(a["id"])
        if "data-json" in a:
            self.stack.append(("json", a["data-json"], []))
        elif "data-derived" in a:
            self.stack.append(("derived", a["data-derived"], []))
        elif "data-sha256" in a:
            self.stack.append(("sha", a["data-sha256"], []))
        elif tag == "td" and a.get("class") == "path":
            self.stack.append(("path", None, []))
        else:
            self.stack.append((None, None, None))

    def handle_endtag(self, tag):
        if not self.stack:
            return
        kind, key, text = self.stack.pop()
        t = "".join(text or []).strip()
        if kind == "json":
            self.figures.append((key, t))
        elif kind == "derived":
            self.derived[key] = t
        elif kind == "path":
            self.sums.append([t, None])
        elif kind == "sha":
            if self.sums and self.sums[-1][1] is None:
                self.sums[-1][1] = t
                if key != t:
                    problem(f"checksum attribute {key} differs from its text {t}")

    def handle_data(self, data):
        self.text.append(data)
        for kind, key, text in self.stack:
            if text is not None:
                text.append(data)


def number_text(v):
    """A JSON number as anonkit prints it (html_report.c number_text)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return str(v)
    if v == math.floor(v) and abs(v) < 1e15:
        return "%.0f" % v
    return "%.6g" % v


def resolve(doc, pointer):
    cur = doc
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            cur = cur[int(token)]
        else:
            cur = cur[token]
    return cur


def classes_of(path, delimiter, qi):
    """Sizes of the groups of rows with equal QI values."""
    sizes = {}
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter=delimiter)
        header = next(rows)
        cols = [header.index(q) for q in qi]
        for r in rows:
            key = tuple(r[c] for c in cols)
            sizes[key] = sizes.get(key, 0) + 1
    return sizes


def check_dom(dom_path, raw_path, json_path, cwd, original, other):
    report = json.load(open(json_path))
    raw = open(raw_path, encoding="utf-8").read()
    for bad in [r"https?:", r"\bsrc\s*=", r"<link\b", r"<script\b", r"<iframe\b", r"@import", r"url\((?!#)"]:
        m = re.search(bad, raw, re.I)
        if m:
            problem(f"{raw_path} references something outside itself: {raw[max(0, m.start() - 40):m.end() + 40]!r}")
    d = Dom()
    d.feed(open(dom_path, encoding="utf-8").read())
    for s in SECTIONS:
        if s not in d.sections:
            problem(f"section {s} missing")
    if d.scripts:
        problem(f"the DOM holds {d.scripts} <script> element(s)")
    if not d.sums:
        problem("no checksums")
    for path, hexd in d.sums:
        full = os.path.join(cwd, path)
        got = subprocess.run(["sha256sum", full], capture_output=True, text=True).stdout.split()
        if not got or got[0] != hexd:
            problem(f"checksum of {path}: report {hexd}, sha256sum {got[:1]}")
    if len(d.figures) < 10:
        problem(f"only {len(d.figures)} figures tied to the JSON")
    others = json.load(open(other)) if other else None
    for pointer, text in d.figures:
        try:
            v = resolve(report, pointer)
        except (KeyError, IndexError, ValueError, TypeError):
            problem(f"figure {text} at {pointer}: no such figure in {json_path}")
            continue
        if number_text(v) != text:
            problem(f"figure at {pointer}: printed {text}, the JSON has {v} ({number_text(v)})")
        if others is not None and not pointer.startswith("/parameters"):
            try:
                w = resolve(others, pointer)
            except (KeyError, IndexError, ValueError, TypeError):
                problem(f"figure at {pointer} is not in {other}")
                continue
            if number_text(w) != text:
                problem(f"figure at {pointer}: printed {text}, {other} has {w}")
    # the figures counted from the files
    k = report.get("classes")
    expect = {
        "risk_after_records": "%.0f" % report["rows_published"],
        "risk_after_classes": "%.0f" % k,
        "risk_after_highest": "%.6g" % (1.0 / report["min_class_size"]) if report["min_class_size"] else None,
        "risk_after_average": "%.6g" % (k / report["rows_published"]) if report["rows_published"] else None,
        "verified_rows": "%.0f" % report["rows_read"],
        "verified_classes": "%.0f" % k,
        "verified_suppressed": "%.0f" % report["rows_suppressed"],
    }
    if original:
        p = report["parameters"]
        sizes = classes_of(os.path.join(cwd, original), p["delimiter"], p["qi"])
        n = sum(sizes.values())
        expect["risk_before_records"] = "%.0f" % n
        expect["risk_before_classes"] = "%.0f" % len(sizes)
        expect["risk_before_highest"] = "%.6g" % (1.0 / min(sizes.values()))
        expect["risk_before_average"] = "%.6g" % (len(sizes) / n)
    inc = report.get("incognito")
    if inc:
        nodes = 1
        for h in inc["hierarchy_heights"]:
            nodes *= h + 1
        expect["lattice_nodes"] = "%.0f" % nodes
        expect["lattice_height"] = "%.0f" % sum(inc["hierarchy_heights"])
    for name, want in expect.items():
        if want is None:
            continue
        if name not in d.derived:
            problem(f"figure {name} missing")
        elif d.derived[name] != want:
            problem(f"figure {name}: printed {d.derived[name]}, expected {want}")
    return "".join(d.text)


def check_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        problem(f"{path} is not a PNG")
        return
    pos, idat = 8, b""
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    pixels = zlib.decompress(idat)
    distinct = len(set(pixels))
    if distinct < 32:  # a blank page: its rows of one colour and the filter bytes
        problem(f"{path} looks blank: {distinct} distinct bytes in its pixels")


def main():
    args = sys.argv[1:]
    if args and args[0] == "png" and len(args) == 2:
        check_png(args[1])
    elif args and args[0] == "dom" and len(args) >= 4:
        opts = {"--cwd": ".", "--original": None, "--figures-of": None, "--expect-text": None}
        rest = args[4:]
        while rest:
            opts[rest[0]] = rest[1]
            rest = rest[2:]
        text = check_dom(args[1], args[2], args[3], opts["--cwd"], opts["--original"], opts["--figures-of"])
        if opts["--expect-text"] and opts["--expect-text"] not in text:
            problem(f"the rendered text lacks {opts['--expect-text']!r}")
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
