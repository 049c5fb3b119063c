-- ack: delete received messages (RSMQ deleteMessage, for many at once),
-- each named by a bare id or by a receipt (id, receive count and first
-- receive time of one delivery).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV: triples id, rc, fr; rc and fr are "" for a bare id
-- Returns {"notfound"} when the queue does not exist, else {"ok", s1, s2,
-- ...}, one status per triple: "acked", "missing" (nothing of it was in
-- the queue) or "stale" (the receipt names an earlier delivery: the message
-- was received again since, and stays).
-- Every receipt is checked before the first write.
local res = {"ok"}
-- A receipt whose message is in the ZSET shows the queue exists (create
-- writes the attributes before any push; delete removes every key at once)
-- and, by the HMGET, that the hash is a hash.
local found = false
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  local status = ""
  if ARGV[i + 1] ~= "" and redis.call("ZSCORE", KEYS[1], id) then
    found = true
    local m = redis.call("HMGET", KEYS[2], id .. ":rc", id .. ":fr")
    if tonumber(m[1] or "") ~= tonumber(ARGV[i + 1]) or tonumber(m[2] or "") ~= tonumber(ARGV[i + 2]) then
      status = "stale"
    end
  end
  res[#res + 1] = status
end
-- Otherwise the attributes are read as before, which also makes a
-- wrong-type hash fail before the first write (the first ZREM does that for
-- the ZSET).
if not found and not attributes(KEYS[2]) then
  return {"notfound"}
end
-- A wrong-type index would fail after the first write: check it first.
local e = wrongtype(KEYS[3], "zset", "zset", ": nothing written")
if e then
  return e
end
local done = {}
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  local k = (i + 2) / 3 + 1
  if res[k] == "" then
    -- Missing only when nothing of it was there: deleting a body left
    -- without its ZSET entry is an ack that did something.
    local z = redis.call("ZREM", KEYS[1], id)
    local h = redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
    local r = redis.call("ZREM", KEYS[3], id)
    if z == 0 and h == 0 and r == 0 and not done[id] then
      res[k] = "missing"
    else
      res[k] = "acked"
      done[id] = true
    end
  end
end
return res
