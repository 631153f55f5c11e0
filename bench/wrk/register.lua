-- register.lua: wrk sends WRK_N Eureka registrations, one per instance, in
-- instance order, then plain GETs of /healthz until the driver stops it.
-- Instance i is dn<i>.bench.invalid in application WRK_APP<i mod WRK_APPS>,
-- with a lease of WRK_LEASE seconds and lastDirtyTimestamp WRK_LDT, so
-- renew.lua can name it without reading anything back. A refused
-- registration is written to stderr.
local n = tonumber(os.getenv("WRK_N"))
local apps = tonumber(os.getenv("WRK_APPS") or "1")
local lease = os.getenv("WRK_LEASE") or "3600"
local ldt = os.getenv("WRK_LDT")
local i = 0
-- wrk calls request() once when a thread starts and does not send what it
-- returns: that call gets a GET, so that instance 0 is not lost.
local primed = false

local template = '{"instance":{"instanceId":"%s","app":"%s","hostName":"%s",' ..
  '"ipAddr":"10.%d.%d.%d","status":"UP","port":{"$":9866,"@enabled":"true"},' ..
  '"securePort":{"$":443,"@enabled":"false"},"vipAddress":"bench-datanode",' ..
  '"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},' ..
  '"leaseInfo":{"renewalIntervalInSecs":10,"durationInSecs":%s},' ..
  '"metadata":{"rack":"/dc1/rack-%02d"},"lastDirtyTimestamp":"%s"}}'

request = function()
  if not primed then
    primed = true
    return wrk.format("GET", "/healthz")
  end
  if i >= n then
    return wrk.format("GET", "/healthz")
  end
  local app = "BENCH-DATANODE." .. (i % apps)
  local host = string.format("dn%07d.bench.invalid", i)
  local body = string.format(template, host, app, host,
    math.floor(i / 65536) % 256, math.floor(i / 256) % 256, i % 256, lease, i % 40, ldt)
  i = i + 1
  return wrk.format("POST", "/eureka/apps/" .. app,
    {["Content-Type"] = "application/json"}, body)
end

response = function(status, headers, body)
  if status ~= 204 and status ~= 200 then
    io.stderr:write(string.format("register.lua: answered %d: %s\n", status, body))
  end
end
