-- Purges a queue as kombu's _purge does (`celery purge`): the queue's
-- lists, one per priority step (KEYS[1..#KEYS-1]), are deleted; unacked
-- messages, which workers hold, are left. KEYS[#KEYS] is the binding set
-- of the queue's exchange: with it missing and the lists empty, there is
-- no such queue. ARGV[1] is the most messages it may delete (-1: any):
-- when the lists hold more, nothing is deleted.
-- Returns {1, messages deleted}, {0, messages held} when more than
-- ARGV[1], {-1, 0} for no such queue. UNLINK frees a long list off the
-- main thread, where kombu's DEL would free it inline.
-- KEYS[1..] lists  <queue>  LIST  the queue's lists, one per priority step (<queue>, <queue>\x06\x163…); the last key is the binding set below
-- KEYS[#KEYS] binding  _kombu.binding.<exchange>  SET  the queue's exchange's bindings (the last key)
local binding = KEYS[#KEYS]
local most = tonumber(ARGV[1])
local lists = #KEYS - 1
local n = 0
for i = 1, lists do
  n = n + redis.call("LLEN", KEYS[i])
end
if n == 0 and redis.call("EXISTS", binding) == 0 then
  return {-1, 0}
end
if most >= 0 and n > most then
  return {0, n}
end
for i = 1, lists do
  redis.call("UNLINK", KEYS[i])
end
return {1, n}
