-- ioh.review: a scratch buffer showing a pending proposal's diff (from the
-- server's ioh.showDiff) with mappings to apply or reject it. It serves
-- Neovim versions whose LSP client has no change-annotation support, where
-- the server holds the proposal instead of sending an annotated edit.
local client = require("ioh.client")
local status = require("ioh.status")

local M = {}

local function bufname(id)
  return "ioh://review/" .. id
end

--- lines builds the buffer text: a header with the mappings, then the diff.
function M.lines(id, diff, note, maps)
  local out = {
    string.format("# ioh run %s: proposed change", id),
    string.format("# %s: apply   %s: reject   %s: close", maps.approve, maps.reject, maps.close),
  }
  if note and note ~= "" then
    table.insert(out, "# " .. note:gsub("\n", " "))
  end
  table.insert(out, "")
  for l in ((diff or ""):gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do
    table.insert(out, l)
  end
  return out
end

local function set_text(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- find returns the review buffer of run id, if open.
function M.find(id)
  local b = vim.fn.bufnr(bufname(id))
  if b ~= -1 and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  return nil
end

--- current returns the run id of the review buffer in the current window.
function M.current()
  local ok, id = pcall(vim.api.nvim_buf_get_var, 0, "ioh_run_id")
  return ok and id or nil
end

function M.close(id)
  local b = M.find(id)
  if b then
    vim.api.nvim_buf_delete(b, { force = true })
  end
end

local function make_buffer(id, from)
  local b = M.find(id)
  if b then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, bufname(id))
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = "diff"
  vim.api.nvim_buf_set_var(b, "ioh_run_id", id)
  local maps = client.options().review_keymaps
  local ioh = require("ioh")
  local function map(lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, fn, { buffer = b, nowait = true, silent = true, desc = desc })
    end
  end
  map(maps.approve, function()
    ioh.approve(id)
  end, "ioh: apply this proposal")
  map(maps.reject, function()
    vim.ui.input({ prompt = "Reject reason (optional): " }, function(reason)
      if reason ~= nil then
        ioh.reject(id, reason)
      end
    end)
  end, "ioh: reject this proposal")
  map(maps.close, function()
    M.close(id)
  end, "ioh: close the review")
  -- Show it in a split below the window the proposal concerns.
  vim.api.nvim_set_current_win(from)
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, b)
  return b
end

--- open shows run id's proposal; opts.message is the server's note.
function M.open(id, opts)
  opts = opts or {}
  local from = vim.api.nvim_get_current_win()
  local maps = client.options().review_keymaps
  client.execute("ioh.showDiff", { runId = id }, function(err, result)
    local diff, note = nil, opts.message
    if err then
      -- An older server without ioh.showDiff: the review still works, the
      -- diff is just not shown.
      note = "no diff from the server (" .. (err.message or vim.inspect(err)) .. "); see :IohTrace " .. id
    elseif type(result) == "table" then
      diff = result.diff
    end
    if not vim.api.nvim_win_is_valid(from) then
      from = vim.api.nvim_get_current_win()
    end
    local b = make_buffer(id, from)
    set_text(b, M.lines(id, diff, note, maps))
    status.set_pending(id, true)
    vim.cmd("silent doautocmd <nomodeline> User IohReview")
  end)
end

return M
