-- One event of a budget (RedisBudgets): a token bucket per key, checked and charged in one
-- atomic step on Redis's own clock (every server process shares it, whatever their clocks).
-- KEYS[1] <prefix>budget:{<budget>:<key>}   hash t (tokens), s (Unix seconds of t)
-- ARGV[1] capacity (events at once)  ARGV[2] refill (events a second)
-- ARGV[3] cost: 1 to take one event; -1 to give one back (never above capacity)
-- Returns "0" when taken (or given back); else the seconds until one could be taken, as
-- text, and nothing is written. A full bucket is no key at all (it expires as it fills).
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 't', 's')
local tokens = tonumber(held[1])
local stamp = tonumber(held[2])
if tokens == nil or stamp == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - stamp) * rate)
end
if cost > 0 and tokens < cost then
  return tostring((cost - tokens) / rate)
end
tokens = math.min(capacity, tokens - cost)
if tokens >= capacity then
  redis.call('DEL', KEYS[1])
  return '0'
end
redis.call('HSET', KEYS[1], 't', string.format('%.6f', tokens), 's', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
return '0'
