-- setmid: store the mid count of a list written before the count existed,
-- counted by the client with layout calls. It is stored only if the list
-- still has no count and the same endpoints (no chatq write can happen in
-- between: every one needs the count and would be refused).
--
-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- ARGV[1] = first, ARGV[2] = last, ARGV[3] = the count.
-- Returns 1 when the list has its count now, 0 when the list changed (the client counts again).
if stored then
  return 1 -- another client stored it
end
if first ~= tonumber(ARGV[1]) or last ~= tonumber(ARGV[2]) then
  return 0
end
local n = tonumber(ARGV[3])
if not allowed({'set', midkey, '0'}) then
  return redis.error_reply('NOPERM this user may not SET ' .. midkey)
end
if n > 0 then
  redis.call('set', midkey, n)
end
return 1
