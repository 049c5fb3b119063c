-- send: append a message to a chat, atomically: counter + ZADD, no lock.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- ARGV[1] sender  ARGV[2] message JSON after the id and ts
-- ARGV[3] notification channel  ARGV[4] chat id
-- KEYS[4], optional: sent:{ID}:<token> (STRING), the record of a send made
--   with a client-chosen token; ARGV[5] its lifetime in ms. When it exists
--   the send was applied already: its answer is returned and nothing is
--   written (nor published), so a repeat after a lost reply stores one
--   message.
-- Returns -1 when the chat does not exist, -2 when the sender is not a
-- member, else {message id, ts}.
-- Everything that can fail is checked before the first write (key types,
-- the counter's value and, on Redis >= 7, the caller's permissions), so a
-- failed send writes nothing: no gap in the ids, no message without its
-- notification that a retry would duplicate.
local record = KEYS[4]
if record then
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call('GET', record)
  if r then
    local id, ts = string.match(r, '^(%d+) (%d+%.%d+)$')
    if not id then
      return redis.error_reply('ERR ' .. record .. ' is not the record of a send: nothing written')
    end
    return {tonumber(id), ts}
  end
end
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
  return -1
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is a ' .. kind .. ', not a chat (zset)')
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return -2
end
kind = redis.call('TYPE', KEYS[2]).ok
if kind ~= 'zset' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' is a ' .. kind .. ', not messages (zset)')
end
kind = redis.call('TYPE', KEYS[3]).ok
if kind ~= 'string' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[3] .. ' is a ' .. kind .. ', not a message counter (string)')
end
local last = redis.call('GET', KEYS[3]) or '0'
if not string.match(last, '^%d+$') or #last > 15 or (#last > 1 and string.sub(last, 1, 1) == '0') then
  return redis.error_reply('ERR ' .. KEYS[3] .. ' holds ' .. string.format('%q', string.sub(last, 1, 40)) .. ', not a message id')
end
if not allowed({'INCR', KEYS[3]}, {'ZADD', KEYS[2], '1', 'm'}, {'PUBLISH', ARGV[3], ARGV[4]}) then
  return redis.error_reply('NOPERM this user may not run INCR ' .. KEYS[3] .. ', ZADD ' .. KEYS[2] ..
    ' and PUBLISH ' .. ARGV[3] .. ', which chat send needs')
end
if record and not allowed({'SET', record, 'x', 'PX', '1'}) then
  return redis.error_reply('NOPERM this user may not SET ' .. record .. ' (the record of a send with a token)')
end
-- PUBLISH first: on Redis 6.2, which cannot check it (nor INCR) before,
-- a channel the user may not publish to fails here, before anything is
-- stored, and INCR is the first write (ZADD was checked). Subscribers
-- read only after the script has run, and find the message.
redis.call('PUBLISH', ARGV[3], ARGV[4])
-- The id and ts are formatted as strings so that both Redis and the
-- embedded server store the same bytes (no float formatting, no 1e+06).
local id = string.format('%d', redis.call('INCR', KEYS[3]))
local t = redis.call('TIME')
local ts = t[1] .. '.' .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
redis.call('ZADD', KEYS[2], id, '{"id":' .. id .. ',"ts":' .. ts .. ARGV[2])
if record then
  redis.call('SET', record, id .. ' ' .. ts, 'PX', ARGV[5])
end
return {tonumber(id), ts}
