-- ioh.review: a scratch buffer showing a pending proposal's diff (from the
-- server's ioh.showDiff) with mappings to apply or reject it. It serves
-- Neovim versions whose LSP client has no change-annotation support, where
-- the server holds the proposal instead of sending an annotated edit.
-- Each hunk of the diff can be dropped or kept; approving with hunks
-- dropped applies only the kept hunks' text edits (the server records the
-- run "applied in part", docs/lsp.md#approval).
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
    string.format("# %s: apply   %s: reject   %s: drop/keep the hunk   %s: close", maps.approve, maps.reject, maps.toggle, maps.close),
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

local state = {} -- runId -> { hunks = { {file, a0, n, row, kept} }, ns }
local armed = nil -- the dropped hunks of the approval in flight
local ns = vim.api.nvim_create_namespace("ioh_review")

local function strip(path)
  path = path:gsub("\t.*$", "")
  return (path:gsub("^[ab]/", ""))
end

--- hunks parses a unified diff into its hunks: file (the new path, else
--- the old), a0 and n (the old lines' 0-based start and count) and index
--- (the header's line in the diff, 1-based).
function M.hunks(diff)
  local out, old, new, left = {}, nil, nil, 0
  local i = 0
  for l in ((diff or ""):gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do
    i = i + 1
    local a, n, b, m = l:match("^@@ %-(%d+),?(%d*) %+(%d+),?(%d*) @@")
    if a then
      n, m = tonumber(n) or 1, tonumber(m) or 1
      local file = (new and new ~= "/dev/null") and new or old
      -- "-a,0": an insertion after old line a, so at 0-based line a.
      table.insert(out, { file = file, a0 = n == 0 and tonumber(a) or tonumber(a) - 1, n = n, index = i, kept = true })
      left = n + m
    elseif left > 0 then
      local c = l:sub(1, 1)
      left = left - ((c == " " or c == "") and 2 or (c == "\\" and 0 or 1))
    elseif l:match("^%-%-%- ") then
      old, new = strip(l:sub(5)), nil
    elseif l:match("^%+%+%+ ") then
      new = strip(l:sub(5))
    end
  end
  return out
end

local function render(buf, id)
  local st = state[id]
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(st and st.hunks or {}) do
    vim.api.nvim_buf_set_extmark(buf, ns, h.row, 0, {
      virt_text = { h.kept and { "  [kept]", "DiffAdd" } or { "  [dropped]", "DiffDelete" } },
    })
  end
end

--- hunk_at returns the hunk of run id's review shown at 0-based row.
local function hunk_at(id, row)
  local found
  for _, h in ipairs(state[id] and state[id].hunks or {}) do
    if h.row <= row then
      found = h
    end
  end
  return found
end

--- toggle drops the hunk at 0-based row of run id's review, or keeps it
--- again; it returns the hunk (nil: the row is in no hunk).
function M.toggle(id, row)
  local h = hunk_at(id, row)
  if h then
    h.kept = not h.kept
    local b = M.find(id)
    if b then
      render(b, id)
    end
  end
  return h
end

--- selection returns run id's hunks as { kept = n, dropped = { hunk, ... } }.
function M.selection(id)
  local sel = { kept = 0, dropped = {} }
  for _, h in ipairs(state[id] and state[id].hunks or {}) do
    if h.kept then
      sel.kept = sel.kept + 1
    else
      table.insert(sel.dropped, h)
    end
  end
  return sel
end

--- arm readies the approval of run id: its dropped hunks filter the
--- workspace/applyEdit that follows. It refuses when every hunk is dropped.
function M.arm(id)
  local sel = M.selection(id)
  armed = nil
  if #sel.dropped > 0 and sel.kept == 0 then
    return false, string.format("run %s: every hunk is dropped; keep one (%s in the review) or reject the change", id,
      client.options().review_keymaps.toggle)
  end
  if #sel.dropped > 0 then
    armed = { id = id, dropped = sel.dropped }
  end
  return true
end

--- take_armed returns the dropped hunks of the approval in flight, once.
function M.take_armed()
  local a = armed
  armed = nil
  return a and a.dropped
end

local function in_hunk(fname, line, h)
  local f = h.file or ""
  local same = fname == f or fname:sub(-#f - 1) == "/" .. f
  return same and line >= h.a0 and line <= h.a0 + h.n
end

--- filter_edit returns a copy of the WorkspaceEdit without the text edits
--- that start in a dropped hunk (the server sends one edit per hunk).
function M.filter_edit(edit, dropped)
  local function keep(u, edits)
    local fname, out = vim.uri_to_fname(u), {}
    for _, e in ipairs(edits or {}) do
      local gone = false
      for _, h in ipairs(dropped) do
        gone = gone or in_hunk(fname, e.range.start.line, h)
      end
      if not gone then
        table.insert(out, e)
      end
    end
    return out
  end
  local out = vim.deepcopy(edit)
  for u, es in pairs(out.changes or {}) do
    out.changes[u] = keep(u, es)
  end
  for _, c in ipairs(out.documentChanges or {}) do
    if c.textDocument and c.edits then
      c.edits = keep(c.textDocument.uri, c.edits)
    end
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
  state[id] = nil
  if armed and armed.id == id then
    armed = nil
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
  map(maps.toggle, function()
    if not M.toggle(id, vim.api.nvim_win_get_cursor(0)[1] - 1) then
      vim.notify("ioh: no hunk here; put the cursor on a hunk (its @@ line or below)", vim.log.levels.WARN)
    end
  end, "ioh: drop or keep the hunk under the cursor")
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
    local lines = M.lines(id, diff, note, maps)
    local hunks = M.hunks(diff)
    local skip = (note and note ~= "") and 4 or 3 -- the header's lines (see lines)
    for _, h in ipairs(hunks) do
      h.row = skip + h.index - 1
    end
    state[id] = { hunks = hunks }
    set_text(b, lines)
    render(b, id)
    status.set_pending(id, true)
    vim.cmd("silent doautocmd <nomodeline> User IohReview")
  end)
end

return M
