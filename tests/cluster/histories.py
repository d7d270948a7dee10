"""Reading the cluster tests' JSON-lines histories, and the checkers' verdict lines
(used by check_fencing.py and check_locks.py; Python 3 standard library only).

Two kinds of history:
  worker  lease_worker's records (tests/cluster/worker_log.h): t_ns, client, session,
          op in {open, epoch, started, acquire, write, check, parked, resumed,
          release, lease_lost, close, ...}, plus lock/key/token/status/result.
  store   fenced_store's decisions (examples/fenced_store/store.h): t_ns, op "write",
          key, token, client, result "ok"|"stale", max.
All t_ns are CLOCK_MONOTONIC on one machine, so they compare across files.
"""
import json

GRANTED = ("RDLM_OK", "RDLM_OWNER_DEAD")


class HistoryError(Exception):
    """A history line that is not a JSON object with the required fields."""


def load(paths, required=("t_ns", "op")):
    """All records of the files, each with "_src" = "file:line"; in file order."""
    records = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = "%s:%d" % (path, n)
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    raise HistoryError("%s: not JSON (%s): %.80s" % (where, e, line))
                if not isinstance(rec, dict):
                    raise HistoryError("%s: not a JSON object" % where)
                for field in required:
                    if field not in rec:
                        raise HistoryError("%s: no \"%s\" field" % (where, field))
                if not isinstance(rec["t_ns"], int):
                    raise HistoryError("%s: t_ns is not an integer" % where)
                rec["_src"] = where
                records.append(rec)
    return records


def need(rec, *fields):
    """Raise HistoryError unless rec has every field."""
    for field in fields:
        if field not in rec:
            raise HistoryError("%s: op %s has no \"%s\" field" %
                               (rec["_src"], rec.get("op"), field))


def grants(worker_records):
    """Successful acquires (status RDLM_OK or RDLM_OWNER_DEAD), sorted by t_ns."""
    out = []
    for r in worker_records:
        if r["op"] == "acquire":
            need(r, "client", "lock", "status", "token")
            if r["status"] in GRANTED:
                out.append(r)
    return sorted(out, key=lambda r: r["t_ns"])


def token_str(token):
    """A token as epoch:seq (token = epoch << 40 | seq)."""
    return "%d (epoch %d seq %d)" % (token, token >> 40, token & ((1 << 40) - 1))


def t_str(t_ns, t0):
    """t_ns as seconds since the first record of the run."""
    return "t=%.3fs" % ((t_ns - t0) / 1e9)


def check_grant_tokens(grant_records, t0):
    """Tokens granted are unique (over all locks) and strictly increase per lock in
    the order the acquires returned. Returns a list of violation strings."""
    problems = []
    first = {}
    last = {}
    for g in grant_records:
        tok, lock = g["token"], g["lock"]
        if tok in first:
            f = first[tok]
            problems.append(
                "duplicate token %s: granted to %s (lock %s, %s, %s) and to %s "
                "(lock %s, %s, %s)" % (token_str(tok), f["client"], f["lock"],
                                       t_str(f["t_ns"], t0), f["_src"], g["client"],
                                       lock, t_str(g["t_ns"], t0), g["_src"]))
        else:
            first[tok] = g
        prev = last.get(lock)
        if prev is not None and tok < prev["token"]:  # equal: a duplicate, above
            problems.append(
                "token went backwards on lock %s: %s got %s at %s (%s) after %s got %s "
                "at %s (%s)" % (lock, g["client"], token_str(tok), t_str(g["t_ns"], t0),
                                g["_src"], prev["client"], token_str(prev["token"]),
                                t_str(prev["t_ns"], t0), prev["_src"]))
        last[lock] = g
    return problems


def unreadable(checker, e):
    """A checker's verdict on histories it could not read (e: a HistoryError or an
    OSError): one FAIL line; returns its exit status, 1."""
    if isinstance(e, HistoryError):
        print("%s: FAIL: malformed history: %s" % (checker, e))
    else:
        print("%s: FAIL: %s" % (checker, e))
    return 1


def verdict(checker, problems, summary, passed):
    """A checker's last lines: every problem, then FAIL with their count, or PASS with
    what passed. Returns the exit status (1 or 0)."""
    for p in problems:
        print("  VIOLATION: " + p)
    if problems:
        print("%s: FAIL: %d violations; %s" % (checker, len(problems), summary))
        return 1
    print("%s: PASS: %s; %s" % (checker, summary, passed))
    return 0
