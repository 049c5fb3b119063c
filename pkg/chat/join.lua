-- join: add a member who sees only the messages sent from now on.
-- KEYS[1] chat:{ID}  KEYS[2] ids:{ID}
-- KEYS[3] seen:{USER} (standalone only; on a cluster the caller writes it
--         after this script succeeds)
-- ARGV[1] user  ARGV[2] chat id
-- ARGV[3], optional: the lifetime in ms of the record of a join made with a
--   client-chosen token, sent:{ID}:<token> (STRING), then the last of KEYS.
--   When it exists the join was applied already: its answer is returned
--   and nothing is written, so a repeat after a lost reply says "added"
--   as the first did.
-- Returns -1 when the chat does not exist, else {1 if added or 0 if already
-- a member, the member's seen id}.
-- Everything that can fail is checked before the first write.
local record = ARGV[3] and KEYS[#KEYS]
local index = KEYS[3] ~= record and KEYS[3] or nil -- seen:{USER}
if record then
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call('GET', record)
  if r then
    local added, seen = string.match(r, '^([01]) (%d+)$')
    if not added then
      return redis.error_reply('ERR ' .. record .. ' is not the record of a join: nothing written')
    end
    return {tonumber(added), seen}
  end
end
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
if index then
  kind = redis.call('TYPE', index).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. index .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
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
if not allowed({'ZADD', KEYS[1], '0', 'm'}, index and {'ZADD', index, '0', 'm'} or nil) then
  return redis.error_reply('NOPERM this user may not ZADD ' .. KEYS[1] .. (index and (' and ' .. index) or '') ..
    ', which chat join needs')
end
if record and not allowed({'SET', record, 'x', 'PX', '1'}) then
  return redis.error_reply('NOPERM this user may not SET ' .. record .. ' (the record of a join with a token)')
end
if added == 1 then
  redis.call('ZADD', KEYS[1], seen, ARGV[1])
end
if index then
  -- GT: an existing entry only moves forward.
  redis.call('ZADD', index, 'GT', seen, ARGV[2])
end
if record then
  redis.call('SET', record, added .. ' ' .. seen, 'PX', ARGV[3])
end
return {added, seen}
