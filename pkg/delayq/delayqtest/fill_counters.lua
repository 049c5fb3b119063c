-- fill_counters: the counters after Fill stored messages directly, as if
-- chatq had pushed ARGV[1] messages and received ARGV[2] of them once;
-- rsync follows totalrecv when chatq's index was complete.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
local a = redis.call("HMGET", attrs, "totalrecv", "rsync")
redis.call("HINCRBY", attrs, "totalsent", ARGV[1])
local after = redis.call("HINCRBY", attrs, "totalrecv", ARGV[2])
if a[2] and a[2] == (a[1] or "0") then
  redis.call("HSET", attrs, "rsync", after)
end
return 1
