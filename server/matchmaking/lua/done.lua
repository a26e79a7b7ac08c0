-- A match's room is ready: leave each player's result for their process, forget the plan.
-- KEYS[1] pending, KEYS[2..] matched:<ticket> per seat. ARGV[1] match id, ARGV[2] how long
-- a result waits to be taken (ms), ARGV[3..] the results (JSON), in the order of KEYS[2..].
-- Safe to repeat.
for k = 2, #KEYS do redis.call('SET', KEYS[k], ARGV[k + 1], 'PX', ARGV[2]) end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
