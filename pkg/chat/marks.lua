-- marks: mark.lua's mark() for several chats of one user in one call, on
-- a standalone server only (the chats' keys are in different slots). The
-- Go code puts lib.lua (mark()) in front of this, as it does of mark.lua.
-- KEYS[1] seen:{USER}, then per chat: chat:{ID} msgs:{ID} ids:{ID}
-- ARGV[1] user  ARGV[2] most messages to delete in this call, all chats
-- together (the caller runs trim.lua for the rest); then per chat: the
-- last message id handed, the chat id, the member's seen id when read.
-- Returns per chat, in order, what mark.lua returns; a chat that cannot
-- be marked is an error reply in its place, and the others are marked.
local n = (#KEYS - 1) / 3
local fail
if type(redis.pcall('ZSCORE', KEYS[1], ARGV[4])) == 'table' then
  fail = wrongtype(KEYS[1], 'a user\'s chats (zset)')
elseif not allowed({'ZADD', KEYS[1], '1', 'm'}) then
  fail = redis.error_reply('NOPERM this user may not write ' .. KEYS[1] .. ', which marking seen needs')
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
  local res, deleted = mark(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[1], ARGV[1], ARGV[a], ARGV[a + 1], budget, ARGV[a + 2], true)
  budget = budget - deleted
  out[i] = res
end
return out
