-- KEYS[1] chat  chat:{ID}  ZSET  member -> the id of the last message they saw
-- KEYS[2] ids  ids:{ID}  STRING  the chat's last message id
-- KEYS[3] index  seen:{USER}  ZSET  optional (standalone only): chat id -> the id of the last message the user saw
-- KEYS[4..14] records  sent:{ID}:<minute>  HASH  token -> answer, minutes m..m-10
local chat, ids = KEYS[1], KEYS[2]
-- (the records are the last 11 keys: KEYS[3..13] on a cluster, where the
-- caller writes seen:{USER} after this script succeeds)
local records = ARGV[3] and #KEYS - 10 -- the first record key, when the join has a token
local index = (records or #KEYS + 1) == 4 and KEYS[3] or nil
-- join: add a member who sees only the messages sent from now on.
-- ARGV[1] user  ARGV[2] chat id
-- ARGV[3], ARGV[4], with a client-chosen token: the lifetime in ms of the
--   records (luascript.Record), then passed, and the token, the record's
--   field. When it is recorded the join was applied already: its answer
--   is returned and nothing is written, so a repeat after a lost reply
--   says "added" as the first did.
-- Returns -1 when the chat does not exist, else {1 if added or 0 if already
-- a member, the member's seen id}.
-- Everything that can fail is checked before the first write.
if records then
  local r, key = recordOf(records, ARGV[4], #KEYS)
  if r then
    local added, seen = string.match(r, '^([01]) (%d+)$')
    if not added then
      return redis.error_reply('ERR ' .. key .. ' ' .. ARGV[4] .. ' is not the record of a join: nothing written')
    end
    return {tonumber(added), seen}
  end
end
local kind = redis.call('TYPE', chat).ok
if kind == 'none' then
  return -1
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. chat .. ' is a ' .. kind .. ', not a chat (zset)')
end
kind = redis.call('TYPE', ids).ok
if kind ~= 'string' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. ids .. ' is a ' .. kind .. ', not a message counter (string)')
end
if index then
  kind = redis.call('TYPE', index).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. index .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
  end
end
local seen = redis.call('ZSCORE', chat, ARGV[1])
local added = 0
if not seen then
  seen = redis.call('GET', ids) or '0'
  if not string.match(seen, '^%d+$') or #seen > 15 then
    return redis.error_reply('ERR ' .. ids .. ' holds ' .. string.format('%q', string.sub(seen, 1, 40)) .. ', not a message id')
  end
  added = 1
end
if not allowed({'ZADD', chat, '0', 'm'}, index and {'ZADD', index, '0', 'm'} or nil) then
  return redis.error_reply('NOPERM this user may not ZADD ' .. chat .. (index and (' and ' .. index) or '') ..
    ', which chat join needs')
end
if records and not mayRecord(records) then
  return redis.error_reply('NOPERM this user may not HSET and PEXPIRE ' .. KEYS[records] .. ' (the record of a join with a token)')
end
if added == 1 then
  redis.call('ZADD', chat, seen, ARGV[1])
end
if index then
  -- GT: an existing entry only moves forward.
  redis.call('ZADD', index, 'GT', seen, ARGV[2])
end
if records then
  writeRecord(records, ARGV[4], added .. ' ' .. seen, ARGV[3])
end
return {added, seen}
