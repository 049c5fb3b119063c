-- create: make a queue's attribute hash unless it exists (RSMQ createQueue).
-- KEYS[1] <ns>:<q>:Q
-- ARGV[1] vt (s), ARGV[2] delay (s), ARGV[3] maxsize, ARGV[4] maxreceives
-- ("" for none), ARGV[5] deadletter queue ("" for none)
-- Returns 1 when created, 0 when the queue exists.
-- Redis 3.2 to 4 replicate scripts verbatim and refuse writes after TIME
-- unless told to replicate effects (the default since Redis 5).
if redis.replicate_commands then
  redis.replicate_commands()
end
if redis.call("HEXISTS", KEYS[1], "vt") == 1 then
  return 0
end
local now = redis.call("TIME")[1]
redis.call("HSET", KEYS[1], "vt", ARGV[1], "delay", ARGV[2], "maxsize", ARGV[3],
  "created", now, "modified", now)
if ARGV[4] ~= "" then
  redis.call("HSET", KEYS[1], "maxreceives", ARGV[4], "deadletter", ARGV[5])
end
return 1
