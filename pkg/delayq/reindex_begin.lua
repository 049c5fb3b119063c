-- reindex_begin: start rebuilding chatq's index of received messages
-- (index) for a queue whose index is not complete (rsmq clients received
-- from it, or rsmq created it). The old index is dropped with UNLINK (freed
-- in the background); chatq's receives keep adding to the new one while
-- reindex_step walks the queue. "rscan" holds totalrecv as of now, kept in
-- step by chatq's receives, so reindex_end can tell whether another client
-- received meanwhile.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- Returns 1, or 0 when the queue does not exist.
local a = attributes(attrs, "totalrecv")
if not a then
  return 0
end
local e = wrongtype(queue, "zset", "sorted set") or wrongtype(index, "zset", "sorted set")
if e then
  return e
end
if not allowed({"UNLINK", index}, {"HSET", attrs, "rscan", "0"}, {"HDEL", attrs, "x"}, {"ZADD", index, "0", "x"}) then
  return redis.error_reply("NOPERM this user may not rebuild " .. index)
end
redis.call("UNLINK", index)
redis.call("HDEL", attrs, "rsync")
redis.call("HSET", attrs, "rscan", a[4] or "0")
return 1
