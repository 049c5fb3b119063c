-- stats: a queue's attributes and its messages split into ready, delayed
-- (never received, not yet due) and in flight (received, still invisible),
-- read at one instant of server time. Read only, O(log n): ready from the
-- queue's ZSET, in flight from chatq's index of received messages (index,
-- id -> visible-at, kept by every chatq script that changes a received
-- message), which is trusted only while its "rsync" field equals totalrecv
-- (rsmq's receives bump totalrecv but not rsync; see docs/queue.md).
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- Returns {"ok", now ms, vt, delay, maxsize, totalrecv, totalsent, created,
-- modified, maxreceives, deadletter, msgs, ready, hidden, in flight by the
-- index, next visible-at ms or "", 1 if the index is complete else 0,
-- the oldest ready message's id and visible-at ms (both "" when none is
-- ready), totaldead (messages moved to the dead-letter queue)} or
-- {"notfound"}.
local a = attributes(attrs, "totalrecv", "totalsent", "created", "modified", "maxreceives", "deadletter",
  "rsync", "rscan", "totaldead")
if not a then
  return {"notfound"}
end
local _, nowstr = clock()
local msgs = redis.call("ZCARD", queue)
local ready = redis.call("ZCOUNT", queue, "-inf", nowstr)
local inflight = redis.call("ZCOUNT", index, "(" .. nowstr, "+inf")
local complete = 0
if a[10] and not a[11] and a[10] == (a[4] or "0") and redis.call("ZCARD", index) <= msgs then
  complete = 1
end
local next = ""
local first = redis.call("ZRANGEBYSCORE", queue, "(" .. nowstr, "+inf", "WITHSCORES", "LIMIT", 0, 1)
if #first > 0 then
  next = first[2]
end
-- The oldest ready message: the lowest score, when some message is ready
-- (every message scored at or before now is, so the lowest one is): the
-- one that has waited longest to be received. O(log n).
local oldest, oldestAt = "", ""
if ready > 0 then
  local low = redis.call("ZRANGE", queue, 0, 0, "WITHSCORES")
  if #low > 0 then
    oldest, oldestAt = low[1], low[2]
  end
end
return {"ok", nowstr, a[1], a[2], a[3], a[4] or "0", a[5] or "0", a[6] or "0", a[7] or "0",
  a[8] or "", a[9] or "", msgs, ready, msgs - ready, inflight, next, complete, oldest, oldestAt,
  a[12] or "0"}
