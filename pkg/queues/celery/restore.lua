-- Restores an unacked message to its queue as kombu's restore_by_tag
-- does (ZREM unacked_index, HDEL unacked, RPUSH onto the queue's list so
-- it is taken next), if unacked still holds it byte for byte and it was
-- delivered no later than ARGV[4] (the visibility timeout's ceiling).
-- KEYS[1] unacked  unacked  HASH  delivery tag -> message held by a worker
-- KEYS[2] index  unacked_index  ZSET  delivery tag -> delivered at
-- KEYS[3] list  <queue>  LIST  the queue's messages (one list per priority step)
local unacked, index, list = KEYS[1], KEYS[2], KEYS[3]
local tag, raw, payload, ceil = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if redis.call("HGET", unacked, tag) ~= raw then
  return 0
end
local score = redis.call("ZSCORE", index, tag)
if not score or tonumber(score) > ceil then
  return -1
end
redis.call("ZREM", index, tag)
redis.call("HDEL", unacked, tag)
redis.call("RPUSH", list, payload)
return 1
