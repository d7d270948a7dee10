#!/usr/bin/env python3
"""Queries on JSON-lines histories for the cluster scenario scripts (lib.sh).

usage:
  hist_query.py now                          CLOCK_MONOTONIC in ns (the histories' clock)
  hist_query.py wait FILE... --op OP [filters] [--timeout S] [--field F]
                                             wait until a matching record exists; print
                                             it (or its field F); exit 1 on timeout
  hist_query.py get FILE... --op OP [filters] [--field F] [--last]
                                             the first (last) matching record or field;
                                             exit 1 if none
  hist_query.py count FILE... --op OP [filters]
  hist_query.py max FILE... --op OP --field F [filters]   (min: likewise)

filters: --where FIELD=V1|V2 (string compare; repeatable), --after-ns T, --before-ns T
(on t_ns). Lines that are not complete JSON (a file being written) are skipped.
"""
import argparse
import json
import sys
import time


def records(paths):
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(rec, dict):
                        yield rec
        except FileNotFoundError:
            continue


def matching(args):
    wheres = [w.split("=", 1) for w in args.where]
    out = []
    for r in records(args.files):
        if args.op and r.get("op") != args.op:
            continue
        t = r.get("t_ns", 0)
        if args.after_ns is not None and t <= args.after_ns:
            continue
        if args.before_ns is not None and t >= args.before_ns:
            continue
        if all(str(r.get(k)) in v.split("|") for k, v in wheres):
            out.append(r)
    return out


def show(rec, field):
    print(json.dumps(rec) if field is None else rec.get(field))


def main(argv):
    if argv[:1] == ["now"]:
        print(time.monotonic_ns())
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["wait", "get", "count", "max", "min"])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--op")
    ap.add_argument("--where", action="append", default=[])
    ap.add_argument("--after-ns", type=int)
    ap.add_argument("--before-ns", type=int)
    ap.add_argument("--field")
    ap.add_argument("--last", action="store_true")
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args(argv)
    if args.cmd == "wait":
        deadline = time.monotonic() + args.timeout
        while True:
            found = matching(args)
            if found:
                show(found[0], args.field)
                return 0
            if time.monotonic() >= deadline:
                return 1
            time.sleep(0.02)
    found = matching(args)
    if args.cmd == "count":
        print(len(found))
        return 0
    if args.cmd in ("max", "min"):
        vals = [r[args.field] for r in found if isinstance(r.get(args.field), int)]
        if not vals:
            return 1
        print(max(vals) if args.cmd == "max" else min(vals))
        return 0
    if not found:
        return 1
    show(found[-1] if args.last else found[0], args.field)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
