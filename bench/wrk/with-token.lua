-- replay.lua with the query token header on every request, for pages of a query.
-- Usage: wrk ... -s bench/wrk/with-token.lua http://127.0.0.1:PORT -- requests.tsv TOKEN
-- The request file is replay.lua's; the second argument goes into X-Service-Query-Token.

dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "replay.lua")

local replay_init = init

function init(args)
  local format = wrk.format
  wrk.format = function(method, path, headers, body)
    headers["X-Service-Query-Token"] = args[2]
    return format(method, path, headers, body)
  end
  replay_init(args)
  wrk.format = format
end
