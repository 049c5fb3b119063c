-- marks: mark.lua's mark() for several chats of one user in one call, on
-- a standalone server only (the chats' keys are in different slots). The
-- Go code puts lib.lua (mark()) in front of this, as it does of mark.lua.
-- KEYS[1] chats  seen:{USER}  ZSET  the user's chats: chat id -> seen id
-- KEYS[2..] members  chat:{ID}  ZSET  per chat, every third key from here: member -> highest message id seen
-- KEYS[3..] messages  msgs:{ID}  ZSET  per chat, every third key from here: message JSON -> id
-- KEYS[4..] counter  ids:{ID}  STRING  per chat, every third key from here: the chat's last message id
local chats = KEYS[1]
-- ARGV[1] user  ARGV[2] most messages to delete in this call, all chats
-- together (the caller runs trim.lua for the rest); then per chat: the
-- last message id handed, the chat id, the member's seen id when read.
-- Returns per chat, in order, what mark.lua returns; a chat that cannot
-- be marked is an error reply in its place, and the others are marked.
local n = (#KEYS - 1) / 3
local fail
if type(redis.pcall('ZSCORE', chats, ARGV[4])) == 'table' then
  fail = wrongtype(chats, 'a user\'s chats (zset)')
elseif not allowed({'ZADD', chats, '1', 'm'}) then
  fail = redis.error_reply('NOPERM this user may not write ' .. chats .. ', which marking seen needs')
end
if fail then
  -- As mark.lua would for each chat: nothing written.
  local out = {}
  for i = 1, n do
    out[i] = fail
  end
  return out
end
local budget = tonumber(ARGV[2])
local out = {}
for i = 1, n do
  local k, a = 3 * i - 2, 3 * i
  local res, deleted = mark(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], chats, ARGV[1], ARGV[a], ARGV[a + 1], budget, ARGV[a + 2], true)
  budget = budget - deleted
  out[i] = res
end
return out
