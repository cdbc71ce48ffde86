#!/usr/bin/env python3
"""class_error_tables.py DIR - writes DIR/orig.csv and DIR/pub.csv, the
original and published tables of the hand-worked --class-error case of
cli_runs.sh: job generalized from a leaf (Banker, Clerk, Driver) to its
group (White, Blue, or * when suppressed), age 30 throughout, the label
income, and a part column naming the 12 training and 5 test rows. The tree
and its errors on these tables are worked out in the comment above the case.
"""
import sys


def main():
    d = sys.argv[1]
    train = [('Blue', 'lo')] * 5 + [('Blue', 'hi')] + [('White', 'hi')] * 5 + [('White', 'lo')]
    test = [('White', 'hi'), ('White', 'lo'), ('Blue', 'lo'), ('Blue', 'hi'), ('*', 'lo')]
    leaf = {'White': 'Clerk', 'Blue': 'Driver', '*': 'Banker'}
    with open(d + '/orig.csv', 'w') as o, open(d + '/pub.csv', 'w') as p:
        o.write('job,age,income,part\n')
        p.write('job,age,income,part\n')
        for rows, part in ((train, 'train'), (test, 'test')):
            for job, income in rows:
                o.write('%s,30,%s,%s\n' % (leaf[job], income, part))
                p.write('%s,30,%s,%s\n' % (job, income, part))


if __name__ == '__main__':
    main()
