#!/usr/bin/env python3
"""check_layers.py — enforces the layer rule of docs/ARCHITECTURE.md.

Every folder of src/ is one layer; a file may include headers of its own
folder and of layers below its own, never above. Algorithm families
(src/algo/<family>/) do not include one another. The independent verifier
(src/verify/) may use only common, io and model: it shares nothing with the
algorithms, the metrics or the writer. The command line (src/cli/) sees only
the public header. The public header include/anonkit/anonkit.h is below all.
The MPI driver (src/mpi/, anonkit-mpi) is a top layer beside the command line:
it may include every library layer but the verifier, never src/cli/; and
only it may include <mpi.h>, so that the library never depends on MPI.

Usage: check_layers.py SRC_DIR          exit 0, or 1 listing every violation
       check_layers.py --self-test SRC_DIR
           also proves the check can fail: copies SRC_DIR, adds one upward
           include and one include between algorithm families, and expects
           exactly those to be reported.
"""
import os
import re
import shutil
import sys
import tempfile

# Lowest first. A layer may include the layers before it in this list.
LAYERS = ["common", "io", "core", "model", "metrics", "algo", "publish", "verify", "api", "cli"]
# The MPI driver: the top layer, beside cli (ONLY below keeps it off cli and verify).
LAYERS.append("mpi")
# Layers whose includes are restricted to a set rather than "everything below".
ONLY = {
    "verify": {"common", "io", "model", "verify"},
    "cli": {"cli"},
    "mpi": {"common", "io", "core", "model", "metrics", "algo", "publish", "api", "mpi"},
}
# Only this layer may include the MPI header.
MPI_LAYER = "mpi"
MPI_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]mpi\.h[>"]')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(relpath):
    """Layer name and algorithm family (or None) of a path relative to src/."""
    parts = relpath.split("/")
    if parts[0] == "algo" and len(parts) > 2:
        return "algo", parts[1]
    return parts[0], None


def violations(src):
    found = []
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            if "/" not in rel:
                found.append(f"{rel}: a source file must live in a layer folder")
                continue
            layer, family = layer_of(rel)
            if layer not in LAYERS:
                found.append(f"{rel}: '{layer}' is not a layer of docs/ARCHITECTURE.md")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    if MPI_INCLUDE.match(line) and layer != MPI_LAYER:
                        found.append(f"{rel}:{lineno}: only src/{MPI_LAYER}/ may include mpi.h")
                        continue
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target.startswith("anonkit/"):
                        continue  # the public header: below every layer
                    if "/" not in target:
                        continue  # same folder
                    tlayer, tfamily = layer_of(target)
                    if tlayer not in LAYERS:
                        found.append(f"{rel}:{lineno}: includes '{target}' outside every layer")
                    elif layer in ONLY and tlayer not in ONLY[layer]:
                        found.append(f"{rel}:{lineno}: {layer} may not include '{target}' "
                                     f"(only {', '.join(sorted(ONLY[layer]))})")
                    elif LAYERS.index(tlayer) > LAYERS.index(layer):
                        found.append(f"{rel}:{lineno}: includes '{target}' of the higher layer {tlayer}")
                    elif layer == "algo" and tlayer == "algo" and family != tfamily:
                        found.append(f"{rel}:{lineno}: algorithm family {family} includes '{target}' "
                                     f"of the family {tfamily}")
    return found


def self_test(src):
    """Proves the check fails on the violations it is there to catch."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        shutil.copytree(src, copy)
        planted = {
            "common/planted.c": '#include "core/table.h"\n',
            "algo/incognito/planted.c": '#include "algo/onedim/onedim.h"\n',
            "verify/planted.c": '#include "metrics/metrics.h"\n',
            "cli/planted.c": '#include "io/csv.h"\n',
            "mpi/planted.c": '#include "cli/cli.h"\n',
            "algo/mondrian/planted_mpi.c": '#include <mpi.h>\n',
        }
        for rel, line in planted.items():
            path = os.path.join(copy, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(line)
        got = violations(copy)
        for rel in planted:
            if not any(v.startswith(rel + ":") for v in got):
                print(f"self-test: the planted include in {rel} was not reported", file=sys.stderr)
                return 1
        if len(got) != len(planted):
            print("self-test: unexpected reports:\n  " + "\n  ".join(got), file=sys.stderr)
            return 1
    print(f"self-test: {len(planted)} planted violations reported")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        src = argv[2]
    elif len(argv) == 2:
        src = argv[1]
    else:
        print(__doc__, file=sys.stderr)
        return 2
    found = violations(src)
    for v in found:
        print(v, file=sys.stderr)
    if found:
        print(f"{len(found)} include(s) break the layer rule", file=sys.stderr)
        return 1
    print("layers: every include points down")
    if argv[1] == "--self-test":
        return self_test(src)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
