-- import: store up to 100 messages of a backup under their own ids, with
-- their due times, receive counts and first-receive times.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages: every message with an <id>:rc is there, with its
-- visible-at)
-- ARGV[1] realtime channel <ns>:rt:<q>
-- ARGV[2..] six per message: id, visible-at ms, rc ("" for never received),
-- fr ms ("" for none), body length in UTF-16 code units, body
-- Returns {"ok", notified, s1, s2, ...}, one status per message: "imported",
-- "present" (the id holds this very body: left as it is) or "conflict" (the
-- id holds another body: left as it is); or {"notfound"}; or {"toolong", i,
-- maxsize} (message i is over the queue's maxsize: nothing written).
-- Everything that can fail is checked before the first write. totalsent
-- grows by the messages imported; totalrecv and rsync stay (nothing was
-- received, and the index gets every received message imported).
local a = attributes(KEYS[2], "totalsent")
if not a then
  return {"notfound"}
end
if not whole(a[3], 12, true) then
  return redis.error_reply("ERR " .. KEYS[2] .. ": maxsize " .. a[3] .. " is not a number: nothing written")
end
if a[4] and not whole(a[4], 18, true) then
  return redis.error_reply("ERR " .. KEYS[2] .. ": totalsent " .. a[4] .. " is not an integer: nothing written")
end
local e = wrongtype(KEYS[1], "zset", "sorted set", ": nothing written") or wrongtype(KEYS[3], "zset", "sorted set", ": nothing written")
if e then
  return e
end
if not allowed({"ZADD", KEYS[1], "0", "x"}, {"ZADD", KEYS[3], "0", "x"}, {"ZREM", KEYS[3], "x"}, {"HSET", KEYS[2], "x", "x"},
    {"HDEL", KEYS[2], "x"}, {"HINCRBY", KEYS[2], "totalsent", "1"}) then
  return redis.error_reply("NOPERM this user may not import into " .. KEYS[1] .. " (ZADD, ZREM, HSET, HDEL, HINCRBY): nothing written")
end
local notify = allowed({"PUBLISH", ARGV[1], "1"})
local maxsize = tonumber(a[3])
local status = {}
for i = 2, #ARGV, 6 do
  local k = (i - 2) / 6 + 1
  if maxsize ~= -1 and tonumber(ARGV[i + 4]) > maxsize then
    return {"toolong", k, a[3]}
  end
  local id, body = ARGV[i], ARGV[i + 5]
  local have = redis.call("HGET", KEYS[2], id)
  if have == false or have == nil then
    status[k] = "imported"
  elseif have ~= body then
    status[k] = "conflict"
  elseif redis.call("ZSCORE", KEYS[1], id) then
    status[k] = "present"
  else
    -- The body without its ZSET entry (a half-deleted message): restore it.
    status[k] = "imported"
  end
end
local imported = 0
local ready = false
for i = 2, #ARGV, 6 do
  local k = (i - 2) / 6 + 1
  if status[k] == "imported" then
    local id, due, rc, fr = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
    redis.call("ZADD", KEYS[1], due, id)
    redis.call("HSET", KEYS[2], id, ARGV[i + 5])
    if rc ~= "" or fr ~= "" then
      if rc ~= "" then
        redis.call("HSET", KEYS[2], id .. ":rc", rc)
      else
        redis.call("HDEL", KEYS[2], id .. ":rc")
      end
      if fr ~= "" then
        redis.call("HSET", KEYS[2], id .. ":fr", fr)
      else
        redis.call("HDEL", KEYS[2], id .. ":fr")
      end
      redis.call("ZADD", KEYS[3], due, id)
    else
      -- Leftovers of an earlier message of this id would make it look received.
      redis.call("HDEL", KEYS[2], id .. ":rc", id .. ":fr")
      redis.call("ZREM", KEYS[3], id)
    end
    imported = imported + 1
  end
end
if imported > 0 then
  redis.call("HINCRBY", KEYS[2], "totalsent", imported)
end
local notified = 0
if imported > 0 and notify then
  local r = redis.pcall("PUBLISH", ARGV[1], redis.call("ZCARD", KEYS[1]))
  if type(r) == "number" then
    notified = 1
  end
end
local res = {"ok", notified}
for _, s in ipairs(status) do
  res[#res + 1] = s
end
return res
