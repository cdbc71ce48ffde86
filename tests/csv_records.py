#!/usr/bin/env python3
"""csv_records.py - CSV-aware checks of anonkit's outputs for the command-line
cases (quoted fields may hold delimiters and newlines, so line tools cannot).

    csv_records.py count FILE DELIM           prints the number of data records (header excluded)
    csv_records.py header FILE DELIM          prints the column names, '|'-joined
    csv_records.py samecols IN OUT DELIM COL...
                                              fails unless the columns are equal row by row
    csv_records.py sameset A B DELIM          fails unless A and B have the same header and
                                              the same multiset of records

A failed check exits with status 1 and says why on stderr.
"""
import csv
import sys


def records(path, delim):
    with open(path, newline='') as f:
        return list(csv.reader(f, delimiter=delim, strict=True))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'count':
        print(len(records(args[0], args[1])) - 1)
    elif cmd == 'header':
        print('|'.join(records(args[0], args[1])[0]))
    elif cmd == 'samecols':
        a, b = records(args[0], args[2]), records(args[1], args[2])
        for col in args[3:]:
            ca = [r[a[0].index(col)] for r in a[1:]]
            cb = [r[b[0].index(col)] for r in b[1:]]
            if ca != cb:
                diff = [(i + 1, x, y) for i, (x, y) in enumerate(zip(ca, cb)) if x != y][:3]
                sys.exit('column %r differs: %d vs %d rows, first differences (row, in, out): %r'
                         % (col, len(ca), len(cb), diff))
    elif cmd == 'sameset':
        a, b = records(args[0], args[2]), records(args[1], args[2])
        if a[0] != b[0]:
            sys.exit('headers differ: %r vs %r' % (a[0], b[0]))
        if sorted(a[1:]) != sorted(b[1:]):
            sys.exit('the multisets of records differ (%d vs %d records)' % (len(a) - 1, len(b) - 1))
    else:
        sys.exit('csv_records: unknown command ' + cmd)


if __name__ == '__main__':
    main()
