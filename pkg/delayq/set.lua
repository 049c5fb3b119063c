-- set: change a queue's attributes and its "modified" time (RSMQ
-- setQueueAttributes), in one step.
-- KEYS[1] <ns>:<q>:Q
-- ARGV: field, value pairs; an empty value deletes the field (used for the
-- dead-letter policy, which RSMQ does not know).
-- Returns 1, or 0 when the queue does not exist.
if not attributes(KEYS[1]) then
  return 0
end
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == "" then
    redis.call("HDEL", KEYS[1], ARGV[i])
  else
    redis.call("HSET", KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
redis.call("HSET", KEYS[1], "modified", redis.call("TIME")[1])
return 1
