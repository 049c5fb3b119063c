-- record: the records of calls made with a client-chosen token, put in
-- front of each script that takes one (luascript.Record), after
-- permitted.lua (it uses allowed). It defines recordOf, mayRecord,
-- writeRecord, netstrings and fromNetstrings, and writes nothing.
--
-- A call with a token passes its record keys as a run,
-- KEYS[first..last]: the HASHes of the minutes m, m-1, ..., m-10 of the
-- client's clock (m = Unix ms / 60000, computed when the call is made;
-- <base>:T:<minute>, or sent:{ID}:<minute> for a chat), all in the slot of
-- the keys the script writes; or, on a first try (a token never sent
-- before, so never applied), minute m's key alone, and nothing is looked
-- up. The token (or <token>.<call> for a call after the first) names the
-- field, whose value is the call's answer. A record is written into
-- minute m's hash, which lives ARGV's lifetime (11 minutes) from its first
-- write: a record written in minute m lives until at least m + 11
-- minutes, 10 minutes after it was written, and a repeat made within
-- those 10 minutes, whose minute is at most m+10, finds it among its 11
-- keys. One hash per minute, not one key per record, keeps a busy queue's
-- slot to a few keys when it moves (key by key, MIGRATE), and costs less
-- memory per record; setting its lifetime once, not at each write, and
-- looking nothing up on a first try keep a call's cost to an HLEN, an
-- HSET and the permission check.

-- recordOf returns the answer recorded under field in the record keys
-- KEYS[first..last], the first found, and the key it was found in; or
-- nil, and at once when KEYS[first] is the only one (a first try). HGET
-- refuses a key of another type (WRONGTYPE) before the script writes
-- anything.
local function recordOf(first, field, last)
  if last == first then
    return nil
  end
  for i = first, last do
    local r = redis.call('HGET', KEYS[i], field)
    if r then
      return r, KEYS[i]
    end
  end
end

-- newHash is whether minute m's hash was empty when mayRecord looked:
-- writeRecord then sets its lifetime.
local newHash

-- mayRecord reports whether this user may write the record of this call
-- into KEYS[first] (HSET, PEXPIRE), and whether the key holds a hash or
-- nothing (HLEN raises WRONGTYPE otherwise): checked before the script's
-- first write, as every other command it writes with. PEXPIRE is checked
-- even when the hash exists (it is sent only to a new one), so that a
-- user without it is refused every time, not once a minute.
local function mayRecord(first)
  newHash = redis.call('HLEN', KEYS[first]) == 0
  return allowed({'HSET', KEYS[first], 'f', 'v'}, {'PEXPIRE', KEYS[first], '1'})
end

-- writeRecord records answer (a string) under field in KEYS[first],
-- minute m's hash, after mayRecord(first), and gives the hash lifetime ms
-- to live when this is its first record.
local function writeRecord(first, field, answer, lifetime)
  redis.call('HSET', KEYS[first], field, answer)
  if newHash then
    redis.call('PEXPIRE', KEYS[first], lifetime)
  end
end

-- netstrings returns the values of list t as netstrings
-- (<length>:<bytes>, each tostring'd), which keep any bytes as they are
-- (bodies need not be valid UTF-8, which cjson would not keep).
local function netstrings(t)
  local parts = {}
  for i, v in ipairs(t) do
    local s = tostring(v)
    parts[i] = #s .. ':' .. s
  end
  return table.concat(parts)
end

-- fromNetstrings returns the list of strings s holds as netstrings, or
-- nil when s is not netstrings.
local function fromNetstrings(s)
  local res, pos = {}, 1
  while pos <= #s do
    local colon = string.find(s, ':', pos, true)
    local n = colon and tonumber(string.sub(s, pos, colon - 1))
    if not n or colon + n > #s then
      return nil
    end
    res[#res + 1] = string.sub(s, colon + 1, colon + n)
    pos = colon + n + 1
  end
  return res
end
