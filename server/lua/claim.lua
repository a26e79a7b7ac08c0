-- Claim due deadlines (RedisStore.claim_due): each is re-scored to the lease end, so no
-- other process sees it until then.
-- KEYS[1] deadlines zset  KEYS[2] deadlines:data hash
-- ARGV[1] now  ARGV[2] lease until  ARGV[3] limit
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, m in ipairs(due) do
  local d = redis.call('HGET', KEYS[2], m)
  if d then
    redis.call('ZADD', KEYS[1], ARGV[2], m)
    table.insert(out, d)
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
