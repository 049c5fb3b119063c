"""Job functions for chatq's RQ interop test (imported by RQ's worker)."""
import os
import time

from rq import get_current_job


def _dir():
    return os.environ["RQ_INTEROP_DIR"]


def work(kind):
    """Fails (kind "fail") or blocks (kind "block") until the file "ok"
    exists in RQ_INTEROP_DIR; then appends its id to "ran"."""
    ok = os.path.exists(os.path.join(_dir(), "ok"))
    if kind == "fail" and not ok:
        raise ValueError("boom: told to fail")
    if kind == "block" and not ok:
        time.sleep(600)
    with open(os.path.join(_dir(), "ran"), "a") as f:
        f.write(get_current_job().id + "\n")
