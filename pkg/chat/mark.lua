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
-- marks.lua runs mark() below for several chats in one call: the Go code
-- joins this file, up to its last line, with marks.lua.
local function wrongtype(key, want)
  return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. redis.call('TYPE', key).ok .. ', not ' .. want)
end
-- mark returns the reply for one chat and the number of messages deleted.
-- checked: the caller has checked index's type and the ZADD permission.
local function mark(chat, msgs, ids, index, user, upto, id, limit, from, checked)
  -- The reads double as type checks (a wrong type is an error reply).
  local seen = redis.pcall('ZSCORE', chat, user)
  if type(seen) == 'table' then
    return wrongtype(chat, 'a chat (zset)'), 0
  elseif not seen then
    if redis.call('EXISTS', chat) == 0 then
      return -1, 0
    end
    return -2, 0
  end
  if tonumber(seen) < tonumber(from) then
    return -3, 0
  end
  local last = redis.pcall('GET', ids)
  if type(last) == 'table' then
    return wrongtype(ids, 'a message counter (string)'), 0
  elseif not last then
    return -3, 0
  end
  last = tonumber(last)
  if not last then
    return redis.error_reply('ERR ' .. ids .. ' does not hold a message id'), 0
  end
  local kind = redis.call('TYPE', msgs).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. msgs .. ' is a ' .. kind .. ', not messages (zset)'), 0
  end
  if index and not checked and type(redis.pcall('ZSCORE', index, id)) == 'table' then
    return wrongtype(index, 'a user\'s chats (zset)'), 0
  end
  -- Never past the chat's last id: a value stored above it (not a message)
  -- must not hide the messages that will get those ids.
  if tonumber(upto) > last then
    upto = string.format('%d', last)
  end
  if not allowed({'ZADD', chat, '1', 'm'}, {'ZREMRANGEBYRANK', msgs, '0', '0'},
      index and not checked and {'ZADD', index, '1', 'm'} or nil) then
    return redis.error_reply('NOPERM this user may not write the keys of chat ' .. id .. ', which marking seen needs'), 0
  end
  if index then
    -- XX: a chat that leave removed from the index is never put back;
    -- GT: the entry only moves forward.
    redis.call('ZADD', index, 'XX', 'GT', upto, id)
  end
  -- XX: never re-add a member who left meanwhile; GT: seen ids only move
  -- forward, whatever order racing readers mark in.
  redis.call('ZADD', chat, 'XX', 'GT', upto, user)
  local low = redis.call('ZRANGE', chat, 0, 0, 'WITHSCORES')[2]
  local n = redis.call('ZCOUNT', msgs, '-inf', low)
  local k = math.min(n, tonumber(limit))
  if k > 0 then
    redis.call('ZREMRANGEBYRANK', msgs, 0, k - 1)
  end
  return {n - k, upto}, k
end
return (mark(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]))
