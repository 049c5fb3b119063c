-- retry: make a message visible again after a delay (RSMQ
-- changeMessageVisibility, with the time read here).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV[1] id, ARGV[2] delay ms, ARGV[3] realtime channel
-- Returns {"ok", visible-at ms}, {"nomessage"} or {"notfound"}.
-- Redis 3.2 to 4 replicate scripts verbatim and refuse writes after TIME
-- unless told to replicate effects (the default since Redis 5).
if redis.replicate_commands then
  redis.replicate_commands()
end
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
if not redis.call("ZSCORE", KEYS[1], ARGV[1]) then
  return {"nomessage"}
end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local visible = string.format("%.0f", now + tonumber(ARGV[2]))
redis.call("ZADD", KEYS[1], visible, ARGV[1])
if redis.call("HEXISTS", KEYS[2], ARGV[1] .. ":rc") == 1 then
  redis.call("ZADD", KEYS[3], visible, ARGV[1])
end
-- Best-effort, as push's: a user without the channel must not fail a
-- retry whose writes are done.
redis.pcall("PUBLISH", ARGV[3], redis.call("ZCARD", KEYS[1]))
return {"ok", visible}
