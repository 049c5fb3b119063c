-- retry: set when messages become visible again (RSMQ
-- changeMessageVisibility, for many at once, with the time read here):
-- Retry and ChangeVisibility, for a retry as for a lease renewal. Each
-- message is named by a bare id or by a receipt (id, receive count and
-- first receive time of one delivery); by a receipt it changes only while
-- the receipt names the message's latest delivery.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV[1] ms from now, ARGV[2] realtime channel
-- ARGV[3..] triples id, rc, fr; rc and fr are "" for a bare id
-- KEYS[4], optional: <ns>:<q>:T:<token> (STRING), the record of a retry
--   made with a client-chosen token; ARGV[3] is then its lifetime in ms and
--   the triples start at ARGV[4]. When it exists the retry was applied
--   already: its answer is returned and nothing is written, so a repeat
--   after a lost reply reports the first call's statuses and time.
-- Returns {"notfound"} when the queue does not exist, else {"ok",
-- visible-at ms, s1, s2, ...}, one status per triple: "retried",
-- "missing" (not in the queue) or "stale" (the receipt names an earlier
-- delivery: the message was received again since, and stays as it is).
-- Every message is checked before the first write.
local record = KEYS[4]
local first = 3
if record then
  first = 4
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call("GET", record)
  if r then
    return cjson.decode(r)
  end
end
if not attributes(KEYS[2]) then
  return {"notfound"}
end
-- A wrong-type index would fail after the first write: check it first.
local e = wrongtype(KEYS[3], "zset", "zset", ": nothing written")
if e then
  return e
end
local now = clock()
local visible = now + tonumber(ARGV[1])
local vstr = string.format("%.0f", visible)
local res = {"ok", vstr}
local old = {}
for i = first, #ARGV, 3 do
  local id = ARGV[i]
  local status = "retried"
  local score = redis.call("ZSCORE", KEYS[1], id)
  if not score then
    status = "missing"
  elseif ARGV[i + 1] ~= "" and not current(KEYS[2], id, ARGV[i + 1], ARGV[i + 2]) then
    status = "stale"
  end
  res[#res + 1] = status
  old[#old + 1] = score
end
if not allowed({"ZADD", KEYS[1], "0", "x"}, {"ZADD", KEYS[3], "0", "x"}) then
  return redis.error_reply("NOPERM this user may not change visibility in " .. KEYS[1] .. " (ZADD): nothing written")
end
if record and not allowed({"SET", record, "x", "PX", "1"}) then
  return redis.error_reply("NOPERM this user may not SET " .. record .. " (the record of a retry with a token): nothing written")
end
local sooner = false
for k = 1, #old do
  if res[k + 2] == "retried" then
    local id = ARGV[first + 3 * (k - 1)]
    redis.call("ZADD", KEYS[1], vstr, id)
    if redis.call("HEXISTS", KEYS[2], id .. ":rc") == 1 then
      redis.call("ZADD", KEYS[3], vstr, id)
    end
    -- A score Lua cannot read as a number ("1e+300" in some Lua builds)
    -- must not fail the script after its writes: wake the receivers then.
    local o = tonumber(old[k])
    if not o or visible < o then
      sooner = true
    end
  end
end
-- A waiting receive sleeps until the earliest visible-at it saw: wake it
-- when a message becomes due sooner than before (a lease renewal does not).
-- Best-effort, as push's: a user without the channel must not fail a
-- retry whose writes are done.
if sooner then
  redis.pcall("PUBLISH", ARGV[2], redis.call("ZCARD", KEYS[1]))
end
if record then
  redis.call("SET", record, cjson.encode(res), "PX", ARGV[3])
end
return res
