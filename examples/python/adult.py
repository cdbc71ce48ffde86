"""Anonymizes the Adult example (examples/adult) from pandas with the settings
of its job file, proves the result with the independent verifier, and prints
the information-loss metrics — a notebook's cells, one after the other.

    PYTHONPATH=python /usr/bin/python3 examples/python/adult.py [examples/adult]

(After `pip install --no-build-isolation ./python` no PYTHONPATH is needed;
set ANONKIT_LIBRARY when libanonkit is neither installed nor in ./build.)
"""
import json
import os
import sys

import pandas as pd

import anonkit

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adult")
settings = json.load(open(os.path.join(folder, "job.json")))

# The data and the hierarchies, as a notebook has them: DataFrames.
df = pd.read_csv(os.path.join(folder, settings["input"]), sep=settings["delimiter"])
hierarchies = {column: pd.read_csv(os.path.join(folder, path), sep=";", header=None, dtype=str)
               for column, path in settings["hierarchy"].items()}
model = dict(qi=settings["qi"], k=settings["k"], l=settings["l"], l_variant=settings["l-variant"],
             sensitive=settings["sensitive"])

out, report = anonkit.anonymize(df, hierarchy=hierarchies, numeric=settings["numeric"], seed=settings["seed"],
                                **model)
print(report.summary)
print(out.head(10).to_string())

# The independent verifier: True, or anonkit.ViolationError naming the class.
assert anonkit.check(out, **model) is True
print(f"check: {len(out)} rows satisfy k={settings['k']}, distinct l={settings['l']}")

m = anonkit.metrics(df, out, qi=settings["qi"], numeric=settings["numeric"], hierarchy=hierarchies)
print("metrics:", {key: m[key] for key in ("classes", "dm", "cavg", "gcp") if key in m})
