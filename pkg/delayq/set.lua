-- set: change a queue's attributes and its "modified" time (RSMQ
-- setQueueAttributes), in one step.
-- KEYS[1] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
local attrs = KEYS[1]
-- ARGV: field, value pairs; an empty value deletes the field (used for the
-- dead-letter policy, which RSMQ does not know).
-- Returns 1, or 0 when the queue does not exist.
if not attributes(attrs) then
  return 0
end
if not allowed({"HSET", attrs, "x", "x"}, {"HDEL", attrs, "x"}) then
  return redis.error_reply("NOPERM this user may not change " .. attrs .. " (HSET, HDEL): nothing written")
end
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == "" then
    redis.call("HDEL", attrs, ARGV[i])
  else
    redis.call("HSET", attrs, ARGV[i], ARGV[i + 1])
  end
end
redis.call("HSET", attrs, "modified", redis.call("TIME")[1])
return 1
