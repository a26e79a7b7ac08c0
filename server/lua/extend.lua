-- Renew the lease of a claimed deadline while its handler runs (RedisStore.extend).
-- KEYS[1] room:{id}:deadlines  KEYS[2] deadline index
-- ARGV[1] "<kind>|<key>"  ARGV[2] the claim's lease  ARGV[3] new lease  ARGV[4] room id
-- Returns 1 if renewed, 0 if the deadline was rescheduled, removed or claimed again.
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('ZADD', KEYS[2], first[2], ARGV[4])
return 1
