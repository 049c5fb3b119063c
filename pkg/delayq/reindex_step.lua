-- reindex_step: one bounded step of the index rebuild: ZSCAN the queue's
-- ZSET from a cursor, COUNT ARGV[2] at a time, for about ARGV[3]
-- microseconds of server time (read with TIME, which advances inside a
-- script) and at most 50 scans, adding every received message (one with
-- <id>:rc or <id>:fr) to the index with its current visible-at. ZSCAN
-- returns every message present for the whole rebuild at least once;
-- messages chatq receives meanwhile are indexed by the receive itself.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- ARGV[1] cursor, ARGV[2] count hint, ARGV[3] time budget, microseconds
-- Returns {next cursor, indexed}, or {"stop"} when no rebuild is running
-- (another client finished or dropped it).
if not redis.call("HGET", KEYS[2], "rscan") then
  return {"stop"}
end
local function micros()
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
if not allowed({"ZADD", KEYS[3], "0", "x"}) then
  return redis.error_reply("NOPERM this user may not ZADD " .. KEYS[3] .. ": nothing written")
end
local began = micros()
local cursor = ARGV[1]
local n = 0
for _ = 1, 50 do
  local r = redis.call("ZSCAN", KEYS[1], cursor, "COUNT", ARGV[2])
  local items = r[2]
  for i = 1, #items, 2 do
    local id = items[i]
    if redis.call("HEXISTS", KEYS[2], id .. ":rc") == 1 or redis.call("HEXISTS", KEYS[2], id .. ":fr") == 1 then
      redis.call("ZADD", KEYS[3], items[i + 1], id)
      n = n + 1
    end
  end
  cursor = r[1]
  if cursor == "0" or micros() - began >= tonumber(ARGV[3]) then
    break
  end
end
return {cursor, n}
