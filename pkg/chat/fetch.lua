-- fetch: read a member's unseen messages of one chat, or count them.
-- Reads only: marking is mark.lua, run once the messages were handed over.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
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
local seen = redis.pcall('ZSCORE', KEYS[1], ARGV[1])
if type(seen) == 'table' then
  return wrongtype(KEYS[1], 'a chat (zset)')
end
if not seen then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return -1
  end
  return -2
end
local last = redis.pcall('GET', KEYS[3])
if type(last) == 'table' then
  return wrongtype(KEYS[3], 'a message counter (string)')
elseif last and not tonumber(last) then
  return redis.error_reply('ERR ' .. KEYS[3] .. ' does not hold a message id')
end
local from = seen
local after = tonumber(ARGV[3])
if after > tonumber(seen) and after <= (tonumber(last) or 0) then
  from = ARGV[3]
end
if ARGV[2] == 'count' then
  local n = redis.pcall('ZCOUNT', KEYS[2], '(' .. from, '+inf')
  if type(n) == 'table' then
    return wrongtype(KEYS[2], 'messages (zset)')
  end
  return {seen, n}
end
local rows = redis.pcall('ZRANGEBYSCORE', KEYS[2], '(' .. from, '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[4])
if rows.err then
  return wrongtype(KEYS[2], 'messages (zset)')
end
table.insert(rows, 1, seen)
return rows
