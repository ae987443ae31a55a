-- ioh.handlers: the client-side handlers this plugin adds to the ioh-lsp
-- client only: progress into the statusline, the held proposal's message
-- request into the review buffer, and applied edits written to disk.
local status = require("ioh.status")

local M = {}

local function default(method)
  return vim.lsp.handlers[method]
end

local function has_titles(actions, want)
  local got = {}
  for _, a in ipairs(actions or {}) do
    got[a.title] = true
  end
  for _, t in ipairs(want) do
    if not got[t] then
      return false
    end
  end
  return true
end

--- run_in_message reads the run id of "ioh run <id>: ..." messages.
function M.run_in_message(msg)
  return type(msg) == "string" and msg:match("^ioh run ([^%s:,]+)") or nil
end

--- touched lists the file URIs a WorkspaceEdit writes.
function M.touched(edit)
  local out, seen = {}, {}
  local function add(u)
    if u and not seen[u] then
      seen[u] = true
      table.insert(out, u)
    end
  end
  for u in pairs(edit.changes or {}) do
    add(u)
  end
  for _, c in ipairs(edit.documentChanges or {}) do
    if c.textDocument then
      add(c.textDocument.uri)
    elseif c.kind == "create" then
      add(c.uri)
    elseif c.kind == "rename" then
      add(c.newUri)
    end
  end
  table.sort(out)
  return out
end

--- write_buffers saves the loaded buffers of uris that have changes.
local function write_buffers(uris)
  for _, u in ipairs(uris) do
    local b = vim.uri_to_bufnr(u)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      vim.api.nvim_buf_call(b, function()
        vim.cmd("silent keepalt lockmarks write")
      end)
    end
  end
end

M["$/progress"] = function(err, result, ctx, config)
  status.on_progress(result)
  local id = type(result) == "table" and type(result.token) == "string" and result.token:match("^ioh/(.+)$")
  local v = type(result) == "table" and result.value
  if id and type(v) == "table" and v.kind == "end" then
    -- Every run's end is told, failures above all: the statusline shows
    -- only runs in flight.
    local text, level = status.end_notice(id, v.message)
    vim.schedule(function()
      vim.notify(text, level)
    end)
  end
  local d = default("$/progress")
  if d then
    return d(err, result, ctx, config)
  end
end

M["window/showMessageRequest"] = function(err, result, ctx, config)
  local id = result and M.run_in_message(result.message)
  if id and has_titles(result.actions, { "Apply", "Show diff", "Reject" }) then
    -- A held proposal (docs/lsp.md#approval): review it in the plugin's buffer; the
    -- answer goes back through ioh.approve / ioh.reject.
    status.set_pending(id, true)
    vim.schedule(function()
      require("ioh.review").open(id, { message = result.message })
    end)
    return vim.NIL
  end
  local d = default("window/showMessageRequest")
  return d(err, result, ctx, config)
end

M["workspace/applyEdit"] = function(err, result, ctx, config)
  local d = default("workspace/applyEdit")
  local dropped = require("ioh.review").take_armed()
  if dropped and result and result.edit then
    -- The approval from the review buffer kept only some hunks.
    result = vim.tbl_extend("force", result, { edit = require("ioh.review").filter_edit(result.edit, dropped) })
  end
  local res = d(err, result, ctx, config)
  local opts = require("ioh.client").options()
  if res and res.applied and result and result.edit and opts and opts.save_on_apply then
    local ok, werr = pcall(write_buffers, M.touched(result.edit))
    if not ok then
      return { applied = false, failureReason = "ioh: writing the edited buffers failed: " .. tostring(werr) }
    end
  end
  return res
end

return M
