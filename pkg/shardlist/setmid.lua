-- setmid: store the mid count of a list written before the count existed,
-- counted by the client with layout calls. It is stored only if the list
-- still has no count and the same endpoints (no chatq write can happen in
-- between: every one needs the count and would be refused).
--
-- KEYS: see state.lua, which is put in front of this text.
-- ARGV[1] = first, ARGV[2] = last, ARGV[3] = the count.
-- Returns 1 when the list has its count now, 0 when the list changed (the client counts again).
if stored then
  return 1 -- another client stored it
end
if first ~= tonumber(ARGV[1]) or last ~= tonumber(ARGV[2]) then
  return 0
end
local n = tonumber(ARGV[3])
if not allowed({'set', KEYS[3], '0'}) then
  return redis.error_reply('NOPERM this user may not SET ' .. KEYS[3])
end
if n > 0 then
  redis.call('set', KEYS[3], n)
end
return 1
