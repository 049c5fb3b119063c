-- leave: remove a member; the last one out deletes the chat's keys, else
-- the messages every remaining member has seen are deleted (at most
-- ARGV[3] of them: the caller runs trim.lua for the rest).
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- KEYS[4] seen:{USER} (standalone only; on a cluster the caller removes the
--         entry in the same pipeline)
-- ARGV[1] user  ARGV[2] chat id  ARGV[3] most messages to delete
-- Returns {-1, r} when the chat does not exist, {-2, r} when the user is
-- not a member, where r is 1 when a stale index entry was removed (the
-- only write then) and 0 when nothing was written; else {1 if the chat
-- was deleted or 0, messages left to delete}.
-- Everything that can fail is checked before the first write.
local chat = redis.call('TYPE', KEYS[1]).ok
if chat ~= 'zset' and chat ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is a ' .. chat .. ', not a chat (zset)')
end
local kind = redis.call('TYPE', KEYS[2]).ok
if kind ~= 'zset' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' is a ' .. kind .. ', not messages (zset)')
end
if KEYS[4] then
  kind = redis.call('TYPE', KEYS[4]).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[4] .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
  end
end
if not allowed({'ZREM', KEYS[1], 'm'}, {'UNLINK', KEYS[2], KEYS[3]}, {'ZREMRANGEBYRANK', KEYS[2], '0', '0'},
    KEYS[4] and {'ZREM', KEYS[4], 'm'} or nil) then
  return redis.error_reply('NOPERM this user may not write the keys of chat ' .. ARGV[2] .. ', which chat leave needs')
end
-- The last member out deletes the chat. UNLINK (a big msgs:{ID} is freed
-- in the background) is then the first write: on Redis 6.2 it is the one
-- allowed cannot probe.
local last = chat == 'zset' and redis.call('ZCARD', KEYS[1]) == 1 and redis.call('ZSCORE', KEYS[1], ARGV[1])
if last then
  redis.call('UNLINK', KEYS[2], KEYS[3])
end
local removed = 0
if KEYS[4] then
  removed = redis.call('ZREM', KEYS[4], ARGV[2])
end
if chat == 'none' then
  return {-1, removed}
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return {-2, removed}
end
if last then
  return {1, 0}
end
-- The book's errata trimmed chat: here; the messages are in msgs:.
local low = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
local n = redis.call('ZCOUNT', KEYS[2], '-inf', low)
local k = math.min(n, tonumber(ARGV[3]))
if k > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, k - 1)
end
return {0, n - k}
