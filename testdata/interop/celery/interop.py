"""chatq's interop driver for Celery on Redis (Debian's python3-celery).

    interop.py send QUEUE LABEL [countdown=S] [priority=P] [task=rec|block]
        sends one task with Celery's apply_async; prints {"id": ...}
    interop.py counts QUEUE...
        prints, per queue, what kombu's own calls report: ready (the
        channel's _size, the LLENs of the queue's priority lists as
        `celery amqp`/inspect use it), and, from the unacked hash read with
        the channel's (prefixed) client as restore_visible reads it, the
        queue's unacked messages split by ETA: delayed (eta ahead) and
        inflight; plus every unacked delivery tag's task id.

Configuration from the environment: see celeryapp.py."""
import json
import sys
from datetime import datetime, timezone

from kombu.utils.json import loads

from celeryapp import app, block, rec


def send(args):
    queue, label = args[0], args[1]
    opts = dict(a.split("=", 1) for a in args[2:])
    task = block if opts.pop("task", "rec") == "block" else rec
    kw = {"queue": queue}
    if "countdown" in opts:
        kw["countdown"] = int(opts["countdown"])
    if "priority" in opts:
        kw["priority"] = int(opts["priority"])
    r = task.apply_async((label,), **kw)
    print(json.dumps({"id": r.id}))


def counts(queues):
    out = {}
    now = datetime.now(timezone.utc)
    with app.connection_for_write() as conn:
        ch = conn.default_channel
        client = ch.client
        unacked = []
        for tag, _ in client.zrevrangebyscore(ch.unacked_index_key, "+inf", 0, withscores=True):
            raw = client.hget(ch.unacked_key, tag)
            if raw is None:
                continue
            msg, exchange, routing_key = loads(raw)
            dest = ch._lookup(exchange, routing_key)
            eta = msg["headers"].get("eta")
            delayed = bool(eta) and datetime.fromisoformat(eta) > now
            unacked.append((dest, delayed, msg["headers"]["id"]))
        for q in queues:
            mine = [u for u in unacked if u[0] == [q]]
            out[q] = {
                "ready": ch._size(q),
                "delayed": sum(1 for u in mine if u[1]),
                "inflight": sum(1 for u in mine if not u[1]),
                "unacked_ids": sorted(u[2] for u in mine),
            }
    print(json.dumps(out))


if __name__ == "__main__":
    {"send": send, "counts": counts}[sys.argv[1]](sys.argv[2:])
