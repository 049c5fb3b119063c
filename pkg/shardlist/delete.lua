-- delete: remove a sharded list, in bounded calls.
--
-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- ARGV[1] 'force' to delete a list that holds items, else ''.
-- Returns {'notempty', length} (nothing deleted) when the list holds items
-- and ARGV[1] is not 'force'; else UNLINKs up to 100 of its shards, from
-- the first end inward, and, once none is left, its five keys:
-- {'more' or 'done', length at the start of this call}: 'more' while shards
-- remain (the caller calls again). The keys go last, so that
-- until then the list keeps its shape (a push meanwhile lands in it and
-- is deleted with it, which --force means), and a list never loses its
-- keys while a shard of it remains.
local total, e = length()
if e then return e end
if total > 0 and ARGV[1] ~= 'force' then
  return {'notempty', total}
end
-- Every command this call may write with is checked before the first
-- write, so that a user refused one changes nothing.
if not allowed({'unlink', base .. first}, {'set', firstkey, '0'}, {'incr', verkey}) then
  return redis.error_reply('NOPERM this user may not delete the list ' .. base .. ' (UNLINK, SET, INCR): nothing deleted')
end
local s = first
local n = 0
local gone = 0 -- items of the deleted shards strictly between the ends
while s <= last and n < 100 do
  if s > first and s < last then
    local c, e3 = llen(s)
    if e3 then return e3 end
    gone = gone + c
  end
  redis.call('unlink', base .. s)
  s = s + 1
  n = n + 1
end
if s <= last then
  -- Shard s is the new first end: the mid count keeps the items strictly
  -- between it and the last end (the deleted middle shards' and its own
  -- leave it). The next call starts there.
  local c, e4 = llen(s)
  if e4 then return e4 end
  local newmid = 0
  if s < last then
    newmid = mid - gone - c
  end
  if newmid < 0 then
    return redis.error_reply('CORRUPT ' .. midkey .. ' counted fewer items than the shards hold')
  end
  redis.call('set', firstkey, s)
  redis.call('set', midkey, newmid)
  redis.call('incr', verkey)
  return {'more', total}
end
redis.call('unlink', firstkey, lastkey, midkey, sizekey, verkey)
return {'done', total}
