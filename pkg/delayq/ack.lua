-- KEYS[1] queue  <ns>:<q>  ZSET  id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  attributes, id -> body, <id>:rc, <id>:fr, <id>:dl
-- KEYS[3] index  <ns>:<q>:R  ZSET  id -> visible-at ms of the received messages (chatq's, for stats)
-- KEYS[4..14] records  <ns>:<q>:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
local records = KEYS[4] and 4 -- the first record key, when the ack has a token
-- ack: delete received messages (RSMQ deleteMessage, for many at once),
-- each named by a bare id or by a receipt (id, receive count and first
-- receive time of one delivery).
-- ARGV: triples id, rc, fr; rc and fr are "" for a bare id
-- With a client-chosen token, the records (luascript.Record) are passed,
--   ARGV[1] is their lifetime in ms, ARGV[2] the record's field (the token,
--   or <token>.<n> for the n-th call of an ack of more than 100), and the
--   triples follow. When the field is recorded the ack was applied
--   already: its answer is returned and nothing is written, so a repeat
--   after a lost reply reports what the first call acked (not "missing").
-- Returns {"notfound"} when the queue does not exist, else {"ok", s1, s2,
-- ...}, one status per triple: "acked", "missing" (nothing of it was in
-- the queue) or "stale" (the receipt names an earlier delivery: the message
-- was received again since, and stays).
-- Every receipt is checked before the first write.
local first = 1
if records then
  first = 3
  local r = recordOf(records, ARGV[2], #KEYS)
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
  if ARGV[i + 1] ~= "" and redis.call("ZSCORE", queue, id) then
    found = true
    if not current(attrs, id, ARGV[i + 1], ARGV[i + 2]) then
      status = "stale"
    end
  end
  res[#res + 1] = status
end
-- Otherwise the attributes are read as before, which also makes a
-- wrong-type hash fail before the first write (the first ZREM does that for
-- the ZSET).
if not found and not attributes(attrs) then
  return {"notfound"}
end
-- A wrong-type index would fail after the first write: check it first.
local e = wrongtype(index, "zset", "zset", ": nothing written")
if e then
  return e
end
if not allowed({"ZREM", queue, "x"}, {"HDEL", attrs, "x"}, {"ZREM", index, "x"}) then
  return redis.error_reply("NOPERM this user may not ack in " .. queue .. " (ZREM, HDEL): nothing written")
end
if records and not mayRecord(records) then
  return redis.error_reply("NOPERM this user may not HSET and PEXPIRE " .. KEYS[records] .. " (the record of an ack with a token): nothing written")
end
local done = {}
for i = first, #ARGV, 3 do
  local id = ARGV[i]
  local k = (i - first) / 3 + 2
  if res[k] == "" then
    -- Missing only when nothing of it was there: deleting a body left
    -- without its ZSET entry is an ack that did something.
    local z = redis.call("ZREM", queue, id)
    local h = redis.call("HDEL", attrs, id, id .. ":rc", id .. ":fr")
    local r = redis.call("ZREM", index, id)
    -- The record of a dead-letter move goes with the message (alone, it
    -- is no message: it does not make an ack of a missing id count).
    redis.call("HDEL", attrs, id .. ":dl")
    if z == 0 and h == 0 and r == 0 and not done[id] then
      res[k] = "missing"
    else
      res[k] = "acked"
      done[id] = true
    end
  end
end
if records then
  writeRecord(records, ARGV[2], cjson.encode(res), ARGV[1])
end
return res
