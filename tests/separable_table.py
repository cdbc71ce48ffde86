#!/usr/bin/env python3
"""separable_table.py PATH - writes a table of 300 rows whose label is a
threshold of one QI (old when age > 47, else young), zipcode being noise,
every third row a test row: a tree on the unmodified table classifies every
test row right.
"""
import random
import sys


def main():
    rng = random.Random(3)
    with open(sys.argv[1], 'w') as f:
        f.write('age,zipcode,label,part\n')
        for i in range(300):
            age, zipcode = rng.randint(18, 80), rng.randint(10000, 10999)
            f.write('%d,%d,%s,%s\n' % (age, zipcode, 'old' if age > 47 else 'young',
                                       'test' if i % 3 == 0 else 'train'))


if __name__ == '__main__':
    main()
