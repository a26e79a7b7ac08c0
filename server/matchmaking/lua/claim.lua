-- Record matches and take their players out of the queues, atomically, under the lease.
-- KEYS[1] entries, KEYS[2] counts, KEYS[3] pending (hash match id -> plan JSON),
-- KEYS[4] owners, KEYS[5] lease, KEYS[6] placed (hash player -> ticket of their last
-- recorded match), KEYS[7..] matched:<ticket> for every seat of every plan,
-- in order (a recorded plan's get the marker {"pending": id} until the room is ready).
-- ARGV[1] owner (must hold the lease), ARGV[2] the marker's lifetime (ms), ARGV[3] JSON [[player, ticket], ...] of entries to
-- drop (their process is dead), ARGV[4] JSON [owner, ...] to forget, ARGV[5..] plans (JSON
-- {"id", "queue", "seats": [{"player", "ticket", ...}], ...}).
-- A plan is recorded only if every one of its entries is still there with its ticket.
-- Returns the ids of the plans recorded, or -1 when the lease is not this owner's.
if redis.call('GET', KEYS[5]) ~= ARGV[1] then return -1 end
local function drop(p, t)
  local cur = redis.call('HGET', KEYS[1], p)
  if not cur then return end
  local e = cjson.decode(cur)
  if e['t'] ~= t then return end
  redis.call('HDEL', KEYS[1], p)
  if redis.call('HINCRBY', KEYS[2], e['q'], -1) <= 0 then redis.call('HDEL', KEYS[2], e['q']) end
end
for _, s in ipairs(cjson.decode(ARGV[3])) do drop(s[1], s[2]) end
for _, o in ipairs(cjson.decode(ARGV[4])) do redis.call('HDEL', KEYS[4], o) end
local claimed = {}
local k = 7
for i = 5, #ARGV do
  local m = cjson.decode(ARGV[i])
  local ok = redis.call('HEXISTS', KEYS[3], m['id']) == 0
  if ok then
    for _, s in ipairs(m['seats']) do
      local cur = redis.call('HGET', KEYS[1], s['player'])
      if not cur or cjson.decode(cur)['t'] ~= s['ticket'] then ok = false; break end
    end
  end
  if ok then
    for j, s in ipairs(m['seats']) do
      drop(s['player'], s['ticket'])
      redis.call('SET', KEYS[k + j - 1], cjson.encode({pending = m['id']}), 'PX', ARGV[2])
      redis.call('HSET', KEYS[6], s['player'], s['ticket'])
    end
    redis.call('HSET', KEYS[3], m['id'], ARGV[i])
    claimed[#claimed + 1] = m['id']
  end
  k = k + #m['seats']
end
return claimed
