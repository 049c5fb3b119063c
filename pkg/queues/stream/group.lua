-- group: the helpers every stream script shares, put in front of each
-- (scripts.go). It reads nothing by itself and writes nothing.

-- id_cmp compares two complete entry ids MS-SEQ as numbers (-1, 0, 1):
-- by length first, then as text, since Lua's numbers cannot hold every
-- 64-bit part exactly and the server writes no leading zeros.
local function num_cmp(a, b)
  if #a ~= #b then
    return #a < #b and -1 or 1
  end
  if a == b then
    return 0
  end
  return a < b and -1 or 1
end

local function id_cmp(a, b)
  local ams, aseq = string.match(a, '^(%d+)-(%d+)$')
  local bms, bseq = string.match(b, '^(%d+)-(%d+)$')
  local c = num_cmp(ams, bms)
  if c ~= 0 then
    return c
  end
  return num_cmp(aseq, bseq)
end

-- groups reads XINFO GROUPS of stream: per group its name, consumers,
-- pending (the PEL's size), ldi (last-delivered-id) and lag (nil when the
-- server cannot tell, or before Redis 7.0, which has no lag field), and
-- v7, whether the reply has the fields Redis 7.0 added.
local function groups(stream)
  local out = {}
  for _, flat in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local g = {v7 = false}
    for i = 1, #flat, 2 do
      local k, v = flat[i], flat[i + 1]
      if k == 'name' then
        g.name = v
      elseif k == 'consumers' then
        g.consumers = v
      elseif k == 'pending' then
        g.pending = v
      elseif k == 'last-delivered-id' then
        g.ldi = v
      elseif k == 'lag' then
        g.v7 = true
        if v then
          g.lag = v
        end
      end
    end
    out[#out + 1] = g
  end
  return out
end

-- group_info is the group named name of stream, nil when it has none.
local function group_info(stream, name)
  for _, g in ipairs(groups(stream)) do
    if g.name == name then
      return g
    end
  end
  return nil
end

-- is_stream reports whether key holds a stream.
local function is_stream(key)
  return redis.call('TYPE', key)['ok'] == 'stream'
end

-- writes_known reports whether chatq was tested writing on this server:
-- Redis 7.0 and later (6.2 has no redis.REDIS_VERSION_NUM in scripts).
local function writes_known()
  return redis.REDIS_VERSION_NUM ~= nil and redis.REDIS_VERSION_NUM >= 0x070000
end
