-- renew.lua: wrk sends Eureka heartbeats (PUT /eureka/apps/APP/ID?status=UP&
-- lastDirtyTimestamp=T, as Eureka's clients send them) cycling over the
-- WRK_N instances register.lua registered: in instance order, or, with
-- WRK_ORDER=shuffled, in a fixed random order.
local n = tonumber(os.getenv("WRK_N"))
local apps = tonumber(os.getenv("WRK_APPS") or "1")
local ldt = os.getenv("WRK_LDT")
local paths = {}
for i = 0, n - 1 do
  local host = string.format("dn%07d.bench.invalid", i)
  paths[i + 1] = "/eureka/apps/BENCH-DATANODE." .. (i % apps) .. "/" .. host ..
    "?status=UP&lastDirtyTimestamp=" .. ldt
end
if os.getenv("WRK_ORDER") == "shuffled" then
  math.randomseed(7)
  for i = n, 2, -1 do
    local j = math.random(i)
    paths[i], paths[j] = paths[j], paths[i]
  end
end
local i = 0

request = function()
  i = i + 1
  if i > n then i = 1 end
  return wrk.format("PUT", paths[i])
end
