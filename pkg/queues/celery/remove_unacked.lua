-- Removes an unacked message as kombu's ack does (ZREM unacked_index,
-- HDEL unacked), if unacked still holds it byte for byte.
-- KEYS[1] unacked  unacked  HASH  delivery tag -> message held by a worker
-- KEYS[2] index  unacked_index  ZSET  delivery tag -> delivered at
local unacked, index = KEYS[1], KEYS[2]
local tag, raw = ARGV[1], ARGV[2]
if redis.call("HGET", unacked, tag) ~= raw then
  return 0
end
redis.call("ZREM", index, tag)
redis.call("HDEL", unacked, tag)
return 1
