-- remove.lua: one exact entry removed as Sidekiq's API removes it: ZREM
-- from a shared set (SortedSet#delete_by_value), or LREM 1 from the
-- queue's list (JobRecord#delete) when LPOS finds it within the first
-- ARGV[3] entries, so that LREM, which stops at the first match, walks
-- no further (chatq finds the jobs it removes in a list's first 10,000).
-- Returns 1, or 0 when the entry is gone (or pushed that deep) meanwhile.
-- KEYS[1] key  schedule/retry/dead or queue:<q>  ZSET/LIST  a shared set or a queue's list
local key = KEYS[1]
local entry, isList, searchMax = ARGV[1], ARGV[2] == "list", tonumber(ARGV[3])

if isList then
  if not redis.call("LPOS", key, entry, "MAXLEN", searchMax) then
    return 0
  end
  return redis.call("LREM", key, 1, entry)
end
return redis.call("ZREM", key, entry)
