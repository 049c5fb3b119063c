-- requeue.lua: entries of a shared set (schedule, retry or dead) back to
-- their queue, as Sidekiq's SortedEntry#retry and #add_to_queue do: each
-- exact entry is ZREMed and, only if it was still there, its new JSON
-- LPUSHed to queue:<q>, and <q> SADDed to queues (Client.push's
-- atomic_push). ARGV: the queue's name, then pairs (entry, JSON to push).
-- Returns 1 (moved) or 0 (gone meanwhile) for each pair.
-- KEYS[1] set  schedule/retry/dead  ZSET  score -> job JSON
-- KEYS[2] list  queue:<q>  LIST  the queue's jobs
-- KEYS[3] queuesKey  queues  SET  queue names
local set, list, queuesKey = KEYS[1], KEYS[2], KEYS[3]
local name = ARGV[1]

local out, moved = {}, false
for i = 2, #ARGV, 2 do
  if redis.call("ZREM", set, ARGV[i]) == 1 then
    redis.call("LPUSH", list, ARGV[i + 1])
    out[#out + 1] = 1
    moved = true
  else
    out[#out + 1] = 0
  end
end
if moved then
  redis.call("SADD", queuesKey, name)
end
return out
