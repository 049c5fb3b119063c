-- reindex_step: one bounded step of the index rebuild: ZSCAN the queue's
-- ZSET from a cursor, COUNT ARGV[2] at a time, for about ARGV[3]
-- microseconds of server time (read with TIME, which advances inside a
-- script) and at most 50 scans, adding every received message (one with
-- <id>:rc or <id>:fr) to the index with its current visible-at. ZSCAN
-- returns every message present for the whole rebuild at least once;
-- messages chatq receives meanwhile are indexed by the receive itself.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] cursor, ARGV[2] count hint, ARGV[3] time budget, microseconds
-- Returns {next cursor, indexed}, or {"stop"} when no rebuild is running
-- (another client finished or dropped it).
if not redis.call("HGET", attrs, "rscan") then
  return {"stop"}
end
local function micros()
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
if not allowed({"ZADD", index, "0", "x"}) then
  return redis.error_reply("NOPERM this user may not ZADD " .. index .. ": nothing written")
end
local began = micros()
local cursor = ARGV[1]
local n = 0
for _ = 1, 50 do
  local r = redis.call("ZSCAN", queue, cursor, "COUNT", ARGV[2])
  local items = r[2]
  for i = 1, #items, 2 do
    local id = items[i]
    if redis.call("HEXISTS", attrs, id .. ":rc") == 1 or redis.call("HEXISTS", attrs, id .. ":fr") == 1 then
      redis.call("ZADD", index, items[i + 1], id)
      n = n + 1
    end
  end
  cursor = r[1]
  if cursor == "0" or micros() - began >= tonumber(ARGV[3]) then
    break
  end
end
return {cursor, n}
