-- Create a room at version 0 unless the id is taken (RedisStore.create).
-- KEYS[1] room:{id}:state   ARGV[1] record JSON   ARGV[2] ttl seconds
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 0, 'data', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
