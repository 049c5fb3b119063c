-- KEYS[1] queue  <ns>:<q>  ZSET  id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  attributes, id -> body, totalsent
-- KEYS[3..13] records  <ns>:<q>:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local queue, attrs = KEYS[1], KEYS[2]
local records = KEYS[3] and 3 -- the first record key, when the batch has a token
-- pushmany: store up to 100 messages and schedule them, in order, in one
-- atomic call (RSMQ sendMessage, many times over).
-- ARGV[1] realtime channel <ns>:rt:<q>
-- ARGV[2..] five per message: 22 id characters (the client's: a sortable
-- index, then random), "at" | "delay" | "default", visible-at ms ("at") or
-- delay ms ("delay"), body length in UTF-16 code units, body
-- Returns {"ok", now ms, notified, id1, visible-at1, id2, ...}, {"notfound"},
-- {"toolong", i, maxsize} or {"toolate", i, now ms} (message i is over the
-- queue's maxsize, or due further ahead than RSMQ's largest delay). Nothing
-- is written unless "ok": everything that can fail (key types, stored
-- values, every body's length, every due time, on Redis 7 this user's
-- permissions) is checked before the first write. Every id starts with the
-- same server time; the client's index after it keeps the messages in
-- order where their visible-at times are equal. totalsent grows once by
-- the count, and one PUBLISH (best-effort, as push's) announces the batch.
-- With a client-chosen token, the records (luascript.Record) are passed,
--   and the last two ARGV are the record's field (the token, or
--   <token>.<n> for the n-th batch) and its lifetime in ms, taken off
--   before the messages are read. When the field is recorded the batch was
--   stored already: its answer is returned and nothing is written, so a
--   repeat after a lost reply stores the batch once.
local field, lifetime
if records then
  lifetime = table.remove(ARGV)
  field = table.remove(ARGV)
  local r = recordOf(records, field, #KEYS)
  if r then
    return cjson.decode(r)
  end
end
local lengths = {}
for i = 5, #ARGV, 5 do
  lengths[#lengths + 1] = ARGV[i]
end
local a, stop = pushable(queue, attrs, lengths)
if not a then
  return stop
end
if records and not mayRecord(records) then
  return redis.error_reply("NOPERM this user may not HSET and PEXPIRE " .. KEYS[records] .. " (the record of a push with a token): nothing written")
end
local notify = allowed({"PUBLISH", ARGV[1], "1"})
local now, nowstr, t = clock()
local prefix = messageID(t)
local scores, bodies = {}, {}
local res = {"ok", nowstr, 0}
for i = 2, #ARGV, 5 do
  local visible = dueAt(ARGV[i + 1], ARGV[i + 2], now, a[2])
  if not visible then
    return {"toolate", (i - 2) / 5 + 1, nowstr}
  end
  local id = prefix .. ARGV[i]
  scores[#scores + 1] = visible
  scores[#scores + 1] = id
  bodies[#bodies + 1] = id
  bodies[#bodies + 1] = ARGV[i + 4]
  res[#res + 1] = id
  res[#res + 1] = visible
end
if #scores == 0 then
  return res
end
redis.call("ZADD", queue, unpack(scores))
redis.call("HSET", attrs, unpack(bodies))
redis.call("HINCRBY", attrs, "totalsent", #scores / 2)
if notify then
  -- pcall: on Redis 6.2 (no acl_check_cmd) a refused PUBLISH must not
  -- fail a push that is already stored.
  local r = redis.pcall("PUBLISH", ARGV[1], redis.call("ZCARD", queue))
  if type(r) == "number" then
    res[3] = 1
  end
end
if records then
  writeRecord(records, field, cjson.encode(res), lifetime)
end
return res
