-- purge: delete every message of a queue at once, keeping its attributes
-- and counters, in O(1) server time whatever the queue holds: the ZSET,
-- the index and the hash are UNLINKed (Redis frees big values in a
-- background thread) and the attribute fields are written back to a fresh
-- hash, all in this one atomic script. A push after it is kept; bodies and
-- <id>:rc/<id>:fr fields of any kind go, including ones a crashed
-- non-atomic writer left behind.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] the most messages it may delete, or -1 for any number: with more
-- it changes nothing (chatq's guard; the count is taken here, so a push
-- after the caller looked is never purged unasked)
-- Returns {"ok", messages deleted}, {"notempty", messages} or {"notfound"}.
local keep = {"vt", "delay", "maxsize", "totalrecv", "totalsent", "created", "modified",
  "maxreceives", "deadletter", "totaldead"}
local a = attributes(attrs, unpack(keep, 4))
if not a then
  return {"notfound"}
end
-- Everything that could fail is checked before the first write.
local e = wrongtype(queue, "zset", "zset", ": nothing written") or wrongtype(index, "zset", "zset", ": nothing written")
if e then
  return e
end
if not allowed({"UNLINK", queue, attrs, index}, {"HSET", attrs, "vt", "0"}) then
  return redis.error_reply("NOPERM this user may not purge " .. queue .. " (UNLINK its keys, HSET " .. attrs .. "): nothing written")
end
local n = redis.call("ZCARD", queue)
local most = tonumber(ARGV[1]) or -1
if most >= 0 and n > most then
  return {"notempty", n}
end
local fields = {}
for i, f in ipairs(keep) do
  if a[i] then
    fields[#fields + 1] = f
    fields[#fields + 1] = a[i]
  end
end
-- With no message left the (empty) index is complete.
fields[#fields + 1] = "rsync"
fields[#fields + 1] = a[4] or "0"
redis.call("UNLINK", queue, attrs, index)
redis.call("HSET", attrs, unpack(fields))
return {"ok", n}
