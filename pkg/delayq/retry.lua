-- retry: set when a message becomes visible again (RSMQ
-- changeMessageVisibility, with the time read here). Retry, ChangeVisibility
-- and Extend (a lease renewal) all run it. With a receipt it changes the
-- message only while the receipt names its latest delivery.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV[1] id, ARGV[2] rc and ARGV[3] fr of the receipt ("" for a bare id),
-- ARGV[4] ms from now, ARGV[5] realtime channel
-- Returns {"ok", visible-at ms}, {"nomessage"}, {"stale"} or {"notfound"}.
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
local old = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not old then
  return {"nomessage"}
end
if ARGV[2] ~= "" then
  local m = redis.call("HMGET", KEYS[2], ARGV[1] .. ":rc", ARGV[1] .. ":fr")
  if tonumber(m[1] or "") ~= tonumber(ARGV[2]) or tonumber(m[2] or "") ~= tonumber(ARGV[3]) then
    return {"stale"}
  end
end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local visible = now + tonumber(ARGV[4])
local vstr = string.format("%.0f", visible)
redis.call("ZADD", KEYS[1], vstr, ARGV[1])
if redis.call("HEXISTS", KEYS[2], ARGV[1] .. ":rc") == 1 then
  redis.call("ZADD", KEYS[3], vstr, ARGV[1])
end
-- A waiting receive sleeps until the earliest visible-at it saw: wake it
-- when a message becomes due sooner than before (a lease renewal does not).
-- Best-effort, as push's: a user without the channel must not fail a
-- retry whose writes are done.
-- A score Lua cannot read as a number ("1e+300" in some Lua builds) must not
-- fail the script after its writes: wake the receivers then too.
local o = tonumber(old)
if not o or visible < o then
  redis.pcall("PUBLISH", ARGV[5], redis.call("ZCARD", KEYS[1]))
end
return {"ok", vstr}
