-- The archive took an ended game (RedisStore.finish_outbox): complete its claimed deadline
-- and drop the game's outbox entry, in one step — only while the claim is still this one.
-- KEYS[1] room:{id}:deadlines  KEYS[2] room:{id}:deadline_data  KEYS[3] deadline index
-- KEYS[4] room:{id}:outbox
-- ARGV[1] "<kind>|<key>"  ARGV[2] the claim's lease  ARGV[3] room id  ARGV[4] game number
-- Returns 1 when done, 0 when the claim had moved on (another claimer finishes it).
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[4])
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[1] then
  redis.call('ZADD', KEYS[3], first[2], ARGV[3])
else
  redis.call('ZREM', KEYS[3], ARGV[3])
end
return 1
