-- ioh: Neovim client for ioh-lsp, an AI coding agent that runs from a typed
-- task contract to a verified result. See :help ioh.
local config = require("ioh.config")
local client = require("ioh.client")
local status = require("ioh.status")

local M = {}

local augroup

local function notify(msg, level)
  vim.notify("ioh: " .. msg, level or vim.log.levels.INFO)
end

local function err_text(err)
  if type(err) == "table" then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- handlers is the table of client-side handlers (ioh.handlers) given to
--- the ioh-lsp client only.
local function handlers()
  local h = {}
  for k, v in pairs(require("ioh.handlers")) do
    if type(v) == "function" and k:find("/") then
      h[k] = v
    end
  end
  return h
end

local function wants(bufnr)
  local o = client.options()
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return false
  end
  if o.filetypes == nil then
    return true
  end
  return vim.tbl_contains(o.filetypes, vim.bo[bufnr].filetype)
end

--- attach starts or reuses the server for a buffer.
function M.attach(bufnr)
  return client.attach(bufnr or vim.api.nvim_get_current_buf(), client.handlers)
end

--- setup validates the options, starts the server for file buffers and
--- sets the optional global keymaps.
function M.setup(opts)
  local o = config.validate(opts)
  client.configure(o)
  client.handlers = handlers()
  augroup = vim.api.nvim_create_augroup("ioh", { clear = true })
  if o.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "FileType" }, {
      group = augroup,
      callback = function(ev)
        if wants(ev.buf) then
          M.attach(ev.buf)
        end
      end,
    })
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and wants(b) then
        M.attach(b)
      end
    end
  end
  if o.keymaps then
    local acts = {
      ask = function() vim.ui.input({ prompt = "Ask agent: " }, function(g) if g and g ~= "" then M.ask(g) end end) end,
      run = function() M.run() end,
      approve = function() M.approve() end,
      reject = function() M.reject() end,
      cancel = function() M.cancel() end,
      trace = function() M.trace() end,
      runs = function() M.runs() end,
      review = function() M.review() end,
    }
    for act, lhs in pairs(o.keymaps) do
      if not acts[act] then
        error("ioh.setup: keymaps." .. act .. ": unknown action", 0)
      end
      vim.keymap.set("n", lhs, acts[act], { desc = "ioh: " .. act })
    end
  end
  return o
end

local function ensure_setup()
  if not client.options() then
    M.setup({})
  end
end

--- started reports a new run id.
local function started(what)
  return function(err, result)
    if err then
      return notify(what .. " failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    local id = type(result) == "table" and result.runId or nil
    M.last_run = id or M.last_run
    notify(string.format("%s: run %s started", what, tostring(id)))
  end
end

--- followed reports where a follow-up on run prev went: prev itself (its
--- change was pending or it had stopped) or a new run linked to it.
local function followed(prev)
  return function(err, result)
    if err then
      return notify(string.format("follow-up on %s failed: %s", prev, err_text(err)), vim.log.levels.ERROR)
    end
    local id = type(result) == "table" and result.runId or nil
    M.last_run = id or M.last_run
    if id == prev then
      notify(string.format("follow-up sent to run %s", prev))
    else
      notify(string.format("follow-up on %s: run %s started", prev, tostring(id)))
    end
  end
end

--- ask starts ioh.ask with a goal on the current file; range = {line1, line2}
--- (1-based, inclusive); run_id: a follow-up in that run's conversation
--- (docs/lsp.md#follow-ups).
function M.ask(goal, range, run_id)
  ensure_setup()
  goal = vim.trim(goal or "")
  if goal == "" then
    return notify("ask: give a goal, e.g. :IohAsk make the failing test pass", vim.log.levels.ERROR)
  end
  local arg = { goal = goal }
  local name = vim.api.nvim_buf_get_name(0)
  if name ~= "" and vim.bo.buftype == "" then
    arg.uri = vim.uri_from_bufnr(0)
    if range then
      arg.range = { start = { line = range[1] - 1, character = 0 }, ["end"] = { line = range[2], character = 0 } }
    end
  end
  run_id = run_id and vim.trim(run_id) or ""
  if run_id == "" then
    return client.execute("ioh.ask", arg, started("ask"))
  end
  arg.runId = run_id
  client.execute("ioh.ask", arg, followed(run_id))
end

--- follow_up sends goal as the next turn of run_id (default: the last run
--- this session started, else the newest one it saw).
function M.follow_up(goal, range, run_id)
  run_id = (run_id and run_id ~= "") and run_id or M.last_run or status.latest()
  if not run_id then
    return notify("follow-up: no run to follow up on yet: start one with :IohAsk {goal}, or name one: :IohFollowUp {run} {goal}",
      vim.log.levels.WARN)
  end
  M.ask(goal, range, run_id)
end

--- run starts ioh.run on a task file (default: the current file).
function M.run(file)
  ensure_setup()
  local path = (file and file ~= "") and vim.fn.fnamemodify(file, ":p") or vim.api.nvim_buf_get_name(0)
  if path == "" or vim.fn.filereadable(path) ~= 1 then
    return notify("run: no task file (give one: :IohRun path/to/task.ioh.yaml)", vim.log.levels.ERROR)
  end
  client.execute("ioh.run", { contract = vim.uri_from_fname(path) }, started("run"))
end

--- target picks the run an action means: the argument, the review
--- buffer's run, the newest held proposal, else the newest run seen.
local function target(id, want_pending)
  if id and id ~= "" then
    return id
  end
  local r = require("ioh.review").current()
  if r then
    return r
  end
  local p = status.pending()
  if want_pending and #p > 0 then
    return p[#p]
  end
  local live = status.running()
  return live[1] or status.latest() or M.last_run
end

local function answered(id, verb)
  return function(err, result)
    if err then
      require("ioh.review").take_armed() -- no applyEdit came for it
      return notify(string.format("%s %s failed: %s", verb, id, err_text(err)), vim.log.levels.ERROR)
    end
    status.set_pending(id, false)
    require("ioh.review").close(id)
    local outcome = type(result) == "table" and result.outcome or nil
    notify(string.format("run %s %s%s", id, verb, outcome and (": " .. outcome) or ""))
    vim.cmd("silent doautocmd <nomodeline> User IohAnswered")
  end
end

function M.approve(id)
  id = target(id, true)
  if not id then
    return notify("approve: no run to approve", vim.log.levels.WARN)
  end
  -- Hunks dropped in the review buffer leave the applyEdit that follows.
  local ok, why = require("ioh.review").arm(id)
  if not ok then
    return notify("approve: " .. why, vim.log.levels.WARN)
  end
  client.execute("ioh.approve", { runId = id }, answered(id, "approved"))
end

function M.reject(id, reason)
  id = target(id, true)
  if not id then
    return notify("reject: no run to reject", vim.log.levels.WARN)
  end
  local arg = { runId = id }
  if reason and vim.trim(reason) ~= "" then
    arg.reason = vim.trim(reason)
  end
  client.execute("ioh.reject", arg, answered(id, "rejected"))
end

function M.cancel(id)
  id = target(id, false)
  if not id then
    return notify("cancel: no run in flight", vim.log.levels.WARN)
  end
  client.execute("ioh.cancel", { runId = id }, function(err)
    if err then
      return notify("cancel failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    notify("cancelling run " .. id)
  end)
end

function M.resume(id)
  id = target(id, false)
  if not id then
    return notify("resume: give a run id", vim.log.levels.WARN)
  end
  client.execute("ioh.resume", { runId = id }, started("resume"))
end

--- review opens the review buffer of a held proposal.
function M.review(id)
  id = target(id, true)
  if not id then
    return notify("review: no pending proposal", vim.log.levels.WARN)
  end
  require("ioh.review").open(id)
end

--- trace shows the run's trace: the server's rendered file when it wrote one.
function M.trace(id)
  id = target(id, false)
  if not id then
    return notify("trace: give a run id (see :IohRuns)", vim.log.levels.WARN)
  end
  client.execute("ioh.trace", { runId = id }, function(err, result)
    if err then
      return notify("trace failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    if type(result) == "table" and type(result.file) == "string" and vim.fn.filereadable(result.file) == 1 then
      if vim.fn.bufwinnr(result.file) == -1 then
        vim.cmd("botright split " .. vim.fn.fnameescape(result.file))
      end
      return
    end
    require("ioh.runs").show_text("ioh://trace/" .. id, vim.split(vim.inspect(result), "\n"))
  end)
end

--- runs lists the session's runs in a scratch buffer (<CR>: trace, d: review).
function M.runs()
  client.execute("ioh.runs", nil, function(err, result)
    if err then
      return notify("runs failed: " .. err_text(err), vim.log.levels.ERROR)
    end
    require("ioh.runs").show(result)
  end)
end

function M.clear_trace(id)
  client.execute("ioh.clearTrace", (id and id ~= "") and { runId = id } or nil, function(err)
    if err then
      return notify("clearTrace failed: " .. err_text(err), vim.log.levels.ERROR)
    end
  end)
end

--- status is a statusline component: "" when idle.
function M.status()
  return status.text()
end

return M
