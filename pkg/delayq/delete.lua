-- delete: remove a queue's keys (RSMQ deleteQueue) after checking that
-- nothing can fail halfway: the keys' types and, on Redis 7, that this
-- user may UNLINK them and SREM the name from the registry, which the
-- caller does next. UNLINK frees big values in the background, so this is
-- O(1) in the server's main thread whatever the queue holds.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] the registry <ns>:QUEUES, ARGV[2] the queue's name
-- ARGV[3] the most messages it may delete, or -1 for any number: with more
-- it changes nothing (chatq's guard; the count is taken here, so a push
-- after the caller looked is never deleted unasked)
-- Returns {"ok", messages deleted}, {"notempty", messages} or {"notfound"}.
for _, kt in ipairs({{queue, "zset"}, {attrs, "hash"}, {index, "zset"}}) do
  local e = wrongtype(kt[1], kt[2], kt[2], ": nothing deleted")
  if e then
    return e
  end
end
if redis.call("EXISTS", attrs) == 0 then
  return {"notfound"}
end
if not allowed({"UNLINK", queue, attrs, index}, {"SREM", ARGV[1], ARGV[2]}) then
  return redis.error_reply("NOPERM this user may not delete queue " .. ARGV[2] .. " (UNLINK its keys, SREM " .. ARGV[1] .. "): nothing deleted")
end
local n = redis.call("ZCARD", queue)
local most = tonumber(ARGV[3]) or -1
if most >= 0 and n > most then
  return {"notempty", n}
end
redis.call("UNLINK", queue, attrs, index)
return {"ok", n}
