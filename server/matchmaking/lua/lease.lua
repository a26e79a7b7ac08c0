-- Take or renew the matcher's lease. KEYS[1] lease. ARGV[1] owner, ARGV[2] lease (ms).
-- Returns 1 when this owner holds it now.
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
