#!/usr/bin/env python3
"""check_links.py — the documents point only inside the repository.

Checks, for the source tree SOURCE_DIR:
  1. every relative link of README.md, CHANGELOG.md and docs/**/*.md
     ([text](target), ![alt](target) and [key]: target, outside code) names a
     file or folder that exists in the tree, and a #fragment names a heading
     of the Markdown file it points at;
  2. no tracked text file mentions a document outside the repository: the
     strings "../shared" and "DESIGN.md" (the architecture is
     docs/ARCHITECTURE.md). CHANGELOG.md and this file are exempt.

Files are those git tracks when SOURCE_DIR is a git checkout, else every file
under it outside build folders and .git.

Usage: check_links.py SOURCE_DIR          exit 0, or 1 listing every problem
       check_links.py --self-test SOURCE_DIR
           also proves the check can fail: copies the documents, plants a
           broken link, a broken fragment and a mention, and expects exactly
           those to be reported.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FORBIDDEN = ["../shared", "DESIGN.md"]
EXEMPT = {"CHANGELOG.md", "tests/check_links.py"}
# Benchmarks may read the large benchmark tables kept beside the checkout
# (they are too large to bundle); they name that data folder, nothing else.
BENCH_DATA = re.compile(r"(\.\./|/)shared/data\b")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SKIP_DIRS = {".git", "build", "build-asan", "build-fuzz"}


def repo_files(root):
    """Paths (relative, '/'-separated) of the files of the tree."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
        files = [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]
        if files:
            return sorted(p for p in files if os.path.isfile(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for n in names:
            files.append(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
    return sorted(files)


def is_document(rel):
    return rel in ("README.md", "CHANGELOG.md") or (rel.startswith("docs/") and rel.endswith(".md"))


def prose_lines(text, keep_code_spans=False):
    """(line number, line) of the lines outside fenced code, code spans blanked
    unless keep_code_spans."""
    fenced = None
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fenced is None:
                fenced = m.group(1)
            elif m.group(1) == fenced:
                fenced = None
            continue
        if fenced is None:
            yield no, line if keep_code_spans else CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)


def slug(heading):
    """The anchor GitHub gives a heading."""
    h = re.sub(r"`", "", heading).strip().lower()
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)  # a link in a heading keeps its text
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for _, line in prose_lines(f.read(), keep_code_spans=True):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_links(root, files):
    problems = []
    for rel in files:
        if not is_document(rel):
            continue
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for no, line in prose_lines(text):
            targets = [m.group(1) for m in INLINE_LINK.finditer(line)]
            m = REF_LINK.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # http:, https:, mailto: ...
                file_part, _, fragment = target.partition("#")
                if file_part:
                    if file_part.startswith("/"):
                        problems.append(f"{rel}:{no}: absolute link '{target}'")
                        continue
                    dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    inside = os.path.relpath(dest, root)
                    if inside == ".." or inside.startswith(".." + os.sep):
                        problems.append(f"{rel}:{no}: link '{target}' leaves the repository")
                        continue
                    if not os.path.exists(dest):
                        problems.append(f"{rel}:{no}: link '{target}': no such file in the repository")
                        continue
                else:
                    dest = path
                if fragment and dest.endswith(".md") and os.path.isfile(dest):
                    if fragment not in anchors(dest):
                        problems.append(f"{rel}:{no}: link '{target}': no heading '#{fragment}' in "
                                        f"{os.path.relpath(dest, root)}")
    return problems


def check_mentions(root, files):
    problems = []
    for rel in files:
        if rel in EXEMPT:
            continue
        try:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data:
            continue  # not a text file
        text = data.decode("utf-8", "replace")
        for no, line in enumerate(text.splitlines(), 1):
            if rel.startswith("bench/"):
                line = BENCH_DATA.sub("", line)
            for word in FORBIDDEN:
                if word in line:
                    problems.append(f"{rel}:{no}: mentions '{word}', outside the repository")
    return problems


def run(root):
    files = repo_files(root)
    problems = check_links(root, files) + check_mentions(root, files)
    offenders = sorted({p.split(":", 1)[0] for p in problems})
    return problems, offenders


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        os.makedirs(os.path.join(copy, "docs"))
        with open(os.path.join(copy, "README.md"), "w") as f:
            f.write("# Title\n\n[ok](docs/a.md#part-one) [bad](docs/missing.md) [frag](#nowhere)\n"
                    "`[in code](nowhere.md)`\n\n```\n[fenced](nowhere.md)\n```\n")
        with open(os.path.join(copy, "docs", "a.md"), "w") as f:
            f.write("## Part one\n\n[up](../README.md) [out](../../elsewhere.md)\n")
        with open(os.path.join(copy, "notes.c"), "w") as f:
            f.write("/* see DESIGN.md */\n")
        problems, _ = run(copy)
        expected = ["README.md:3: link 'docs/missing.md'", "README.md:3: link '#nowhere'",
                    "docs/a.md:3: link '../../elsewhere.md' leaves", "notes.c:1: mentions 'DESIGN.md'"]
        missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
        if missing or len(problems) != len(expected):
            print("self-test failed: expected", expected, "got", problems)
            return 1
    return 0


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) != 1:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    root = os.path.abspath(args[0])
    if "--self-test" in argv and self_test(root):
        return 1
    problems, offenders = run(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in {len(offenders)} file(s): " + " ".join(offenders))
        return 1
    print("links: every document link resolves inside the repository; nothing mentions a file outside it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
