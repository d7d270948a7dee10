#!/usr/bin/env python3
"""Fencing audit of a cluster test run (Python 3 standard library only).

usage: check_fencing.py --store STORE_HISTORY [WORKER_HISTORY ...]
                        [--min-rejected N] [--quiet]

From the store's history (examples/fenced_store), per key, in decision order:
  - no write is accepted with a token smaller than one accepted before for that key
    (a stale write accepted);
  - no write is rejected unless a larger token was accepted before (the store
    refusing a current holder);
  - every rejected (stale) write is reported: who, when, which token, and whose
    larger token it lost to.
From the workers' histories (tests/cluster/lease_worker), when given:
  - every token granted is unique, and per lock tokens strictly increase in the
    order the acquires returned;
  - every write the store accepted from a known client carries a token that was
    granted to that client;
  - every decision a worker reports (ok / stale) is the store's decision.
--min-rejected N fails the audit unless at least N stale writes were rejected (a
scenario that planted a late write proves it reached the store).

Exit 0 if the audit passes, 1 if it finds a violation or a history is malformed.
"""
import argparse
import collections
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import histories as H  # noqa: E402


def audit_store(records, t0, report):
    """Per-key decision audit. Returns (violations, counts)."""
    problems = []
    best = {}  # key -> the accepted record with the largest token
    accepted = rejected = stale_accepted = 0
    last_t = None
    for r in records:
        H.need(r, "key", "token", "client", "result")
        if r["op"] != "write" or r["result"] not in ("ok", "stale"):
            problems.append("%s: unexpected store record op=%s result=%s" %
                            (r["_src"], r["op"], r["result"]))
            continue
        if last_t is not None and r["t_ns"] < last_t:
            problems.append("%s: store history goes back in time" % r["_src"])
        last_t = r["t_ns"]
        key, tok, top = r["key"], r["token"], best.get(r["key"])
        if r["result"] == "ok":
            accepted += 1
            if top is not None and tok < top["token"]:
                stale_accepted += 1
                problems.append(
                    "stale write ACCEPTED: key %s token %s from %s at %s (%s), but token "
                    "%s from %s was accepted before at %s (%s)" %
                    (key, H.token_str(tok), r["client"], H.t_str(r["t_ns"], t0),
                     r["_src"], H.token_str(top["token"]), top["client"],
                     H.t_str(top["t_ns"], t0), top["_src"]))
            elif top is None or tok > top["token"]:
                best[key] = r
        else:
            rejected += 1
            if top is None or tok >= top["token"]:
                problems.append(
                    "write REJECTED though not stale: key %s token %s from %s at %s (%s); "
                    "highest accepted before: %s" %
                    (key, H.token_str(tok), r["client"], H.t_str(r["t_ns"], t0),
                     r["_src"], "none" if top is None else H.token_str(top["token"])))
            else:
                report("stale write rejected: key %s token %s from %s at %s (%s); it lost "
                       "to token %s from %s accepted at %s" %
                       (key, H.token_str(tok), r["client"], H.t_str(r["t_ns"], t0),
                        r["_src"], H.token_str(top["token"]), top["client"],
                        H.t_str(top["t_ns"], t0)))
        if "max" in r and top is not None and r["max"] < top["token"]:
            problems.append("%s: store reports max %d below an accepted token %d" %
                            (r["_src"], r["max"], top["token"]))
    counts = {"keys": len(set(r["key"] for r in records)), "accepted": accepted,
              "rejected": rejected, "stale_accepted": stale_accepted}
    return problems, counts


def cross_check(store_recs, worker_recs, grant_recs, t0):
    """Store decisions against what the workers were granted and were told."""
    problems = []
    granted = collections.defaultdict(set)  # client -> tokens
    for g in grant_recs:
        granted[g["client"]].add(g["token"])
    known = set(r["client"] for r in worker_recs if "client" in r)
    for r in store_recs:
        if r["result"] == "ok" and r["client"] in known and \
                r["token"] not in granted[r["client"]]:
            problems.append("store accepted a write from %s with token %s that was never "
                            "granted to it (%s, %s)" %
                            (r["client"], H.token_str(r["token"]),
                             H.t_str(r["t_ns"], t0), r["_src"]))
    decided = collections.Counter(
        (r["client"], r["key"], r["token"], r["result"]) for r in store_recs)
    for w in worker_recs:
        if w["op"] != "write":
            continue
        H.need(w, "client", "key", "token", "result")
        if w["result"] not in ("ok", "stale"):
            continue  # no answer: the store may or may not have decided
        k = (w["client"], w["key"], w["token"], w["result"])
        if decided[k] > 0:
            decided[k] -= 1
        else:
            problems.append("%s says its write (key %s token %s) was %s, but the store "
                            "has no such decision (%s, %s)" %
                            (w["client"], w["key"], H.token_str(w["token"]), w["result"],
                             H.t_str(w["t_ns"], t0), w["_src"]))
    return problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="fenced_store --history file")
    ap.add_argument("workers", nargs="*", help="lease_worker --history files")
    ap.add_argument("--min-rejected", type=int, default=0)
    ap.add_argument("--quiet", action="store_true", help="only the summary")
    args = ap.parse_args(argv)
    report = (lambda s: None) if args.quiet else (lambda s: print("  " + s))
    try:
        store_recs = H.load([args.store])
        worker_recs = H.load(args.workers)
        all_t = [r["t_ns"] for r in store_recs + worker_recs]
        t0 = min(all_t) if all_t else 0
        problems, counts = audit_store(store_recs, t0, report)
        grant_recs = H.grants(worker_recs)
        problems += H.check_grant_tokens(grant_recs, t0)
        if worker_recs:
            problems += cross_check(store_recs, worker_recs, grant_recs, t0)
    except (H.HistoryError, OSError) as e:
        return H.unreadable("check_fencing", e)
    if counts["rejected"] < args.min_rejected:
        problems.append("only %d stale writes reached the store and were rejected; "
                        "expected at least %d" % (counts["rejected"], args.min_rejected))
    summary = ("%d keys, %d writes accepted, %d stale writes rejected, %d stale writes "
               "accepted; %d grants on %d locks" %
               (counts["keys"], counts["accepted"], counts["rejected"],
                counts["stale_accepted"], len(grant_recs),
                len(set(g["lock"] for g in grant_recs))))
    return H.verdict("check_fencing", problems, summary,
                     "tokens unique and increasing per lock")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
