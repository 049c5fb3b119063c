"""chatq's RQ interop driver: fills every state of queue "work" with RQ's
own API and worker, and reports what RQ's API says. Usage:
  interop.py URL fill         -> JSON {"ids": {state: [ids]}}
  interop.py URL counts       -> JSON of Queue.count and registry counts
  interop.py URL status ID... -> JSON {id: {"status", "in": [registries]}}
  interop.py URL burst        -> runs `rq worker --burst` on "work"
Run with /usr/bin/python3, RQ_INTEROP_DIR set (see rqjobs.py)."""
import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

from redis import Redis
from rq import Queue
from rq.job import Job
from rq.exceptions import NoSuchJobError

HERE = os.path.dirname(os.path.abspath(__file__))
url, cmd = sys.argv[1], sys.argv[2]
conn = Redis.from_url(url)
q = Queue("work", connection=conn)
env = dict(os.environ, PYTHONPATH=HERE)


def worker(burst):
    args = [sys.executable, "-m", "rq.cli", "worker", "--url", url, "--disable-job-desc-logging"]
    if burst:
        args.append("--burst")
    return subprocess.Popen(args + ["work"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait(pred, what, secs=60):
    end = time.time() + secs
    while time.time() < end:
        if pred():
            return
        time.sleep(0.05)
    raise SystemExit("timed out waiting for " + what)


sys.path.insert(0, HERE)
import rqjobs  # noqa: E402

regs = {
    "scheduled": q.scheduled_job_registry, "started": q.started_job_registry,
    "failed": q.failed_job_registry, "finished": q.finished_job_registry,
    "deferred": q.deferred_job_registry, "canceled": q.canceled_job_registry,
}

if cmd == "fill":
    ids = {}
    # started, then abandoned: its worker (and work horse) SIGKILLed.
    blk = q.enqueue(rqjobs.work, "block", job_timeout=3)
    w = worker(False)
    wait(lambda: blk.get_status(refresh=True) == "started", "the block job to start")
    # RQ's work horse is a forked child in a session of its own: kill it
    # first (its own timeout would fail the job), then the worker.
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == w.pid:
            os.kill(int(pid), signal.SIGKILL)
    os.killpg(w.pid, signal.SIGKILL)
    w.wait()
    ids["started"] = [blk.id]
    fin = [q.enqueue(rqjobs.work, "ok").id for _ in range(2)]
    fail = [q.enqueue(rqjobs.work, "fail").id for _ in range(3)]
    worker(True).wait()
    ids["finished"], ids["failed"] = fin, fail
    ready = [q.enqueue(rqjobs.work, "ok").id for _ in range(3)]
    ids["ready"] = ready
    ids["scheduled"] = [q.enqueue_in(timedelta(hours=1), rqjobs.work, "ok").id for _ in range(2)]
    ids["deferred"] = [q.enqueue(rqjobs.work, "ok", depends_on=ready[0]).id]
    print(json.dumps({"ids": ids}))
elif cmd == "counts":
    out = {"queue": q.count}
    for name, r in regs.items():
        out[name] = r.count
    print(json.dumps(out))
elif cmd == "status":
    out = {}
    for jid in sys.argv[3:]:
        try:
            st = Job.fetch(jid, connection=conn).get_status()
        except NoSuchJobError:
            st = None
        where = [n for n, r in regs.items() if conn.zscore(r.key, jid) is not None]
        if jid.encode() in conn.lrange(q.key, 0, -1):
            where.append("queue")
        out[jid] = {"status": st, "in": where}
    print(json.dumps(out))
elif cmd == "burst":
    open(os.path.join(os.environ["RQ_INTEROP_DIR"], "ok"), "w").close()
    worker(True).wait()
else:
    raise SystemExit("unknown command " + cmd)
