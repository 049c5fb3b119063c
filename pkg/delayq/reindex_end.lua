-- reindex_end: finish an index rebuild. The index is complete when nobody
-- but chatq received from the queue during the rebuild (rscan, kept in
-- step by chatq's receives, still equals totalrecv): then "rsync" marks it
-- complete. Otherwise it stays incomplete (stats say the split may be off).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- Returns 1 when complete, 0 when not.
local a = redis.call("HMGET", KEYS[2], "rscan", "totalrecv")
if not a[1] then
  return 0
end
if not allowed({"HDEL", KEYS[2], "x"}, {"HSET", KEYS[2], "x", "x"}) then
  return redis.error_reply("NOPERM this user may not HDEL and HSET " .. KEYS[2] .. ": nothing written")
end
redis.call("HDEL", KEYS[2], "rscan")
if a[1] == (a[2] or "0") then
  redis.call("HSET", KEYS[2], "rsync", a[1])
  return 1
end
return 0
