-- fetch: read a member's unseen messages of one chat, or count them.
-- Reads only: marking is mark.lua, run once the messages were handed over.
-- KEYS[1] members  chat:{ID}  ZSET  member -> highest message id seen
-- KEYS[2] messages  msgs:{ID}  ZSET  message JSON -> id
-- KEYS[3] counter  ids:{ID}  STRING  the chat's last message id
local members, messages, counter = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] user  ARGV[2] mode: 'read' or 'count'
-- ARGV[3] read after this id when it is above the member's seen id ('0': no)
--         and not above the chat's last id (else the chat was recreated)
-- ARGV[4] most messages to return (read mode), so a call does bounded work
-- Returns -1 when the chat does not exist, -2 when the user is not a
-- member; in count mode {seen id, count}; else {seen id, message, id,
-- message, id, ...}, oldest first.
local function wrongtype(key, want)
  return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. redis.call('TYPE', key).ok .. ', not ' .. want)
end
local seen = redis.pcall('ZSCORE', members, ARGV[1])
if type(seen) == 'table' then
  return wrongtype(members, 'a chat (zset)')
end
if not seen then
  if redis.call('EXISTS', members) == 0 then
    return -1
  end
  return -2
end
local last = redis.pcall('GET', counter)
if type(last) == 'table' then
  return wrongtype(counter, 'a message counter (string)')
elseif last and not tonumber(last) then
  return redis.error_reply('ERR ' .. counter .. ' does not hold a message id')
end
local from = seen
local after = tonumber(ARGV[3])
if after > tonumber(seen) and after <= (tonumber(last) or 0) then
  from = ARGV[3]
end
if ARGV[2] == 'count' then
  local n = redis.pcall('ZCOUNT', messages, '(' .. from, '+inf')
  if type(n) == 'table' then
    return wrongtype(messages, 'messages (zset)')
  end
  return {seen, n}
end
local rows = redis.pcall('ZRANGEBYSCORE', messages, '(' .. from, '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[4])
if rows.err then
  return wrongtype(messages, 'messages (zset)')
end
table.insert(rows, 1, seen)
return rows
