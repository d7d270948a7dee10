#!/usr/bin/env python3
"""Per-lock mutual exclusion and lease-safety check of a cluster test run (Python 3
standard library only).

usage: check_locks.py WORKER_HISTORY [WORKER_HISTORY ...] [--quiet]

A hold is a successful acquire (RDLM_OK or RDLM_OWNER_DEAD) with its token, from the
instant the acquire returned. While it lasts, its client claims the lock by
  - a write with the hold's token (t_ns: before the request was sent),
  - a check that returned RDLM_OK (t_ns: before the call),
  - a release of the token that returned RDLM_OK (t_ns: before the call).
For every two consecutive holds A, B of one lock (in acquire order): every claim of
A stamped after B acquired is an overlap (a claim after a later hold C acquired is
also after B acquired). Because of where the stamps are taken, an overlap is
never an artefact of scheduling (lease_worker.c). Overlaps:
  - a release RDLM_OK            -> VIOLATION (the authority let two clients hold it)
  - a check RDLM_OK              -> VIOLATION (A's lease outlived the authority's
                                    expiry: the client would act on a lost lock)
  - a write the store accepted   -> VIOLATION (the late holder's write got through)
  - a write the store rejected   -> allowed, if B's acquire said RDLM_OWNER_DEAD (the
                                    authority broke A's expired lease)
  - a write with no answer       -> warning (outcome unknown)
and any overlap while B's acquire said plain RDLM_OK is a VIOLATION (A never
released, its lease was not broken, yet B got the lock).
Also:
  - tokens are unique, and per lock strictly increase in acquire order;
  - after a session's lease_lost record, no later call on that session returns
    success (acquire, check, release).

Exit 0 if every lock passes, 1 on a violation or a malformed history.
"""
import argparse
import collections
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import histories as H  # noqa: E402


class Hold:
    def __init__(self, acq):
        self.acq = acq
        self.client, self.lock, self.token = acq["client"], acq["lock"], acq["token"]
        self.start = acq["t_ns"]
        self.claims = []  # (t_ns, kind, record)

    def name(self, t0):
        return "%s (token %s, acquired %s with %s, %s)" % (
            self.client, H.token_str(self.token), H.t_str(self.start, t0),
            self.acq["status"], self.acq["_src"])


REASONS = {
    "release-ok": "the authority let both hold the lock",
    "check-ok": "the earlier holder's lease outlived its expiry at the authority",
    "write-ok": "the store accepted the earlier holder's late write",
}


def build_holds(records):
    """Holds per lock, from records ordered per client by t_ns."""
    holds = {}  # (client, session, lock, token) -> Hold
    per_lock = collections.defaultdict(list)
    for r in sorted(records, key=lambda x: x["t_ns"]):
        op = r["op"]
        if op == "acquire":
            H.need(r, "client", "lock", "status", "token")
            if r["status"] in H.GRANTED:
                h = Hold(r)
                holds[(r["client"], r.get("session"), r["lock"], r["token"])] = h
                per_lock[r["lock"]].append(h)
            continue
        if op not in ("write", "check", "release"):
            continue
        H.need(r, "client", "lock", "token", "status")
        h = holds.get((r["client"], r.get("session"), r["lock"], r["token"]))
        if h is None:
            continue  # not a claim on a hold we saw (e.g. a release of token 0)
        if op == "write":
            H.need(r, "result")
            h.claims.append((r["t_ns"], "write-" + r["result"], r))
        elif r["status"] == "RDLM_OK":
            h.claims.append((r["t_ns"], op + "-ok", r))
    return per_lock


def check_lock(lock, holds, t0, report, warn):
    """Claims of each hold after the next hold (its successor) acquired."""
    problems = []
    holds = sorted(holds, key=lambda h: h.start)
    excused = 0
    for a, b in zip(holds, holds[1:]):
        late = [c for c in a.claims if c[0] > b.start]
        for t, kind, rec in late:
            what = "%s at %s (%s)" % (kind, H.t_str(t, t0), rec["_src"])
            if kind in REASONS:
                problems.append("lock %s: %s still claimed it by %s after %s acquired "
                                "it: %s" % (lock, a.name(t0), what, b.name(t0),
                                            REASONS[kind]))
            elif kind == "write-stale":
                excused += 1
                report("lock %s: late write by %s rejected by the store: %s, after %s"
                       % (lock, a.client, what, b.name(t0)))
            else:
                warn("lock %s: late write by %s with no answer: %s, after %s" %
                     (lock, a.client, what, b.name(t0)))
        if late and b.acq["status"] != "RDLM_OWNER_DEAD":
            problems.append("lock %s: %s acquired it with %s while %s had not released "
                            "it and its lease was not broken (claim at %s)" %
                            (lock, b.name(t0), b.acq["status"], a.name(t0),
                             H.t_str(late[0][0], t0)))
    return problems, excused


def check_lost_sessions(records, t0):
    """No call started after a session's lease_lost returns success."""
    problems = []
    lost = {}
    for r in sorted(records, key=lambda x: x["t_ns"]):
        key = (r.get("client"), r.get("session"))
        if r["op"] == "lease_lost":
            lost.setdefault(key, r)
            continue
        if key not in lost or r["op"] not in ("acquire", "check", "release"):
            continue
        started = r.get("t_call_ns", r["t_ns"])
        if r.get("status") in H.GRANTED and started > lost[key]["t_ns"]:
            problems.append("%s: %s returned %s on session %s after its lease was lost at "
                            "%s (%s)" % (r["_src"], r["op"], r["status"], key[1],
                                         H.t_str(lost[key]["t_ns"], t0),
                                         lost[key]["_src"]))
    return problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workers", nargs="+", help="lease_worker --history files")
    ap.add_argument("--quiet", action="store_true", help="only the summary")
    args = ap.parse_args(argv)
    report = (lambda s: None) if args.quiet else (lambda s: print("  " + s))
    warnings = []
    try:
        records = H.load(args.workers)
        t0 = min((r["t_ns"] for r in records), default=0)
        per_lock = build_holds(records)
        problems = []
        excused = 0
        for lock in sorted(per_lock):
            p, e = check_lock(lock, per_lock[lock], t0, report, warnings.append)
            problems += p
            excused += e
        grant_recs = H.grants(records)
        problems += H.check_grant_tokens(grant_recs, t0)
        problems += check_lost_sessions(records, t0)
    except (H.HistoryError, OSError) as e:
        return H.unreadable("check_locks", e)
    for w in warnings:
        print("  warning: " + w)
    nholds = sum(len(v) for v in per_lock.values())
    broken = sum(1 for g in grant_recs if g["status"] == "RDLM_OWNER_DEAD")
    summary = ("%d holds on %d locks (%d after a broken lease), %d late writes rejected"
               % (nholds, len(per_lock), broken, excused))
    return H.verdict("check_locks", problems, summary,
                     "no overlapping holders, tokens increasing in acquire order, no "
                     "success after a lost lease")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
