-- push: store a message and schedule it (RSMQ sendMessage), one round trip.
-- KEYS[1] <ns>:<q> (ZSET id -> visible-at ms), KEYS[2] <ns>:<q>:Q (HASH)
-- ARGV[1] 22 random id characters
-- ARGV[2] "at" | "delay" | "default": how ARGV[3] is read
-- ARGV[3] visible-at ms ("at") or delay ms ("delay")
-- ARGV[4] body length in UTF-16 code units (what RSMQ's maxsize counts)
-- ARGV[5] body
-- ARGV[6] realtime channel <ns>:rt:<q>
-- KEYS[4], optional: <ns>:<q>:T:<token> (STRING), the record of a push
--   made with a client-chosen token; ARGV[7] its lifetime in ms. When it
--   exists the push was applied already: its answer is returned and
--   nothing is written, so a repeat after a lost reply stores one message.
-- Returns {"ok", id, visible-at ms, now ms, notified}, {"notfound"},
-- {"toolong", maxsize} or {"toolate", now ms} (an "at" further ahead than
-- RSMQ's largest delay, 9999999 s). Nothing is written unless "ok":
-- everything that can fail (key types, stored values, on Redis 7 this
-- user's permissions) is checked before the first write. The realtime
-- PUBLISH is best-effort: notified is 0 when this user may not publish on the channel (Redis 7's
-- default for new users), and the message is stored all the same, so a
-- retry never duplicates it; waiting consumers then find it by their timer.
local record = KEYS[4]
if record then
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call("GET", record)
  if r then
    return cjson.decode(r)
  end
end
local a = attributes(KEYS[2])
if not a then
  return {"notfound"}
end
local maxsize = tonumber(a[3])
if not whole(a[3], 12, true) or not whole(a[2], 12) then
  return redis.error_reply("ERR " .. KEYS[2] .. ": delay " .. a[2] .. " or maxsize " .. a[3] .. " is not a number: nothing written")
end
if maxsize ~= -1 and tonumber(ARGV[4]) > maxsize then
  return {"toolong", a[3]}
end
local e = wrongtype(KEYS[1], "zset", "sorted set", ": nothing written")
if e then
  return e
end
local sent = redis.call("HGET", KEYS[2], "totalsent")
if sent and not whole(sent, 18, true) then
  return redis.error_reply("ERR " .. KEYS[2] .. ": totalsent " .. sent .. " is not an integer: nothing written")
end
if not allowed({"ZADD", KEYS[1], "0", "x"}, {"HSET", KEYS[2], "x", "x"}, {"HINCRBY", KEYS[2], "totalsent", "1"}) then
  return redis.error_reply("NOPERM this user may not push to " .. KEYS[1] .. " (ZADD, HSET, HINCRBY): nothing written")
end
if record and not allowed({"SET", record, "x", "PX", "1"}) then
  return redis.error_reply("NOPERM this user may not SET " .. record .. " (the record of a push with a token): nothing written")
end
local notify = allowed({"PUBLISH", ARGV[6], "1"})
local now, _, t = clock()
local id = messageID(t) .. ARGV[1]
local visible = dueAt(ARGV[2], ARGV[3], now, a[2])
if not visible then
  return {"toolate", string.format("%.0f", now)}
end
redis.call("ZADD", KEYS[1], visible, id)
redis.call("HSET", KEYS[2], id, ARGV[5])
redis.call("HINCRBY", KEYS[2], "totalsent", 1)
local notified = 0
if notify then
  -- pcall: on Redis 6.2 (no acl_check_cmd) a refused PUBLISH must not
  -- fail a push that is already stored.
  local r = redis.pcall("PUBLISH", ARGV[6], redis.call("ZCARD", KEYS[1]))
  if type(r) == "number" then
    notified = 1
  end
end
local answer = {"ok", id, visible, string.format("%.0f", now), notified}
if record then
  redis.call("SET", record, cjson.encode(answer), "PX", ARGV[7])
end
return answer
