-- reindex_begin: start rebuilding chatq's index of received messages
-- (KEYS[3]) for a queue whose index is not complete (rsmq clients received
-- from it, or rsmq created it). The old index is dropped with UNLINK (freed
-- in the background); chatq's receives keep adding to the new one while
-- reindex_step walks the queue. "rscan" holds totalrecv as of now, kept in
-- step by chatq's receives, so reindex_end can tell whether another client
-- received meanwhile.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- Returns 1, or 0 when the queue does not exist.
local a = attributes(KEYS[2], "totalrecv")
if not a then
  return 0
end
local e = wrongtype(KEYS[1], "zset", "sorted set") or wrongtype(KEYS[3], "zset", "sorted set")
if e then
  return e
end
if not allowed({"UNLINK", KEYS[3]}, {"HSET", KEYS[2], "rscan", "0"}, {"ZADD", KEYS[3], "0", "x"}) then
  return redis.error_reply("NOPERM this user may not rebuild " .. KEYS[3])
end
redis.call("UNLINK", KEYS[3])
redis.call("HDEL", KEYS[2], "rsync")
redis.call("HSET", KEYS[2], "rscan", a[4] or "0")
return 1
