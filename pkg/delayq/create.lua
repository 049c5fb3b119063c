-- create: make a queue's attribute hash unless it exists (RSMQ createQueue).
-- KEYS[1] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[2] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local attrs, index = KEYS[1], KEYS[2]
-- ARGV[1] vt (s), ARGV[2] delay (s), ARGV[3] maxsize, ARGV[4] maxreceives
-- ("" for none), ARGV[5] deadletter queue ("" for none), ARGV[6] the
-- namespace's registry <ns>:QUEUES and ARGV[7] the queue's name, which the
-- caller adds to it next: checked here so that a refused SADD leaves no
-- queue behind.
-- Returns 1 when created, 0 when the queue exists.
local e = wrongtype(attrs, "hash")
if e then
  return e
end
if redis.call("HEXISTS", attrs, "vt") == 1 then
  return 0
end
e = wrongtype(index, "zset")
if e then
  return e
end
if not allowed({"SADD", ARGV[6], ARGV[7]}, {"HSET", attrs, "vt", "0"}, {"UNLINK", index}) then
  return redis.error_reply("NOPERM this user may not create queue " .. ARGV[7] .. " (HSET, UNLINK and SADD " .. ARGV[6] .. ")")
end
-- An index left by a queue of this name that rsmq deleted. UNLINK goes
-- first: on Redis 6.2 it is the write allowed cannot probe.
redis.call("UNLINK", index)
local now = redis.call("TIME")[1]
redis.call("HSET", attrs, "vt", ARGV[1], "delay", ARGV[2], "maxsize", ARGV[3],
  "created", now, "modified", now, "rsync", "0")
if ARGV[4] ~= "" then
  redis.call("HSET", attrs, "maxreceives", ARGV[4], "deadletter", ARGV[5])
end
return 1
