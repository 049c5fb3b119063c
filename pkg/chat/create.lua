-- create: make a chat and, when given, send its first message, atomically.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- KEYS[4], when ARGV[4] is not '': sent:{ID}:<token> (STRING), the record
--   of a create made with a client-chosen token, ARGV[4] its lifetime in
--   ms. When it exists the create was applied already: its answer is
--   returned and nothing is written, so a repeat after a lost reply makes
--   the chat (and sends its first message) once.
-- KEYS[4..] (KEYS[5..] with a record) seen:{USER}, one per member in ARGV
--           order (standalone only; on a cluster the caller writes them
--           after this script succeeds)
-- ARGV[1] chat id  ARGV[2] notification channel
-- ARGV[3] message JSON after the id and ts ('' = no message)
-- ARGV[4] the record's lifetime in ms, or ''  ARGV[5..] members
-- Returns -1 when any of the chat's keys exists, else {message id or 0, ts or ''}.
-- Everything that can fail is checked before the first write.
local record = ARGV[4] ~= '' and KEYS[4] or nil
local seen0 = record and 5 or 4 -- the first seen:{USER} key
if record then
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call('GET', record)
  if r then
    local id, ts = string.match(r, '^(%d+) (.*)$')
    if not id then
      return redis.error_reply('ERR ' .. record .. ' is not the record of a create: nothing written')
    end
    return {tonumber(id), ts}
  end
end
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3]) > 0 then
  return -1
end
for i = seen0, #KEYS do
  local kind = redis.call('TYPE', KEYS[i]).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
  end
end
local need = {{'ZADD', KEYS[1], '0', 'm'}}
if record then
  need[#need + 1] = {'SET', record, 'x', 'PX', '1'}
end
for i = seen0, #KEYS do
  need[#need + 1] = {'ZADD', KEYS[i], '0', 'm'}
end
if ARGV[3] ~= '' then
  need[#need + 1] = {'INCR', KEYS[3]}
  need[#need + 1] = {'ZADD', KEYS[2], '1', 'm'}
  need[#need + 1] = {'PUBLISH', ARGV[2], ARGV[1]}
end
if not allowed(unpack(need)) then
  return redis.error_reply('NOPERM this user may not write the keys of chat ' .. ARGV[1] ..
    ' (ZADD, INCR) or PUBLISH ' .. ARGV[2] .. ', which chat create needs')
end
local id
if ARGV[3] ~= '' then
  -- First: see send.lua. Then INCR, the first write (on Redis 6.2 it is
  -- the one allowed cannot probe).
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  id = string.format('%d', redis.call('INCR', KEYS[3]))
end
for i = 5, #ARGV do
  redis.call('ZADD', KEYS[1], 0, ARGV[i])
end
for i = seen0, #KEYS do
  redis.call('ZADD', KEYS[i], 0, ARGV[1])
end
if ARGV[3] == '' then
  if record then
    redis.call('SET', record, '0 ', 'PX', ARGV[4])
  end
  return {0, ''}
end
-- The id and ts are formatted as strings so that both Redis and the
-- embedded server store the same bytes (no float formatting, no 1e+06).
local t = redis.call('TIME')
local ts = t[1] .. '.' .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
redis.call('ZADD', KEYS[2], id, '{"id":' .. id .. ',"ts":' .. ts .. ARGV[3])
if record then
  redis.call('SET', record, id .. ' ' .. ts, 'PX', ARGV[4])
end
return {tonumber(id), ts}
