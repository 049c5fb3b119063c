-- ack: delete received messages (RSMQ deleteMessage, for many ids at once).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV: message ids
-- Returns {"ok", missing id, ...} (the ids that were not in the queue) or
-- {"notfound"} when the queue does not exist.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize")
if not a[1] or not a[2] or not a[3] then
  return {"notfound"}
end
local res = {"ok"}
for _, id in ipairs(ARGV) do
  if redis.call("ZREM", KEYS[1], id) == 0 then
    res[#res + 1] = id
  end
  redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
  redis.call("ZREM", KEYS[3], id)
end
return res
