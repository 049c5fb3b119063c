-- members: one page of a chat's members, their seen ids and how many stored
-- messages each has not seen. Reads only; O(ARGV[2] x log(messages)), so a
-- chat with many members is read in several calls.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}
-- ARGV[1] first rank of the page  ARGV[2] page size
-- Returns -1 when the chat does not exist, else {user, seen id, unread,
-- user, seen id, unread, ...} in seen id order.
local function wrongtype(key, want)
  return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. redis.call('TYPE', key).ok .. ', not ' .. want)
end
local start = tonumber(ARGV[1])
local rows = redis.pcall('ZRANGE', KEYS[1], start, start + tonumber(ARGV[2]) - 1, 'WITHSCORES')
if rows.err then
  return wrongtype(KEYS[1], 'a chat (zset)')
end
if #rows == 0 then
  if start == 0 then
    return -1
  end
  return {}
end
local out = {}
for i = 1, #rows, 2 do
  local n = redis.pcall('ZCOUNT', KEYS[2], '(' .. rows[i + 1], '+inf')
  if type(n) == 'table' then
    return wrongtype(KEYS[2], 'messages (zset)')
  end
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = n
end
return out
