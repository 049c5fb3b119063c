-- pushmany: store up to 100 messages and schedule them, in order, in one
-- atomic call (RSMQ sendMessage, many times over).
-- KEYS[1] <ns>:<q> (ZSET id -> visible-at ms), KEYS[2] <ns>:<q>:Q (HASH)
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
-- KEYS[3], optional: <ns>:<q>:T:<token> (STRING), the record of a batch
--   pushed with a client-chosen token, whose lifetime in ms is then the
--   last ARGV (taken off before the messages are read). When it exists the
--   batch was stored already: its answer is returned and nothing is
--   written, so a repeat after a lost reply stores the batch once.
local record = KEYS[3]
local lifetime
if record then
  lifetime = table.remove(ARGV)
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
if maxsize ~= -1 then
  for i = 5, #ARGV, 5 do
    if tonumber(ARGV[i]) > maxsize then
      return {"toolong", (i - 5) / 5 + 1, a[3]}
    end
  end
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
redis.call("ZADD", KEYS[1], unpack(scores))
redis.call("HSET", KEYS[2], unpack(bodies))
redis.call("HINCRBY", KEYS[2], "totalsent", #scores / 2)
if notify then
  -- pcall: on Redis 6.2 (no acl_check_cmd) a refused PUBLISH must not
  -- fail a push that is already stored.
  local r = redis.pcall("PUBLISH", ARGV[1], redis.call("ZCARD", KEYS[1]))
  if type(r) == "number" then
    res[3] = 1
  end
end
if record then
  redis.call("SET", record, cjson.encode(res), "PX", lifetime)
end
return res
