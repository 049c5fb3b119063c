-- leased: active tasks whose lease expired before a cutoff, as asynq's
-- listLeaseExpiredCmd reads them for its recoverer, in a bounded page.
local lease = KEYS[1]
-- ARGV[1] the cutoff (Unix s), ARGV[2] how many expired entries to pass
-- over (left by earlier batches), ARGV[3] the most returned (100 or so),
-- ARGV[4] the task key prefix, ARGV[5...] ids: when given, only those are
-- looked at (ARGV[2] and ARGV[3] then do not apply).
-- Returns {entries looked at, then per task: id, lease score, msg, state}.
local entries = {}
if #ARGV >= 5 then
  for i = 5, #ARGV do
    local score = redis.call("ZSCORE", lease, ARGV[i])
    if score and tonumber(score) <= tonumber(ARGV[1]) then
      table.insert(entries, ARGV[i])
      table.insert(entries, score)
    end
  end
else
  entries = redis.call("ZRANGEBYSCORE", lease, "-inf", ARGV[1], "WITHSCORES", "LIMIT", ARGV[2], ARGV[3])
end
local out = {#entries / 2}
for i = 1, #entries, 2 do
  local f = redis.call("HMGET", ARGV[4] .. entries[i], "msg", "state")
  table.insert(out, entries[i])
  table.insert(out, entries[i + 1])
  table.insert(out, f[1])
  table.insert(out, f[2])
end
return out
