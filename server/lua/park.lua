-- Park a claimed deadline while nobody is at the table (RedisStore.park_unless_present):
-- if no seat of the room has a connection and the deadline's slot still holds the claim,
-- put the parked copy (server.store.base.park) in its place; presence.lua wakes it when a
-- person connects again. Checking presence and parking in one step: a connection made
-- meanwhile is either seen here or wakes what was parked.
-- KEYS[1] room:{id}:presence  KEYS[2] room:{id}:deadlines  KEYS[3] room:{id}:deadline_data
-- KEYS[4] deadline index
-- ARGV[1] "<kind>|<key>"  ARGV[2] the claim's lease  ARGV[3] the parked due time
-- ARGV[4] the parked deadline JSON  ARGV[5] ttl seconds  ARGV[6] room id
-- Returns "present", "moved" or "parked".
local counts = redis.call('HVALS', KEYS[1])
for _, n in ipairs(counts) do
  if tonumber(n) > 0 then return 'present' end
end
local s = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not s or tonumber(s) ~= tonumber(ARGV[2]) then return 'moved' end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[5])
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] then
  redis.call('ZADD', KEYS[4], first[2], ARGV[6])
else
  redis.call('ZREM', KEYS[4], ARGV[6])
end
return 'parked'
