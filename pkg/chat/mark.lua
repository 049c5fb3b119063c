-- mark: after a member was handed the messages of one chat up to an id,
-- mark them seen and delete the messages every member has seen (at most
-- ARGV[4] of them: the caller runs trim.lua for the rest).
-- KEYS[1] members  chat:{ID}  ZSET  member -> highest message id seen
-- KEYS[2] messages  msgs:{ID}  ZSET  message JSON -> id
-- KEYS[3] counter  ids:{ID}  STRING  the chat's last message id
-- KEYS[4] chats  seen:{USER}  ZSET  the user's chats: chat id -> seen id; optional: standalone only (the entry moves in the same atomic step; on a cluster the caller moves it after this)
local members, messages, counter, chats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- ARGV[1] user  ARGV[2] the last message id handed  ARGV[3] chat id
-- ARGV[4] most messages to delete  ARGV[5] the member's seen id when read
-- Returns -1 when the chat does not exist, -2 when the user is not a
-- member, -3 when the chat was deleted and created again since it was
-- read (the member's seen id is below what it was, which GT otherwise
-- rules out, or the chat has no message counter): nothing written in
-- these cases. Else {the number of seen messages left to delete, the id
-- marked: ARGV[2], or the chat's last id when that is lower}.
-- Everything that can fail is checked before the first write.
return (mark(members, messages, counter, chats, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]))
