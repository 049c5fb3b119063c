-- KEYS[1] queue  <ns>:<q>  ZSET  id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  attributes, id -> body, totalsent
-- KEYS[3..13] records  <ns>:<q>:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local queue, attrs = KEYS[1], KEYS[2]
local records = KEYS[3] and 3 -- the first record key, when the push has a token
-- push: store a message and schedule it (RSMQ sendMessage), one round trip.
-- ARGV[1] 22 random id characters
-- ARGV[2] "at" | "delay" | "default": how ARGV[3] is read
-- ARGV[3] visible-at ms ("at") or delay ms ("delay")
-- ARGV[4] body length in UTF-16 code units (what RSMQ's maxsize counts)
-- ARGV[5] body
-- ARGV[6] realtime channel <ns>:rt:<q>
-- With a client-chosen token, the records (luascript.Record) are passed,
--   ARGV[7] is their lifetime in ms and ARGV[8] the token, the record's
--   field. When the token is recorded the push was applied already: its
--   answer is returned and nothing is written, so a repeat after a lost
--   reply stores one message.
-- Returns {"ok", id, visible-at ms, now ms, notified}, {"notfound"},
-- {"toolong", maxsize} or {"toolate", now ms} (an "at" further ahead than
-- RSMQ's largest delay, 9999999 s). Nothing is written unless "ok":
-- everything that can fail (key types, stored values, on Redis 7 this
-- user's permissions) is checked before the first write. The realtime
-- PUBLISH is best-effort: notified is 0 when this user may not publish on the channel (Redis 7's
-- default for new users), and the message is stored all the same, so a
-- retry never duplicates it; waiting consumers then find it by their timer.
if records then
  local r = recordOf(records, ARGV[8], #KEYS)
  if r then
    return cjson.decode(r)
  end
end
local a, stop = pushable(queue, attrs, {ARGV[4]})
if not a then
  if stop[1] == "toolong" then
    return {"toolong", stop[3]}
  end
  return stop
end
if records and not mayRecord(records) then
  return redis.error_reply("NOPERM this user may not HSET and PEXPIRE " .. KEYS[records] .. " (the record of a push with a token): nothing written")
end
local notify = allowed({"PUBLISH", ARGV[6], "1"})
local now, _, t = clock()
local id = messageID(t) .. ARGV[1]
local visible = dueAt(ARGV[2], ARGV[3], now, a[2])
if not visible then
  return {"toolate", string.format("%.0f", now)}
end
redis.call("ZADD", queue, visible, id)
redis.call("HSET", attrs, id, ARGV[5])
redis.call("HINCRBY", attrs, "totalsent", 1)
local notified = 0
if notify then
  -- pcall: on Redis 6.2 (no acl_check_cmd) a refused PUBLISH must not
  -- fail a push that is already stored.
  local r = redis.pcall("PUBLISH", ARGV[6], redis.call("ZCARD", queue))
  if type(r) == "number" then
    notified = 1
  end
end
local answer = {"ok", id, visible, string.format("%.0f", now), notified}
if records then
  writeRecord(records, ARGV[8], cjson.encode(answer), ARGV[7])
end
return answer
