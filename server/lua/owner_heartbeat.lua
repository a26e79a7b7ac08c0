-- Renew a server process's (owner's) registration (RedisStore.owner_heartbeat).
-- KEYS[1] owners zset: owner -> Unix time of its last heartbeat
-- KEYS[2] the owner's rooms set (rooms it may hold presence in)
-- ARGV[1] owner  ARGV[2] now  ARGV[3] "1" to register a new owner, else "0"
-- ARGV[4] ttl of the rooms set  ARGV[5..] rooms to add to the set
-- Returns 1 if the owner was registered before this call, else 0 (then it is registered now
-- only if ARGV[3] is "1").
local known = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not known and ARGV[3] ~= '1' then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if #ARGV > 4 then redis.call('SADD', KEYS[2], unpack(ARGV, 5)) end
redis.call('EXPIRE', KEYS[2], ARGV[4])
if known then return 1 end
return 0
