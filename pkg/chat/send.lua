-- KEYS[1] chat  chat:{ID}  ZSET  member -> the id of the last message they saw
-- KEYS[2] msgs  msgs:{ID}  ZSET  message id -> message JSON
-- KEYS[3] ids  ids:{ID}  STRING  the chat's last message id
-- KEYS[4..14] records  sent:{ID}:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local chat, msgs, ids = KEYS[1], KEYS[2], KEYS[3]
local records = KEYS[4] and 4 -- the first record key, when the send has a token
-- send: append a message to a chat, atomically: counter + ZADD, no lock.
-- ARGV[1] sender  ARGV[2] message JSON after the id and ts
-- ARGV[3] notification channel  ARGV[4] chat id
-- With a client-chosen token, the records (luascript.Record) are passed,
--   ARGV[5] is their lifetime in ms and ARGV[6] the token, the record's
--   field. When it is recorded the send was applied already: its answer is
--   returned and nothing is written (nor published), so a repeat after a
--   lost reply stores one message.
-- Returns -1 when the chat does not exist, -2 when the sender is not a
-- member, else {message id, ts}.
-- Everything that can fail is checked before the first write (key types,
-- the counter's value and, on Redis >= 7, the caller's permissions), so a
-- failed send writes nothing: no gap in the ids, no message without its
-- notification that a retry would duplicate.
if records then
  local r, key = recordOf(records, ARGV[6], #KEYS)
  if r then
    local id, ts = string.match(r, '^(%d+) (%d+%.%d+)$')
    if not id then
      return redis.error_reply('ERR ' .. key .. ' ' .. ARGV[6] .. ' is not the record of a send: nothing written')
    end
    return {tonumber(id), ts}
  end
end
local kind = redis.call('TYPE', chat).ok
if kind == 'none' then
  return -1
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. chat .. ' is a ' .. kind .. ', not a chat (zset)')
end
if not redis.call('ZSCORE', chat, ARGV[1]) then
  return -2
end
kind = redis.call('TYPE', msgs).ok
if kind ~= 'zset' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. msgs .. ' is a ' .. kind .. ', not messages (zset)')
end
kind = redis.call('TYPE', ids).ok
if kind ~= 'string' and kind ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. ids .. ' is a ' .. kind .. ', not a message counter (string)')
end
local last = redis.call('GET', ids) or '0'
if not string.match(last, '^%d+$') or #last > 15 or (#last > 1 and string.sub(last, 1, 1) == '0') then
  return redis.error_reply('ERR ' .. ids .. ' holds ' .. string.format('%q', string.sub(last, 1, 40)) .. ', not a message id')
end
if not allowed({'INCR', ids}, {'ZADD', msgs, '1', 'm'}, {'PUBLISH', ARGV[3], ARGV[4]}) then
  return redis.error_reply('NOPERM this user may not run INCR ' .. ids .. ', ZADD ' .. msgs ..
    ' and PUBLISH ' .. ARGV[3] .. ', which chat send needs')
end
if records and not mayRecord(records) then
  return redis.error_reply('NOPERM this user may not HSET and PEXPIRE ' .. KEYS[records] .. ' (the record of a send with a token)')
end
-- PUBLISH first: on Redis 6.2, which cannot check it (nor INCR) before,
-- a channel the user may not publish to fails here, before anything is
-- stored, and INCR is the first write (ZADD was checked). Subscribers
-- read only after the script has run, and find the message.
redis.call('PUBLISH', ARGV[3], ARGV[4])
-- The id and ts are formatted as strings so that both Redis and the
-- embedded server store the same bytes (no float formatting, no 1e+06).
local id = string.format('%d', redis.call('INCR', ids))
local t = redis.call('TIME')
local ts = t[1] .. '.' .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
redis.call('ZADD', msgs, id, '{"id":' .. id .. ',"ts":' .. ts .. ARGV[2])
if records then
  writeRecord(records, ARGV[6], id .. ' ' .. ts, ARGV[5])
end
return {tonumber(id), ts}
