-- leased: active tasks whose lease expired before a cutoff, as asynq's
-- listLeaseExpiredCmd reads them for its recoverer, in a bounded page.
-- KEYS[1] lease  asynq:{NAME}:lease  ZSET  active task id -> lease expiry
local lease = KEYS[1]
-- ARGV[1] the cutoff (Unix s), ARGV[2] the rank of the first entry to look
-- at (those before it, lowest scores first, were left by earlier batches;
-- a rank, not a LIMIT offset, which ZRANGEBYSCORE would walk), ARGV[3] the
-- most returned (100 or so),
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
  local from = tonumber(ARGV[2])
  local got = redis.call("ZRANGE", lease, from, from + tonumber(ARGV[3]) - 1, "WITHSCORES")
  for i = 1, #got, 2 do
    if tonumber(got[i + 1]) > tonumber(ARGV[1]) then
      break
    end
    table.insert(entries, got[i])
    table.insert(entries, got[i + 1])
  end
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
