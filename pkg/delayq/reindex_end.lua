-- reindex_end: finish an index rebuild. The index is complete when nobody
-- but chatq received from the queue during the rebuild (rscan, kept in
-- step by chatq's receives, still equals totalrecv): then "rsync" marks it
-- complete. Otherwise it stays incomplete (stats say the split may be off).
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- Returns 1 when complete, 0 when not.
local a = redis.call("HMGET", attrs, "rscan", "totalrecv")
if not a[1] then
  return 0
end
if not allowed({"HDEL", attrs, "x"}, {"HSET", attrs, "x", "x"}) then
  return redis.error_reply("NOPERM this user may not HDEL and HSET " .. attrs .. ": nothing written")
end
redis.call("HDEL", attrs, "rscan")
if a[1] == (a[2] or "0") then
  redis.call("HSET", attrs, "rsync", a[1])
  return 1
end
return 0
