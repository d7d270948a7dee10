#!/usr/bin/env python3
"""Check a benchmark's CSV file as RFC 4180 reads it (Python's csv module).

Usage: csv_check.py FILE [FIELD...]
Every row must have the header's number of fields, and each FIELD given must be
the whole of some field of some row (e.g. "segment, 1e6 locks"). Lines starting
with '#' before the header are comments (the MPI programs' header). Exit 0 when
all holds, 1 (one line on stderr) when not.
"""
import csv
import sys


def main(argv):
    if len(argv) < 2:
        print("usage: csv_check.py FILE [FIELD...]", file=sys.stderr)
        return 2
    with open(argv[1], newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = list(csv.reader(lines))
    if not rows:
        print(f"{argv[1]}: no header row", file=sys.stderr)
        return 1
    width = len(rows[0])
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            print(f"{argv[1]}: row {n} has {len(row)} fields, the header {width}: {row}",
                  file=sys.stderr)
            return 1
    fields = {field for row in rows for field in row}
    for want in argv[2:]:
        if want not in fields:
            print(f"{argv[1]}: no field '{want}'", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
