#!/usr/bin/env python3
"""Check what an MPI benchmark prints when run like osu_* (bench/mpi_output.h).

Usage: osu_output_check.py FORMAT WHAT SIZES -- COMMAND...
  FORMAT  table, csv or json: how COMMAND prints (COMMAND adds --csv or --json)
  WHAT    the header's benchmark name: lock or barrier
  SIZES   the Size column's values expected, in order of first appearance, e.g. 1,2
Runs COMMAND; exit 0 when its output is well formed, 1 (one line on stderr) if not:
table: '# rdlm WHAT benchmark vX', '# ranks N, nodes M', a '# Ranks ...' column
header, rows, no RESULT line; csv: every row as wide as the header (RFC 4180);
json: one object with its rows. In all: the sizes as expected, figures > 0.
"""
import csv
import json
import re
import subprocess
import sys


def rows_of(fmt, what, out):
    if fmt == "json":
        doc = json.loads(out)
        if doc.get("benchmark") != what:
            raise ValueError(f"benchmark {doc.get('benchmark')!r}, not {what!r}")
        return [(int(r["size"]), float(r["median"])) for r in doc["rows"]]
    if fmt == "csv":
        table = list(csv.reader(out.splitlines()))
        for n, row in enumerate(table[1:], start=2):
            if len(row) != len(table[0]):
                raise ValueError(f"row {n}: {len(row)} fields, header {len(table[0])}")
        return [(int(r[0]), float(r[3])) for r in table[1:]]
    lines = out.splitlines()
    if "RESULT" in out:
        raise ValueError("RESULT lines without --result-lines")
    if not re.match(rf"# rdlm {what} benchmark v\d+\.\d+\.\d+$", lines[0]):
        raise ValueError(f"first line {lines[0]!r}")
    if not re.match(r"# ranks \d+, nodes \d+$", lines[1]):
        raise ValueError(f"second line {lines[1]!r}")
    header = [n for n, line in enumerate(lines) if re.match(r"# (Ranks|Nodes) +Impl", line)]
    if not header:
        raise ValueError("no column header")
    body = [line.split() for line in lines[header[0] + 1:] if not line.startswith("#")]
    return [(int(f[0]), float(f[2])) for f in body]


def main(argv):
    if len(argv) < 6 or argv[4] != "--":
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    fmt, what, sizes, cmd = argv[1], argv[2], [int(s) for s in argv[3].split(",")], argv[5:]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    try:
        if run.returncode != 0:
            raise ValueError(f"exit {run.returncode}: {run.stderr.strip()[:300]}")
        rows = rows_of(fmt, what, run.stdout)
        seen = list(dict.fromkeys(size for size, _ in rows))
        if seen != sizes:
            raise ValueError(f"sizes {seen}, expected {sizes}")
        if any(not value > 0 for _, value in rows):
            raise ValueError(f"a figure not above 0: {rows}")
    except (ValueError, KeyError, IndexError, json.JSONDecodeError) as e:
        print(f"osu_output_check: {' '.join(cmd[-6:])}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
