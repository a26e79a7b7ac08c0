-- Write one owner's (server process's) connection counts for seats of a room
-- (RedisStore.set_presence). A seat's presence is the sum over owners; a seat whose sum
-- crosses 0 gets a presence message, and its takeover deadline is stored or removed, all in
-- this one step.
-- KEYS[1] room:{id}:presence  hash "<seat>|<owner>" -> connections
-- KEYS[2] room:{id}:state     (the room must exist)
-- KEYS[3] room:{id}:deadlines  KEYS[4] room:{id}:deadline_data  KEYS[5] deadline index
-- ARGV[1] owner  ARGV[2] JSON {"counts": {seat: n}, "full": bool,
--                               "takeovers": {seat: [due, deadline JSON]}}
-- ARGV[3] channel  ARGV[4] ttl seconds  ARGV[5] room id
-- ARGV[6] now (Unix seconds; "" for the server's TIME): when the room's total goes from 0
--   to more (a person is back at a table left by everyone), every parked deadline of the
--   room (park.lua) is due again at now + its "parked" seconds, its text rebuilt from its
--   "wake" parts (RoomStore.set_presence, server.store.base.woken); a woken takeover is
--   announced with its takeover_at.
-- Returns the totals after the write as JSON {seat: n}, or "" when the room is missing.
if redis.call('EXISTS', KEYS[2]) == 0 then return '' end
local args = cjson.decode(ARGV[2])
local owner = ARGV[1]
local function totals()
  local t = {}
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local bar = string.find(all[i], '|', 1, true)
    local seat = string.sub(all[i], 1, bar - 1)
    t[seat] = (t[seat] or 0) + tonumber(all[i + 1])
  end
  return t
end
local before = totals()
if args.full then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local bar = string.find(all[i], '|', 1, true)
    if string.sub(all[i], bar + 1) == owner and args.counts[string.sub(all[i], 1, bar - 1)] == nil then
      redis.call('HDEL', KEYS[1], all[i])
    end
  end
end
for seat, n in pairs(args.counts) do
  local f = seat .. '|' .. owner
  if tonumber(n) > 0 then redis.call('HSET', KEYS[1], f, n) else redis.call('HDEL', KEYS[1], f) end
end
local after = totals()
local seats = {}
for s, _ in pairs(before) do seats[s] = true end
for s, _ in pairs(after) do seats[s] = true end
local function ms(due) return math.floor(tonumber(due) * 1000 + 0.5) end
local moved = false
for s, _ in pairs(seats) do
  local b = before[s] or 0
  local a = after[s] or 0
  if (b > 0) ~= (a > 0) then
    local slot = 'takeover|' .. s
    local at = nil
    if a > 0 then
      redis.call('ZREM', KEYS[3], slot)
      redis.call('HDEL', KEYS[4], slot)
      moved = true
    elseif type(args.takeovers) == 'table' and args.takeovers[s] then
      redis.call('ZADD', KEYS[3], args.takeovers[s][1], slot)
      redis.call('HSET', KEYS[4], slot, args.takeovers[s][2])
      redis.call('EXPIRE', KEYS[3], ARGV[4])
      redis.call('EXPIRE', KEYS[4], ARGV[4])
      at = ms(args.takeovers[s][1])
      moved = true
    end
    -- (ClusterRedisStore sends this script with SPUBLISH, sharded pub/sub, instead.)
    redis.call('PUBLISH', ARGV[3],
      cjson.encode({t = 'p', room = ARGV[5], seat = tonumber(s), connected = (a > 0),
                    takeover_at = at}))
  end
end
local function total(t)
  local n = 0
  for _, v in pairs(t) do n = n + v end
  return n
end
if total(before) == 0 and total(after) > 0 then
  local now = tonumber(ARGV[6])
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) + tonumber(t[2]) / 1e6
  end
  local data = redis.call('HGETALL', KEYS[4])
  for i = 1, #data, 2 do
    local ok, d = pcall(cjson.decode, data[i + 1])
    if ok and type(d) == 'table' and type(d.payload) == 'table'
        and type(d.payload.parked) == 'number' and type(d.payload.wake) == 'table' then
      local due = now + d.payload.parked
      redis.call('ZADD', KEYS[3], due, data[i])
      redis.call('HSET', KEYS[4], data[i],
        d.payload.wake[1] .. string.format('%.17g', due) .. d.payload.wake[2])
      moved = true
      if d.kind == 'takeover' and tonumber(d.key) then
        redis.call('PUBLISH', ARGV[3],
          cjson.encode({t = 'p', room = ARGV[5], seat = tonumber(d.key), connected = false,
                        takeover_at = ms(due)}))
      end
    end
  end
end
if moved then
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if first[1] then
    redis.call('ZADD', KEYS[5], first[2], ARGV[5])
  else
    redis.call('ZREM', KEYS[5], ARGV[5])
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return cjson.encode(after)
