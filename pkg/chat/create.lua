-- KEYS[1] chat  chat:{ID}  ZSET  member -> the id of the last message they saw
-- KEYS[2] msgs  msgs:{ID}  ZSET  message id -> message JSON
-- KEYS[3] ids  ids:{ID}  STRING  the chat's last message id
-- KEYS[4..14] records  sent:{ID}:<minute>  HASH  token -> answer, minutes m..m-10
-- KEYS[15..] seen  seen:{USER}  ZSET  chat id -> the id of the last message the user saw, one per member
local chat, msgs, ids = KEYS[1], KEYS[2], KEYS[3]
-- (KEYS[4..] without a token; standalone only: on a cluster the caller
-- writes the members' seen:{USER} after this script succeeds)
local records = ARGV[4] ~= '' and 4 or nil -- the first record key, when the create has a token
local seen0 = records and 15 or 4 -- the first seen:{USER} key
-- create: make a chat and, when given, send its first message, atomically.
-- ARGV[1] chat id  ARGV[2] notification channel
-- ARGV[3] message JSON after the id and ts ('' = no message)
-- ARGV[4] the records' lifetime in ms, or '' without a token
-- ARGV[5] the record's field (the token), or ''  ARGV[6..] members
-- With a token, when the field is recorded the create was applied
-- already: its answer is returned and nothing is written, so a repeat
-- after a lost reply makes the chat (and sends its first message) once.
-- Returns -1 when any of the chat's keys exists, else {message id or 0, ts or ''}.
-- Everything that can fail is checked before the first write.
if records then
  local r, key = recordOf(records, ARGV[5], records + 10)
  if r then
    local id, ts = string.match(r, '^(%d+) (.*)$')
    if not id then
      return redis.error_reply('ERR ' .. key .. ' ' .. ARGV[5] .. ' is not the record of a create: nothing written')
    end
    return {tonumber(id), ts}
  end
end
if redis.call('EXISTS', chat, msgs, ids) > 0 then
  return -1
end
for i = seen0, #KEYS do
  local kind = redis.call('TYPE', KEYS[i]).ok
  if kind ~= 'zset' and kind ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' is a ' .. kind .. ', not a user\'s chats (zset)')
  end
end
local need = {{'ZADD', chat, '0', 'm'}}
for i = seen0, #KEYS do
  need[#need + 1] = {'ZADD', KEYS[i], '0', 'm'}
end
if ARGV[3] ~= '' then
  need[#need + 1] = {'INCR', ids}
  need[#need + 1] = {'ZADD', msgs, '1', 'm'}
  need[#need + 1] = {'PUBLISH', ARGV[2], ARGV[1]}
end
if not allowed(unpack(need)) then
  return redis.error_reply('NOPERM this user may not write the keys of chat ' .. ARGV[1] ..
    ' (ZADD, INCR) or PUBLISH ' .. ARGV[2] .. ', which chat create needs')
end
if records and not mayRecord(records) then
  return redis.error_reply('NOPERM this user may not HSET and PEXPIRE ' .. KEYS[records] .. ' (the record of a create with a token)')
end
local id
if ARGV[3] ~= '' then
  -- First: see send.lua. Then INCR, the first write (on Redis 6.2 it is
  -- the one allowed cannot probe).
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  id = string.format('%d', redis.call('INCR', ids))
end
for i = 6, #ARGV do
  redis.call('ZADD', chat, 0, ARGV[i])
end
for i = seen0, #KEYS do
  redis.call('ZADD', KEYS[i], 0, ARGV[1])
end
if ARGV[3] == '' then
  if records then
    writeRecord(records, ARGV[5], '0 ', ARGV[4])
  end
  return {0, ''}
end
-- The id and ts are formatted as strings so that both Redis and the
-- embedded server store the same bytes (no float formatting, no 1e+06).
local t = redis.call('TIME')
local ts = t[1] .. '.' .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
redis.call('ZADD', msgs, id, '{"id":' .. id .. ',"ts":' .. ts .. ARGV[3])
if records then
  writeRecord(records, ARGV[5], id .. ' ' .. ts, ARGV[4])
end
return {tonumber(id), ts}
