-- join: add a member who sees only the messages sent from now on.
-- KEYS[1] chat:{ID}  KEYS[2] ids:{ID}
-- KEYS[3] seen:{USER} (standalone only; on a cluster the caller writes it
--         after this script succeeds)
-- ARGV[1] user  ARGV[2] chat id
-- Returns -1 when the chat does not exist, else {1 if added or 0 if already
-- a member, the member's seen id}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
local added = 0
if not seen then
  seen = redis.call('GET', KEYS[2]) or '0'
  redis.call('ZADD', KEYS[1], seen, ARGV[1])
  added = 1
end
if KEYS[3] then
  -- GT: an existing entry only moves forward.
  redis.call('ZADD', KEYS[3], 'GT', seen, ARGV[2])
end
return {added, seen}
