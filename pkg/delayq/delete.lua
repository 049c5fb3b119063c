-- delete: remove a queue's keys (RSMQ deleteQueue) after checking that
-- nothing can fail halfway: the keys' types and, on Redis 7, that this
-- user may UNLINK them and SREM the name from the registry, which the
-- caller does next. UNLINK frees big values in the background, so this is
-- O(1) in the server's main thread whatever the queue holds.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- ARGV[1] the registry <ns>:QUEUES, ARGV[2] the queue's name
-- ARGV[3] the most messages it may delete, or -1 for any number: with more
-- it changes nothing (chatq's guard; the count is taken here, so a push
-- after the caller looked is never deleted unasked)
-- Returns {"ok", messages deleted}, {"notempty", messages} or {"notfound"}.
for i, ty in ipairs({"zset", "hash", "zset"}) do
  local e = wrongtype(KEYS[i], ty, ty, ": nothing deleted")
  if e then
    return e
  end
end
if redis.call("EXISTS", KEYS[2]) == 0 then
  return {"notfound"}
end
if not allowed({"UNLINK", KEYS[1], KEYS[2], KEYS[3]}, {"SREM", ARGV[1], ARGV[2]}) then
  return redis.error_reply("NOPERM this user may not delete queue " .. ARGV[2] .. " (UNLINK its keys, SREM " .. ARGV[1] .. "): nothing deleted")
end
local n = redis.call("ZCARD", KEYS[1])
local most = tonumber(ARGV[3]) or -1
if most >= 0 and n > most then
  return {"notempty", n}
end
redis.call("UNLINK", KEYS[1], KEYS[2], KEYS[3])
return {"ok", n}
