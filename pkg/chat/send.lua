-- send: append a message to a chat, atomically: counter + ZADD, no lock.
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}  KEYS[3] ids:{ID}
-- ARGV[1] sender  ARGV[2] message JSON after the id and ts
-- ARGV[3] notification channel  ARGV[4] chat id
-- Returns -1 when the chat does not exist, -2 when the sender is not a
-- member, else {message id, ts}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return -2
end
-- The id and ts are formatted as strings so that both Redis and the
-- embedded server store the same bytes (no float formatting, no 1e+06).
local id = string.format('%d', redis.call('INCR', KEYS[3]))
local t = redis.call('TIME')
local ts = t[1] .. '.' .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
redis.call('ZADD', KEYS[2], id, '{"id":' .. id .. ',"ts":' .. ts .. ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {tonumber(id), ts}
