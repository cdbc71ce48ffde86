"""Regenerates python/anonkit/_cdef.py from include/anonkit/anonkit.h.

Usage: python3 python/tools/gen_cdef.py [HEADER] [OUT]
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
header = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "include", "anonkit", "anonkit.h")
out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "anonkit", "_cdef.py")
s = open(header, encoding="utf-8").read()
s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
s = re.sub(r"#.*?\n", "\n", s)
s = s.replace('extern "C" {', "").replace("ANONKIT_API ", "")
s = re.sub(r"^\}\s*$", "", s, flags=re.M)
s = re.sub(r"[ \t]+\n", "\n", s)
s = re.sub(r"\n\s*\n+", "\n", s).strip()
with open(out, "w", encoding="utf-8") as f:
    f.write('"""The C declarations of include/anonkit/anonkit.h for cffi\'s ABI mode.\n\n'
            "Generated from the header (comments, preprocessor lines and ANONKIT_API\n"
            "removed); tests/test_anonkit.py checks that every function the header\n"
            "declares is here. Regenerate with python/tools/gen_cdef.py after changing the\n"
            'header.\n"""\n\nCDEF = """\n' + s + '\n"""\n')
