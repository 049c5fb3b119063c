-- leave: remove a member; the last one out deletes the chat's keys, else
-- the messages every remaining member has seen are deleted (at most
-- ARGV[3] of them: the caller runs trim.lua for the rest).
-- KEYS[1] members  chat:{ID}  ZSET  member -> highest message id seen
-- KEYS[2] messages  msgs:{ID}  ZSET  message JSON -> id
-- KEYS[3] counter  ids:{ID}  STRING  the chat's last message id
-- KEYS[4] chats  seen:{USER}  ZSET  the user's chats: chat id -> seen id; optional: standalone only (on a cluster the caller removes the entry in the same pipeline)
local members, messages, counter, chats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- ARGV[1] user  ARGV[2] chat id  ARGV[3] most messages to delete
-- Returns {-1, r} when the chat does not exist, {-2, r} when the user is
-- not a member, where r is 1 when a stale index entry was removed (the
-- only write then) and 0 when nothing was written; else {1 if the chat
-- was deleted or 0, messages left to delete}.
-- Everything that can fail is checked before the first write.
local chat = redis.call('TYPE', members).ok
if chat ~= 'zset' and chat ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. members .. ' is a ' .. chat .. ', not a chat (zset)')
end
local kind = redis.call('TYPE', messages).ok
if kind ~= 'zset' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. messages .. ' is a ' .. kind .. ', not messages (zset)')
end
if chats then
  kind = redis.call('TYPE', chats).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. chats .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
  end
end
if not allowed({'ZREM', members, 'm'}, {'UNLINK', messages, counter}, {'ZREMRANGEBYRANK', messages, '0', '0'},
    chats and {'ZREM', chats, 'm'} or nil) then
  return redis.error_reply('NOPERM this user may not write the keys of chat ' .. ARGV[2] .. ', which chat leave needs')
end
-- The last member out deletes the chat. UNLINK (a big msgs:{ID} is freed
-- in the background) is then the first write: on Redis 6.2 it is the one
-- allowed cannot probe.
local last = chat == 'zset' and redis.call('ZCARD', members) == 1 and redis.call('ZSCORE', members, ARGV[1])
if last then
  redis.call('UNLINK', messages, counter)
end
local removed = 0
if chats then
  removed = redis.call('ZREM', chats, ARGV[2])
end
if chat == 'none' then
  return {-1, removed}
end
if redis.call('ZREM', members, ARGV[1]) == 0 then
  return {-2, removed}
end
if last then
  return {1, 0}
end
-- The book's errata trimmed chat: here; the messages are in msgs:.
local low = redis.call('ZRANGE', members, 0, 0, 'WITHSCORES')[2]
local n = redis.call('ZCOUNT', messages, '-inf', low)
local k = math.min(n, tonumber(ARGV[3]))
if k > 0 then
  redis.call('ZREMRANGEBYRANK', messages, 0, k - 1)
end
return {0, n - k}
