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
-- A wrong-type index would fail after the first write: check it first.
local ty = redis.call("TYPE", KEYS[3])
ty = ty.ok or ty
if ty ~= "zset" and ty ~= "none" then
  return redis.error_reply("WRONGTYPE " .. KEYS[3] .. " is a " .. ty .. ", not a zset: nothing written")
end
local res = {"ok"}
for _, id in ipairs(ARGV) do
  -- Missing only when nothing of it was there: deleting a body left
  -- without its ZSET entry is an ack that did something.
  local z = redis.call("ZREM", KEYS[1], id)
  local h = redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
  local r = redis.call("ZREM", KEYS[3], id)
  if z == 0 and h == 0 and r == 0 then
    res[#res + 1] = id
  end
end
return res
