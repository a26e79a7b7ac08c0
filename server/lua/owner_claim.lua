-- Take an expired owner (a server process that stopped heartbeating) for reaping
-- (RedisStore.claim_owner). It moves from the registry to the reaping set with a lease, so
-- that if the reaper dies too, another one takes it over when the lease ends.
-- KEYS[1] owners zset  KEYS[2] reaping zset (owner -> reap lease end)  KEYS[3] its rooms set
-- ARGV[1] owner  ARGV[2] expired before (Unix s)  ARGV[3] now  ARGV[4] reap lease end
-- Returns the owner's rooms, or false when it is not (or no longer) up for reaping.
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s then
  if tonumber(s) >= tonumber(ARGV[2]) then return false end
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  local r = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if not r or tonumber(r) > tonumber(ARGV[3]) then return false end
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return redis.call('SMEMBERS', KEYS[3])
