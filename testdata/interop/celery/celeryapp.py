"""The Celery app of chatq's interop test: its broker is the test's Redis
(CELERY_TEST_URL), under kombu's global_keyprefix CELERY_TEST_PREFIX when
set. Tasks record what they ran in CELERY_TEST_DIR/ran.txt."""
import os
import time

from celery import Celery

app = Celery("chatq_interop", broker=os.environ["CELERY_TEST_URL"])
options = {
    # Large, so that only chatq restores unacked messages in the test (a
    # worker restores what is older at start and every few seconds).
    "visibility_timeout": int(os.environ.get("CELERY_TEST_VISIBILITY", "3600")),
}
if os.environ.get("CELERY_TEST_PREFIX"):
    options["global_keyprefix"] = os.environ["CELERY_TEST_PREFIX"]
app.conf.broker_transport_options = options
app.conf.task_default_queue = "celery"
app.conf.worker_prefetch_multiplier = 4
app.conf.task_acks_late = False

OUT = os.environ.get("CELERY_TEST_DIR", ".")


def _record(path, line):
    with open(os.path.join(OUT, path), "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


@app.task(name="chatq.rec", bind=True)
def rec(self, label):
    """Records that it ran (its id, label and whether redelivered)."""
    _record("ran.txt", "%s %s %s" % (self.request.id, label,
                                     bool((self.request.delivery_info or {}).get("redelivered"))))
    return label


@app.task(name="chatq.block", bind=True)
def block(self, label):
    """Records that it started, then holds the worker until the test
    creates CELERY_TEST_DIR/release (at most 120 s)."""
    _record("started.txt", "%s %s" % (self.request.id, label))
    deadline = time.time() + 120
    while not os.path.exists(os.path.join(OUT, "release")) and time.time() < deadline:
        time.sleep(0.05)
    _record("ran.txt", "%s %s %s" % (self.request.id, label,
                                     bool((self.request.delivery_info or {}).get("redelivered"))))
    return label
