-- fill_counters: the counters after Fill stored messages directly, as if
-- chatq had pushed ARGV[1] messages and received ARGV[2] of them once;
-- rsync follows totalrecv when chatq's index was complete.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
local a = redis.call("HMGET", KEYS[2], "totalrecv", "rsync")
redis.call("HINCRBY", KEYS[2], "totalsent", ARGV[1])
local after = redis.call("HINCRBY", KEYS[2], "totalrecv", ARGV[2])
if a[2] and a[2] == (a[1] or "0") then
  redis.call("HSET", KEYS[2], "rsync", after)
end
return 1
