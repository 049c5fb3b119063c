-- retry: set when a message becomes visible again (RSMQ
-- changeMessageVisibility, with the time read here): ChangeVisibility, for
-- a retry as for a lease renewal. With a receipt it changes the message
-- only while the receipt names its latest delivery.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV[1] id, ARGV[2] rc and ARGV[3] fr of the receipt ("" for a bare id),
-- ARGV[4] ms from now, ARGV[5] realtime channel
-- Returns {"ok", visible-at ms}, {"nomessage"}, {"stale"} or {"notfound"}.
if not attributes(KEYS[2]) then
  return {"notfound"}
end
-- A wrong-type index would fail after the first write: check it first.
local e = wrongtype(KEYS[3], "zset", "zset", ": nothing written")
if e then
  return e
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
local now = clock()
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
