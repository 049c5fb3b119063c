-- wake: run just before a blocking pop waits on shard ARGV[2], which was this
-- end's shard when the list was last seen empty. If the endpoints have since
-- moved so that the shard is outside the list, push the wake-up marker into
-- it so that the wait that follows (BLMOVE of the shard onto itself) returns
-- at once and the caller looks again ("Redis in Action" §11.4.4). The
-- caller's next pop removes the marker again.
--
-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- Only shards outside first..last are written, never an end or a middle
-- shard.
-- ARGV[1] = "left" | "right", ARGV[2] = shard number, ARGV[3] = marker.
-- Returns 1 when the marker was pushed, else 0.
local left = ARGV[1] == 'left'
local shard = tonumber(ARGV[2])
if shard < first or shard > last then
  if not allowed({left and 'lpush' or 'rpush', base .. shard, ARGV[3]}) then
    return redis.error_reply('NOPERM this user may not ' .. (left and 'LPUSH' or 'RPUSH') .. ' ' .. base .. shard)
  end
  local r = redis.pcall(left and 'lpush' or 'rpush', base .. shard, ARGV[3])
  if type(r) == 'table' then
    local m = moving(r, base .. shard)
    if m then return m end
  end
  if type(r) == 'table' and string.find(r.err, 'WRONGTYPE', 1, true) then
    return redis.error_reply('CORRUPT ' .. base .. shard .. ' is a ' ..
      redis.call('type', base .. shard)['ok'] .. ', not a list')
  elseif type(r) == 'table' then
    return r -- refused (Redis 6.2 cannot check first): the only write
  end
  return 1
end
return 0
