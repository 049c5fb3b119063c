-- layout: the endpoints, mid count, recorded shard size and write counter
-- of a sharded list, and the lengths of at most ARGV[2] of its shards,
-- starting at shard ARGV[1] ('' = the first). The client calls it again
-- from the next shard until it has them all, passing the counter it got
-- first as ARGV[3]: if a write happened meanwhile the reply is only
-- {ver}, and the client starts over.
--
-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- Returns {ver, first, last, mid (-1 when the key is absent), recorded size
-- (0 when none), from, length of shard from, ..., length of shard to}.
-- A shard strictly between the ends that is empty or not a list is a
-- CORRUPT error.
if ARGV[3] ~= '' and ARGV[3] ~= ver then
  return {ver}
end
local from = first
if ARGV[1] ~= '' then from = tonumber(ARGV[1]) end
if not from or from < first then
  return {ver}
end
local to = math.min(last, from + tonumber(ARGV[2]) - 1)
local ret = {ver, first, last, stored or -1, recorded or 0, from}
for s = from, to do
  local n, e = llen(s)
  if e then return e end
  if n == 0 and s > first and s < last then
    return redis.error_reply('CORRUPT shard ' .. base .. s ..
      ' is empty or missing, but lies between the ends ' .. firstkey .. ' = ' .. first .. ' and ' .. lastkey .. ' = ' .. last)
  end
  ret[#ret + 1] = n
end
return ret
