-- remove.lua: one exact entry removed as Sidekiq's API removes it: ZREM
-- from a shared set (SortedSet#delete_by_value), or LREM 1 from the
-- queue's list (JobRecord#delete) only when the list has at most ARGV[3]
-- entries, since LREM walks it. Returns 1, 0 (gone meanwhile) or -4 (the
-- list is too long).
local key = KEYS[1]
local entry, isList, listMax = ARGV[1], ARGV[2] == "list", tonumber(ARGV[3])

if isList then
  if redis.call("LLEN", key) > listMax then
    return -4
  end
  return redis.call("LREM", key, 1, entry)
end
return redis.call("ZREM", key, entry)
