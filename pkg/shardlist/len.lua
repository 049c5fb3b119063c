-- len: the number of items in a sharded list, as LLEN, in O(1): the lengths
-- of the two end shards plus the count of items strictly between them.
--
-- KEYS: see state.lua, which is put in front of this text.
-- Returns {length, first, last, recorded shard size (0 when none)}.
local total, e = length()
if e then return e end
return {total, first, last, recorded or 0}
