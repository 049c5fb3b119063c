-- ack: delete received messages (RSMQ deleteMessage, for many at once),
-- each named by a bare id or by a receipt (id, receive count and first
-- receive time of one delivery).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages)
-- ARGV: triples id, rc, fr; rc and fr are "" for a bare id
-- KEYS[4], optional: <ns>:<q>:T:<token> (STRING), the record of an ack
--   made with a client-chosen token; ARGV[1] is then its lifetime in ms and
--   the triples follow. When it exists the ack was applied already: its
--   answer is returned and nothing is written, so a repeat after a lost
--   reply reports what the first call acked (not "missing").
-- Returns {"notfound"} when the queue does not exist, else {"ok", s1, s2,
-- ...}, one status per triple: "acked", "missing" (nothing of it was in
-- the queue) or "stale" (the receipt names an earlier delivery: the message
-- was received again since, and stays).
-- Every receipt is checked before the first write.
local record = KEYS[4]
local first = 1
if record then
  first = 2
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call("GET", record)
  if r then
    return cjson.decode(r)
  end
end
local res = {"ok"}
-- A receipt whose message is in the ZSET shows the queue exists (create
-- writes the attributes before any push; delete removes every key at once)
-- and, by the HMGET, that the hash is a hash.
local found = false
for i = first, #ARGV, 3 do
  local id = ARGV[i]
  local status = ""
  if ARGV[i + 1] ~= "" and redis.call("ZSCORE", KEYS[1], id) then
    found = true
    if not current(KEYS[2], id, ARGV[i + 1], ARGV[i + 2]) then
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
if not allowed({"ZREM", KEYS[1], "x"}, {"HDEL", KEYS[2], "x"}, {"ZREM", KEYS[3], "x"}) then
  return redis.error_reply("NOPERM this user may not ack in " .. KEYS[1] .. " (ZREM, HDEL): nothing written")
end
if record and not allowed({"SET", record, "x", "PX", "1"}) then
  return redis.error_reply("NOPERM this user may not SET " .. record .. " (the record of an ack with a token): nothing written")
end
local done = {}
for i = first, #ARGV, 3 do
  local id = ARGV[i]
  local k = (i - first) / 3 + 2
  if res[k] == "" then
    -- Missing only when nothing of it was there: deleting a body left
    -- without its ZSET entry is an ack that did something.
    local z = redis.call("ZREM", KEYS[1], id)
    local h = redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
    local r = redis.call("ZREM", KEYS[3], id)
    -- The record of a dead-letter move goes with the message (alone, it
    -- is no message: it does not make an ack of a missing id count).
    redis.call("HDEL", KEYS[2], id .. ":dl")
    if z == 0 and h == 0 and r == 0 and not done[id] then
      res[k] = "missing"
    else
      res[k] = "acked"
      done[id] = true
    end
  end
end
if record then
  redis.call("SET", record, cjson.encode(res), "PX", ARGV[1])
end
return res
