-- lib: the prelude of mark.lua and marks.lua (chat.go puts it in front of
-- their text, after luascript.Permitted): mark(), which marks one chat seen
-- for one member, and the wrongtype reply it uses. It reads no KEYS and
-- writes nothing itself.
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
