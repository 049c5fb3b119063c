-- mark: after a member was handed the messages of one chat up to an id,
-- mark them seen and delete the messages every member has seen (at most
-- ARGV[4] of them: the caller runs trim.lua for the rest).
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- KEYS[4] seen:{USER} (standalone only: the user's index entry moves in the
--         same atomic step; on a cluster the caller moves it after this)
-- ARGV[1] user  ARGV[2] the last message id handed  ARGV[3] chat id
-- ARGV[4] most messages to delete  ARGV[5] the member's seen id when read
-- Returns -1 when the chat does not exist, -2 when the user is not a
-- member, -3 when the chat was deleted and created again since it was
-- read (the member's seen id is below what it was, which GT otherwise
-- rules out, or the chat has no message counter): nothing written in
-- these cases. Else {the number of seen messages left to delete, the id
-- marked: ARGV[2], or the chat's last id when that is lower}.
-- Everything that can fail is checked before the first write.
local function wrongtype(key, want)
  return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. redis.call('TYPE', key).ok .. ', not ' .. want)
end
-- The reads double as type checks (a wrong type is an error reply).
local seen = redis.pcall('ZSCORE', KEYS[1], ARGV[1])
if type(seen) == 'table' then
  return wrongtype(KEYS[1], 'a chat (zset)')
elseif not seen then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return -1
  end
  return -2
end
if tonumber(seen) < tonumber(ARGV[5]) then
  return -3
end
local last = redis.pcall('GET', KEYS[3])
if type(last) == 'table' then
  return wrongtype(KEYS[3], 'a message counter (string)')
elseif not last then
  return -3
end
last = tonumber(last)
if not last then
  return redis.error_reply('ERR ' .. KEYS[3] .. ' does not hold a message id')
end
local kind = redis.call('TYPE', KEYS[2]).ok
if kind ~= 'zset' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' is a ' .. kind .. ', not messages (zset)')
end
if KEYS[4] and type(redis.pcall('ZSCORE', KEYS[4], ARGV[3])) == 'table' then
  return wrongtype(KEYS[4], 'a user\'s chats (zset)')
end
-- Never past the chat's last id: a value stored above it (not a message)
-- must not hide the messages that will get those ids.
local upto = ARGV[2]
if tonumber(upto) > last then
  upto = string.format('%d', last)
end
if redis.acl_check_cmd then
  if not redis.acl_check_cmd('ZADD', KEYS[1], '1', 'm') or not redis.acl_check_cmd('ZREMRANGEBYRANK', KEYS[2], '0', '0')
    or (KEYS[4] and not redis.acl_check_cmd('ZADD', KEYS[4], '1', 'm')) then
    return redis.error_reply('NOPERM this user may not write the keys of chat ' .. ARGV[3] .. ', which marking seen needs')
  end
end
if KEYS[4] then
  -- XX: a chat that leave removed from the index is never put back;
  -- GT: the entry only moves forward.
  redis.call('ZADD', KEYS[4], 'XX', 'GT', upto, ARGV[3])
end
-- XX: never re-add a member who left meanwhile; GT: seen ids only move
-- forward, whatever order racing readers mark in.
redis.call('ZADD', KEYS[1], 'XX', 'GT', upto, ARGV[1])
local low = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
local n = redis.call('ZCOUNT', KEYS[2], '-inf', low)
local k = math.min(n, tonumber(ARGV[4]))
if k > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, k - 1)
end
return {n - k, upto}
