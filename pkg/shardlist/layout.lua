-- layout: the endpoints, mid count, recorded shard size and write counter
-- of a sharded list, and the lengths of at most ARGV[2] of its shards,
-- starting at shard ARGV[1] ('' = the first). The client calls it again
-- from the next shard until it has them all, passing the counter it got
-- first as ARGV[3]: if a write happened meanwhile the reply is only
-- {ver}, and the client starts over.
--
-- KEYS: see state.lua, which is put in front of this text.
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
      ' is empty or missing, but lies between the ends ' .. KEYS[1] .. ' = ' .. first .. ' and ' .. KEYS[2] .. ' = ' .. last)
  end
  ret[#ret + 1] = n
end
return ret
