-- join: add a member who sees only the messages sent from now on.
-- KEYS[1] chat:{ID}  KEYS[2] ids:{ID}
-- KEYS[3] seen:{USER} (standalone only; on a cluster the caller writes it
--         after this script succeeds)
-- ARGV[1] user  ARGV[2] chat id
-- Returns -1 when the chat does not exist, else {1 if added or 0 if already
-- a member, the member's seen id}.
-- Everything that can fail is checked before the first write.
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
  return -1
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is a ' .. kind .. ', not a chat (zset)')
end
kind = redis.call('TYPE', KEYS[2]).ok
if kind ~= 'string' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' is a ' .. kind .. ', not a message counter (string)')
end
if KEYS[3] then
  kind = redis.call('TYPE', KEYS[3]).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[3] .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
  end
end
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
local added = 0
if not seen then
  seen = redis.call('GET', KEYS[2]) or '0'
  if not string.match(seen, '^%d+$') or #seen > 15 then
    return redis.error_reply('ERR ' .. KEYS[2] .. ' holds ' .. string.format('%q', string.sub(seen, 1, 40)) .. ', not a message id')
  end
  added = 1
end
if not allowed({'ZADD', KEYS[1], '0', 'm'}, KEYS[3] and {'ZADD', KEYS[3], '0', 'm'} or nil) then
  return redis.error_reply('NOPERM this user may not ZADD ' .. KEYS[1] .. (KEYS[3] and (' and ' .. KEYS[3]) or '') ..
    ', which chat join needs')
end
if added == 1 then
  redis.call('ZADD', KEYS[1], seen, ARGV[1])
end
if KEYS[3] then
  -- GT: an existing entry only moves forward.
  redis.call('ZADD', KEYS[3], 'GT', seen, ARGV[2])
end
return {added, seen}
