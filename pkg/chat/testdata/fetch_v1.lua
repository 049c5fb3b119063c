-- fetch: read a member's unseen messages of one chat and, in mark mode,
-- mark them seen and delete the messages every member has seen.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- KEYS[4] seen:{USER} (mark mode on a standalone server only: the script
--         moves the user's index entry too; on a cluster the caller does,
--         after this script)
-- ARGV[1] user  ARGV[2] mode: 'peek', 'mark' or 'count'
-- ARGV[3] read after this id when it is above the member's seen id ('0': no)
--         and not above the chat's last id (else the chat was recreated)
-- ARGV[4] chat id (the member of KEYS[4]; only with KEYS[4])
-- Returns -1 when the chat does not exist, -2 when the user is not a
-- member (nothing written either way); in count mode {seen id, count};
-- else {seen id, last id returned or '', message, message, ...}.
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen then
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return -1
  end
  return -2
end
local from = seen
local after = tonumber(ARGV[3])
if after > tonumber(seen) and after <= tonumber(redis.call('GET', KEYS[3]) or '0') then
  from = ARGV[3]
end
if ARGV[2] == 'count' then
  return {seen, redis.call('ZCOUNT', KEYS[2], '(' .. from, '+inf')}
end
local rows = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. from, '+inf', 'WITHSCORES')
local last = ''
if #rows > 0 then
  last = rows[#rows]
  if ARGV[2] == 'mark' then
    if KEYS[4] then
      -- The index follows chat:{ID} in the same atomic step. XX: a chat
      -- that leave removed from the index is never put back; GT: the
      -- entry only moves forward. It is the first write, so should it
      -- fail (a key of the wrong type) nothing has been marked.
      redis.call('ZADD', KEYS[4], 'XX', 'GT', last, ARGV[4])
    end
    -- XX: never re-add a member who left meanwhile; GT: seen ids only
    -- move forward, whatever order racing fetches run in.
    redis.call('ZADD', KEYS[1], 'XX', 'GT', last, ARGV[1])
    local low = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', low[2])
  end
end
local out = {seen, last}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
end
return out
