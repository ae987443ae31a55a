-- ioh.status: the runs' $/progress (tokens "ioh/<runId>") and the held
-- proposals, summarised for a statusline by require("ioh").status().
local M = {}

local runs = {} -- runId -> { title, message, done, order }
local pending = {} -- runId -> true while a proposal waits for review
local seq = 0

local function run_of(token)
  if type(token) ~= "string" then
    return nil
  end
  return token:match("^ioh/(.+)$")
end

--- on_progress records one $/progress value.
function M.on_progress(params)
  local id = run_of(params and params.token)
  local v = params and params.value
  if not id or type(v) ~= "table" then
    return
  end
  local r = runs[id]
  if not r or v.kind == "begin" then
    seq = seq + 1
    r = { order = seq }
    runs[id] = r
  end
  if v.title then
    r.title = v.title
  end
  if v.message then
    r.message = v.message
  end
  r.done = v.kind == "end"
  vim.schedule(function()
    vim.cmd("silent doautocmd <nomodeline> User IohStatus")
    vim.cmd("redrawstatus")
  end)
end

function M.set_pending(id, yes)
  pending[id] = yes or nil
end

function M.pending()
  local out = {}
  for id in pairs(pending) do
    table.insert(out, id)
  end
  table.sort(out)
  return out
end

--- running lists the ids of runs in flight, newest first.
function M.running()
  local out = {}
  for id, r in pairs(runs) do
    if not r.done then
      table.insert(out, id)
    end
  end
  table.sort(out, function(a, b)
    return runs[a].order > runs[b].order
  end)
  return out
end

--- latest is the newest run seen in progress, running or not.
function M.latest()
  local best, order = nil, -1
  for id, r in pairs(runs) do
    if r.order > order then
      best, order = id, r.order
    end
  end
  return best
end

function M.info(id)
  return runs[id]
end

--- text: "" when idle; else "ioh r-1: step 3 · 1200 tokens · $0.0010", with
--- "+N" for more runs in flight and "· N to review" for held proposals.
function M.text()
  local live = M.running()
  local parts = {}
  if #live > 0 then
    local r = runs[live[1]]
    local s = "ioh " .. live[1]
    if r.message and r.message ~= "" then
      s = s .. ": " .. r.message
    end
    if #live > 1 then
      s = s .. string.format(" +%d", #live - 1)
    end
    table.insert(parts, s)
  end
  local n = #M.pending()
  if n > 0 then
    table.insert(parts, (#live == 0 and "ioh: " or "") .. string.format("%d to review", n))
  end
  return table.concat(parts, " · ")
end

--- end_notice is what the user is told when run id ends: the server's end
--- message (outcome, steps, cost and reason, docs/lsp.md#progress) at the
--- level of how it ended, and for a budget stop how to continue.
function M.end_notice(id, message)
  local msg = message or ""
  local text = msg:find("(run " .. id, 1, true) and ("ioh: " .. msg) or string.format("ioh: run %s ended: %s", id, msg)
  local level = vim.log.levels.INFO
  if msg:find("^failed") then
    level = vim.log.levels.ERROR
  elseif msg:find("^cancelled") then
    level = vim.log.levels.WARN
  end
  if msg:find("budget_exceeded", 1, true) then
    level = vim.log.levels.WARN
    text = text .. string.format("\ncontinue with a larger budget: :IohResume %s (the server asks how much to raise it)", id)
  end
  return text, level
end

function M.reset()
  runs, pending, seq = {}, {}, 0
end

return M
