#!/usr/bin/env python3
"""The cluster checkers against planted histories (ctest cluster.checkers).

Each directory under histories/ is one run: store.jsonl (fenced_store's decisions)
and w*.jsonl (lease_worker records). good_* runs must pass both checkers; every bad_*
run must be rejected by the checker named in CASES, with a message naming the
planted fault, so a checker that passes everything fails this test.
"""
import glob
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HIST = os.path.join(HERE, "histories")

# case -> {checker: (exit code, text the output must contain)}; "fencing" runs
# check_fencing.py --store store.jsonl w*.jsonl, "fencing-store" the store alone,
# "locks" check_locks.py w*.jsonl.
PASS = (0, "PASS")
CASES = {
    "good_alternating": {"fencing": PASS, "fencing-store": PASS, "locks": PASS},
    "good_killed_holder": {"fencing": PASS, "locks": PASS},
    "good_stopped_holder": {"fencing": (0, "1 stale writes rejected"),
                            "locks": (0, "1 late writes rejected")},
    "good_two_locks": {"fencing": PASS, "locks": PASS},
    "bad_overlap_release": {"locks": (1, "the authority let both hold the lock")},
    "bad_overlap_check": {"locks": (1, "lease outlived its expiry")},
    "bad_no_owner_dead": {"locks": (1, "its lease was not broken"),
                          "fencing": PASS},
    "bad_token_backwards": {"fencing": (1, "token went backwards"),
                            "locks": (1, "token went backwards")},
    "bad_duplicate_token": {"fencing": (1, "duplicate token"),
                            "locks": (1, "duplicate token")},
    "bad_stale_accepted": {"fencing": (1, "stale write ACCEPTED"),
                           "fencing-store": (1, "stale write ACCEPTED"),
                           "locks": (1, "accepted the earlier holder's late write")},
    "bad_rejected_not_stale": {"fencing-store": (1, "REJECTED though not stale")},
    "bad_success_after_lost": {"locks": (1, "after its lease was lost")},
    "bad_forged_token": {"fencing": (1, "never granted to it")},
    "bad_worker_store_disagree": {"fencing": (1, "the store has no such decision")},
    "bad_malformed": {"fencing": (1, "malformed history"),
                      "locks": (1, "malformed history")},
}


def run(checker, case, extra=()):
    d = os.path.join(HIST, case)
    workers = sorted(glob.glob(os.path.join(d, "w*.jsonl")))
    store = os.path.join(d, "store.jsonl")
    if checker == "fencing":
        args = ["check_fencing.py", "--store", store] + workers
    elif checker == "fencing-store":
        args = ["check_fencing.py", "--store", store]
    else:
        args = ["check_locks.py"] + workers
    p = subprocess.run([sys.executable, os.path.join(HERE, args[0])] + args[1:] +
                       list(extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    return p.returncode, p.stdout


class CheckerTest(unittest.TestCase):
    def test_every_case_directory_is_listed(self):
        self.assertEqual(sorted(os.listdir(HIST)), sorted(CASES))

    def test_cases(self):
        for case, expect in CASES.items():
            for checker, (rc, text) in expect.items():
                with self.subTest(case=case, checker=checker):
                    got, out = run(checker, case)
                    self.assertEqual(got, rc, out)
                    self.assertIn(text, out)
                    if rc == 1 and "malformed" not in text:
                        self.assertIn("VIOLATION", out)

    def test_min_rejected(self):
        # The killed-holder run reached the store with no late write: a scenario that
        # expects one must fail; the stopped-holder run has exactly one.
        rc, out = run("fencing", "good_killed_holder", ["--min-rejected", "1"])
        self.assertEqual(rc, 1, out)
        self.assertIn("expected at least 1", out)
        rc, out = run("fencing", "good_stopped_holder", ["--min-rejected", "1"])
        self.assertEqual(rc, 0, out)

    def test_stale_write_report_names_who_and_when(self):
        rc, out = run("fencing", "good_stopped_holder")
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"stale write rejected: key L token \d+ \(epoch 1 seq 1\) "
                              r"from w1 at t=6\.000s .* lost to token \d+ \(epoch 1 seq 2\)"
                              r" from w2")

    def test_missing_file(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "check_locks.py"),
                            os.path.join(HIST, "no-such-file")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 1, p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
