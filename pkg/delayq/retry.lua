-- KEYS[1] queue  <ns>:<q>  ZSET  id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  attributes, id -> body, <id>:rc, <id>:fr
-- KEYS[3] index  <ns>:<q>:R  ZSET  id -> visible-at ms of the received messages (chatq's, for stats)
-- KEYS[4..14] records  <ns>:<q>:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
local records = KEYS[4] and 4 -- the first record key, when the retry has a token
-- retry: set when messages become visible again (RSMQ
-- changeMessageVisibility, for many at once, with the time read here):
-- Retry and ChangeVisibility, for a retry as for a lease renewal. Each
-- message is named by a bare id or by a receipt (id, receive count and
-- first receive time of one delivery); by a receipt it changes only while
-- the receipt names the message's latest delivery.
-- ARGV[1] ms from now, ARGV[2] realtime channel
-- ARGV[3..] triples id, rc, fr; rc and fr are "" for a bare id
-- With a client-chosen token, the records (luascript.Record) are passed,
--   ARGV[3] is their lifetime in ms, ARGV[4] the record's field (the token,
--   or <token>.<n> for the n-th call of a retry of more than 100), and the
--   triples start at ARGV[5]. When the field is recorded the retry was
--   applied already: its answer is returned and nothing is written, so a
--   repeat after a lost reply reports the first call's statuses and time.
-- Returns {"notfound"} when the queue does not exist, else {"ok",
-- visible-at ms, s1, s2, ...}, one status per triple: "retried",
-- "missing" (not in the queue) or "stale" (the receipt names an earlier
-- delivery: the message was received again since, and stays as it is).
-- Every message is checked before the first write.
local first = 3
if records then
  first = 5
  local r = recordOf(records, ARGV[4], #KEYS)
  if r then
    return cjson.decode(r)
  end
end
if not attributes(attrs) then
  return {"notfound"}
end
-- A wrong-type index would fail after the first write: check it first.
local e = wrongtype(index, "zset", "zset", ": nothing written")
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
  local score = redis.call("ZSCORE", queue, id)
  if not score then
    status = "missing"
  elseif ARGV[i + 1] ~= "" and not current(attrs, id, ARGV[i + 1], ARGV[i + 2]) then
    status = "stale"
  end
  res[#res + 1] = status
  old[#old + 1] = score
end
if not allowed({"ZADD", queue, "0", "x"}, {"ZADD", index, "0", "x"}) then
  return redis.error_reply("NOPERM this user may not change visibility in " .. queue .. " (ZADD): nothing written")
end
if records and not mayRecord(records) then
  return redis.error_reply("NOPERM this user may not HSET and PEXPIRE " .. KEYS[records] .. " (the record of a retry with a token): nothing written")
end
local sooner = false
for k = 1, #old do
  if res[k + 2] == "retried" then
    local id = ARGV[first + 3 * (k - 1)]
    redis.call("ZADD", queue, vstr, id)
    if redis.call("HEXISTS", attrs, id .. ":rc") == 1 then
      redis.call("ZADD", index, vstr, id)
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
  redis.pcall("PUBLISH", ARGV[2], redis.call("ZCARD", queue))
end
if records then
  writeRecord(records, ARGV[4], cjson.encode(res), ARGV[3])
end
return res
