-- ioh.runs: the :IohRuns list (one run a line) and scratch text buffers.
local M = {}

--- format turns the ioh.runs result into lines and the run id of each line.
function M.format(result)
  local lines, ids = { "# ioh runs   <CR>: trace   d: review diff   q: close" }, { false }
  if type(result) ~= "table" or #result == 0 then
    table.insert(lines, "(no runs in this session)")
    table.insert(ids, false)
    return lines, ids
  end
  for _, r in ipairs(result) do
    local goal = tostring(r.goal or ""):gsub("%s+", " ")
    if #goal > 60 then
      goal = goal:sub(1, 59) .. "…"
    end
    -- costUsd is null when a call could not be priced: unknown, never $0.
    local cost = tonumber(r.costUsd)
    table.insert(lines, string.format("%-14s %-20s %4d steps %8d tok %s  %s  %s",
      tostring(r.runId), tostring(r.outcome), tonumber(r.steps) or 0, tonumber(r.tokens) or 0,
      cost and string.format("$%.4f", cost) or "cost unknown", tostring(r.started or ""), goal))
    table.insert(ids, r.runId)
  end
  return lines, ids
end

local function scratch(name, lines)
  local b = vim.fn.bufnr(name)
  if b == -1 or not vim.api.nvim_buf_is_valid(b) then
    b = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(b, name)
    vim.bo[b].buftype = "nofile"
    vim.bo[b].bufhidden = "wipe"
    vim.bo[b].swapfile = false
  end
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  if vim.fn.bufwinnr(b) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, b)
  end
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = b, nowait = true, silent = true })
  return b
end

function M.show_text(name, lines)
  return scratch(name, lines)
end

function M.show(result)
  local lines, ids = M.format(result)
  local b = scratch("ioh://runs", lines)
  local ioh = require("ioh")
  local function id_here()
    return ids[vim.api.nvim_win_get_cursor(0)[1]] or nil
  end
  vim.keymap.set("n", "<CR>", function()
    local id = id_here()
    if id then
      ioh.trace(id)
    end
  end, { buffer = b, silent = true })
  vim.keymap.set("n", "d", function()
    local id = id_here()
    if id then
      ioh.review(id)
    end
  end, { buffer = b, silent = true, nowait = true })
  return b
end

return M
