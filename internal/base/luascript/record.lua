-- record: the records of calls made with a client-chosen token, put in
-- front of each script that takes one (luascript.Record), after
-- permitted.lua (it uses allowed). It defines recordOf, mayRecord,
-- writeRecord, netstrings and fromNetstrings, and writes nothing.
--
-- A call with a token passes 11 record keys, KEYS[first..first+10]: the
-- HASHes of the minutes m, m-1, ..., m-10 of the client's clock (m = Unix
-- ms / 60000, computed when the call is made; <base>:T:<minute>, or
-- sent:{ID}:<minute> for a chat), all in the slot of the keys the script
-- writes. The token (or
-- <token>.<call> for a call after the first) names the field, whose value
-- is the call's answer. A record is written into minute m's hash, whose
-- lifetime every write sets again to ARGV's lifetime (10 minutes): a
-- record lives at least 10 minutes after it was written, and a repeat
-- made within 10 minutes, whose minute is at most m+10, finds it among
-- its 11 keys. One hash per minute, not one key per record, keeps a
-- busy queue's slot to a few keys when it moves (key by key, MIGRATE),
-- and costs less memory per record.

-- recordOf returns the answer recorded under field in the 11 record
-- keys from KEYS[first] on, the first found, and the key it was found in;
-- or nil. HGET refuses a key of another type (WRONGTYPE), and a record
-- key not given fails the call, before the script writes anything.
local function recordOf(first, field)
  for i = first, first + 10 do
    local r = redis.call('HGET', KEYS[i], field)
    if r then
      return r, KEYS[i]
    end
  end
end

-- mayRecord reports whether this user may write the record of this call
-- into KEYS[first] (HSET, PEXPIRE): checked before the script's first
-- write, as every other command it writes with.
local function mayRecord(first)
  return allowed({'HSET', KEYS[first], 'f', 'v'}, {'PEXPIRE', KEYS[first], '1'})
end

-- writeRecord records answer (a string) under field in KEYS[first],
-- minute m's hash, and sets the hash's lifetime to lifetime ms.
local function writeRecord(first, field, answer, lifetime)
  redis.call('HSET', KEYS[first], field, answer)
  redis.call('PEXPIRE', KEYS[first], lifetime)
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
