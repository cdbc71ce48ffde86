#!/usr/bin/env python3
"""json_expect.py - a Python expression over anonkit's JSON outputs (reports,
metrics) holds, for the command-line cases.

    json_expect.py FILE EXPR [SHOW]
        EXPR is evaluated with the document of FILE as j; it must be true.
    json_expect.py --pair A B EXPR [SHOW]
        the same over two documents, a (of A) and b (of B).
    json_expect.py --print FILE EXPR
        prints the value of EXPR over j (for a value a case reuses).

approx(x, y, tol=1e-9) compares numbers within tol. On failure the script
exits with status 1 and says what was false, and the value of the expression
SHOW when given.
"""
import json
import sys


def approx(a, b, tol=1e-9):
    return isinstance(a, (int, float)) and abs(a - b) <= tol


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        sys.exit('%s: not valid JSON: %s' % (path, e))


def evaluate(expr, names):
    try:
        return eval(expr, {'approx': approx}, names)
    except Exception as e:
        sys.exit('%s: %s: %s' % (expr, type(e).__name__, e))


def main():
    args = sys.argv[1:]
    if args and args[0] == '--print':
        print(evaluate(args[2], {'j': load(args[1])}))
        return
    if args and args[0] == '--pair':
        names, args = {'a': load(args[1]), 'b': load(args[2])}, args[3:]
    else:
        names, args = {'j': load(args[0])}, args[1:]
    if not evaluate(args[0], names):
        shown = ''
        if len(args) > 1:
            try:
                shown = ' (%s is %r)' % (args[1], eval(args[1], {'approx': approx}, names))
            except Exception as e:
                shown = ' (%s: %s)' % (args[1], e)
        sys.exit('false: %s%s' % (args[0], shown))


if __name__ == '__main__':
    main()
