-- import: store up to 100 messages of a backup under their own ids, with
-- their due times, receive counts and first-receive times.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] realtime channel <ns>:rt:<q>
-- ARGV[2..] seven per message: id, visible-at ms, rc ("" for never
-- received), fr ms ("" for none), body length in UTF-16 code units, body,
-- record of a dead-letter move ("<queue> <rc> <ms>", or "" for none)
-- Returns {"ok", notified, s1, s2, ...}, one status per message: "imported",
-- "present" (the id holds this very body: left as it is) or "conflict" (the
-- id holds another body: left as it is); or {"notfound"}; or {"toolong", i,
-- maxsize} (message i is over the queue's maxsize: nothing written).
-- Everything that can fail is checked before the first write. totalsent
-- grows by the messages imported; totalrecv and rsync stay (nothing was
-- received, and the index gets every received message imported).
local a = attributes(attrs, "totalsent")
if not a then
  return {"notfound"}
end
if not whole(a[3], 12, true) then
  return redis.error_reply("ERR " .. attrs .. ": maxsize " .. a[3] .. " is not a number: nothing written")
end
if a[4] and not whole(a[4], 18, true) then
  return redis.error_reply("ERR " .. attrs .. ": totalsent " .. a[4] .. " is not an integer: nothing written")
end
local e = wrongtype(queue, "zset", "sorted set", ": nothing written") or wrongtype(index, "zset", "sorted set", ": nothing written")
if e then
  return e
end
if not allowed({"ZADD", queue, "0", "x"}, {"ZADD", index, "0", "x"}, {"ZREM", index, "x"}, {"HSET", attrs, "x", "x"},
    {"HDEL", attrs, "x"}, {"HINCRBY", attrs, "totalsent", "1"}) then
  return redis.error_reply("NOPERM this user may not import into " .. queue .. " (ZADD, ZREM, HSET, HDEL, HINCRBY): nothing written")
end
local notify = allowed({"PUBLISH", ARGV[1], "1"})
local maxsize = tonumber(a[3])
local status = {}
for i = 2, #ARGV, 7 do
  local k = (i - 2) / 7 + 1
  if maxsize ~= -1 and tonumber(ARGV[i + 4]) > maxsize then
    return {"toolong", k, a[3]}
  end
  local id, body = ARGV[i], ARGV[i + 5]
  local have = redis.call("HGET", attrs, id)
  if have == false or have == nil then
    status[k] = "imported"
  elseif have ~= body then
    status[k] = "conflict"
  elseif redis.call("ZSCORE", queue, id) then
    status[k] = "present"
  else
    -- The body without its ZSET entry (a half-deleted message): restore it.
    status[k] = "imported"
  end
end
local imported = 0
local ready = false
for i = 2, #ARGV, 7 do
  local k = (i - 2) / 7 + 1
  if status[k] == "imported" then
    local id, due, rc, fr = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
    redis.call("ZADD", queue, due, id)
    redis.call("HSET", attrs, id, ARGV[i + 5])
    if rc ~= "" or fr ~= "" then
      if rc ~= "" then
        redis.call("HSET", attrs, id .. ":rc", rc)
      else
        redis.call("HDEL", attrs, id .. ":rc")
      end
      if fr ~= "" then
        redis.call("HSET", attrs, id .. ":fr", fr)
      else
        redis.call("HDEL", attrs, id .. ":fr")
      end
      redis.call("ZADD", index, due, id)
    else
      -- Leftovers of an earlier message of this id would make it look received.
      redis.call("HDEL", attrs, id .. ":rc", id .. ":fr")
      redis.call("ZREM", index, id)
    end
    if ARGV[i + 6] ~= "" then
      redis.call("HSET", attrs, id .. ":dl", ARGV[i + 6])
    else
      redis.call("HDEL", attrs, id .. ":dl")
    end
    imported = imported + 1
  end
end
if imported > 0 then
  redis.call("HINCRBY", attrs, "totalsent", imported)
end
local notified = 0
if imported > 0 and notify then
  local r = redis.pcall("PUBLISH", ARGV[1], redis.call("ZCARD", queue))
  if type(r) == "number" then
    notified = 1
  end
end
local res = {"ok", notified}
for _, s in ipairs(status) do
  res[#res + 1] = s
end
return res
