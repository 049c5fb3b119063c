-- create: make a queue's attribute hash unless it exists (RSMQ createQueue).
-- KEYS[1] <ns>:<q>:Q, KEYS[2] <ns>:<q>:R (chatq's index of received
-- messages, for stats)
-- ARGV[1] vt (s), ARGV[2] delay (s), ARGV[3] maxsize, ARGV[4] maxreceives
-- ("" for none), ARGV[5] deadletter queue ("" for none), ARGV[6] the
-- namespace's registry <ns>:QUEUES and ARGV[7] the queue's name, which the
-- caller adds to it next: checked here so that a refused SADD leaves no
-- queue behind.
-- Returns 1 when created, 0 when the queue exists.
local e = wrongtype(KEYS[1], "hash")
if e then
  return e
end
if redis.call("HEXISTS", KEYS[1], "vt") == 1 then
  return 0
end
e = wrongtype(KEYS[2], "zset")
if e then
  return e
end
if not allowed({"SADD", ARGV[6], ARGV[7]}, {"HSET", KEYS[1], "vt", "0"}, {"UNLINK", KEYS[2]}) then
  return redis.error_reply("NOPERM this user may not create queue " .. ARGV[7] .. " (HSET, UNLINK and SADD " .. ARGV[6] .. ")")
end
local now = redis.call("TIME")[1]
redis.call("HSET", KEYS[1], "vt", ARGV[1], "delay", ARGV[2], "maxsize", ARGV[3],
  "created", now, "modified", now, "rsync", "0")
if ARGV[4] ~= "" then
  redis.call("HSET", KEYS[1], "maxreceives", ARGV[4], "deadletter", ARGV[5])
end
-- An index left by a queue of this name that rsmq deleted.
redis.call("UNLINK", KEYS[2])
return 1
