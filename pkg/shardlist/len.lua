-- len: the number of items in a sharded list, as LLEN, in O(1): the lengths
-- of the two end shards plus the count of items strictly between them.
--
-- KEYS: see state.lua, which is put in front of this text.
-- Returns {length, first, last, recorded shard size (0 when none)}.
local a, e = llen(first)
if e then return e end
local total = a + mid
if first ~= last then
  local b, e2 = llen(last)
  if e2 then return e2 end
  total = total + b
end
return {total, first, last, recorded or 0}
