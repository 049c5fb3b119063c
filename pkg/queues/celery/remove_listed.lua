-- Removes one message from a queue's list, if it is still there within
-- the last ARGV[2] elements (LPOS MAXLEN bounds the walk, and LREM then
-- stops at the element LPOS found).
-- KEYS[1] list  <queue>  LIST  the queue's messages (one list per priority step)
local list = KEYS[1]
local raw, maxlen = ARGV[1], tonumber(ARGV[2])
if not redis.call("LPOS", list, raw, "RANK", -1, "MAXLEN", maxlen) then
  return 0
end
return redis.call("LREM", list, -1, raw)
