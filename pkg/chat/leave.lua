-- leave: remove a member; the last one out deletes the chat's keys, else
-- the messages every remaining member has seen are deleted.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- KEYS[4] seen:{USER} (standalone only; on a cluster the caller removes the
--         entry in the same pipeline)
-- ARGV[1] user  ARGV[2] chat id
-- Returns -1 when the chat does not exist, -2 when the user is not a
-- member, 1 when the chat was deleted, else 0.
-- The user's index entry goes in every case (also a stale one).
if KEYS[4] then
  redis.call('ZREM', KEYS[4], ARGV[2])
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return -2
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
  return 1
end
-- The book's errata trimmed chat: here; the messages are in msgs:.
local low = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', low[2])
return 0
