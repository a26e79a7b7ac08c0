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
local moved = false
for s, _ in pairs(seats) do
  local b = before[s] or 0
  local a = after[s] or 0
  if (b > 0) ~= (a > 0) then
    -- (ClusterRedisStore sends this script with SPUBLISH, sharded pub/sub, instead.)
    redis.call('PUBLISH', ARGV[3],
      cjson.encode({t = 'p', room = ARGV[5], seat = tonumber(s), connected = (a > 0)}))
    local slot = 'takeover|' .. s
    if a > 0 then
      redis.call('ZREM', KEYS[3], slot)
      redis.call('HDEL', KEYS[4], slot)
      moved = true
    elseif type(args.takeovers) == 'table' and args.takeovers[s] then
      redis.call('ZADD', KEYS[3], args.takeovers[s][1], slot)
      redis.call('HSET', KEYS[4], slot, args.takeovers[s][2])
      redis.call('EXPIRE', KEYS[3], ARGV[4])
      redis.call('EXPIRE', KEYS[4], ARGV[4])
      moved = true
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
