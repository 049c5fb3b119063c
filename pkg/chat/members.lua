-- members: one page of a chat's members, their seen ids and how many stored
-- messages each has not seen. Reads only; O(ARGV[2] x log(messages)), so a
-- chat with many members is read in several calls.
-- KEYS[1] members  chat:{ID}  ZSET  member -> highest message id seen
-- KEYS[2] messages  msgs:{ID}  ZSET  message JSON -> id
local members, messages = KEYS[1], KEYS[2]
-- ARGV[1] first rank of the page  ARGV[2] page size
-- Returns -1 when the chat does not exist, else {user, seen id, unread,
-- user, seen id, unread, ...} in seen id order.
local function wrongtype(key, want)
  return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. redis.call('TYPE', key).ok .. ', not ' .. want)
end
local start = tonumber(ARGV[1])
local rows = redis.pcall('ZRANGE', members, start, start + tonumber(ARGV[2]) - 1, 'WITHSCORES')
if rows.err then
  return wrongtype(members, 'a chat (zset)')
end
if #rows == 0 then
  if start == 0 then
    return -1
  end
  return {}
end
local out = {}
for i = 1, #rows, 2 do
  local n = redis.pcall('ZCOUNT', messages, '(' .. rows[i + 1], '+inf')
  if type(n) == 'table' then
    return wrongtype(messages, 'messages (zset)')
  end
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = n
end
return out
