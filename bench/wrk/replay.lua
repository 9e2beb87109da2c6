-- Replays the requests of a file in a cycle and prints the run's figures as one JSON line.
-- Usage: wrk ... -s bench/wrk/replay.lua http://127.0.0.1:PORT -- requests.tsv
-- Each line of the file is METHOD<tab>PATH, or METHOD<tab>PATH<tab>JSON-BODY. Every request accepts br and gzip,
-- as browsers and CDNs do. Each thread starts at its own offset in the list, so threads do not ask in lockstep.
-- The last line of the output starts with "WRK-JSON " and holds latency percentiles in microseconds, requests,
-- socket errors and the count of each HTTP status (wrk itself only counts non-2xx/3xx as one number).

local threads = {}
local requests = {}
local next_index = 0
statuses = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    local method, path, body = line:match("^(%u+)\t([^\t]+)\t?(.*)$")
    if method then
      local headers = { ["Accept-Encoding"] = "br, gzip" }
      if body == "" then
        body = nil
      else
        headers["Content-Type"] = "application/json"
      end
      table.insert(requests, wrk.format(method, path, headers, body))
    end
  end
  file:close()
  next_index = (thread_index or 0) * 7919
end

function request()
  next_index = next_index + 1
  return requests[(next_index % #requests) + 1]
end

function response(status)
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
end

function done(summary, latency, _)
  local counts = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      counts[status] = (counts[status] or 0) + count
    end
  end
  local parts = {}
  for status, count in pairs(counts) do
    table.insert(parts, string.format('"%s":%d', status, count))
  end
  local errors = summary.errors
  io.write(string.format(
    'WRK-JSON {"duration_us":%d,"requests":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},"statuses":{%s}}\n',
    summary.duration, summary.requests, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    errors.connect, errors.read, errors.write, errors.timeout, table.concat(parts, ",")))
end
