-- End to end against the real ioh-lsp ($IOH_LSP) on Neovim without
-- change-annotation support: open the fixture project (a failing Go test),
-- :IohAsk with the replay provider (fixture cassette), the server verifies
-- the change in its sandbox and holds the proposal, the review buffer shows
-- the diff, `a` applies it; then the buffer and the disk are fixed, the
-- project's test passes and `ioh` diagnostics are shown; a follow-up on
-- that run (:IohFollowUp) starts a new run whose trace names it; a
-- two-hunk change with one hunk dropped in the review is applied in part.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
package.path = here .. "/?.lua;" .. package.path
local H = require("helpers")

local TIMEOUT = tonumber(vim.env.IOH_E2E_TIMEOUT or "") or 180000

H.run(function()
  local bin = vim.env.IOH_LSP or ""
  if bin == "" or vim.fn.executable(bin) ~= 1 then
    error("IOH_LSP must name the built ioh-lsp binary, got " .. vim.inspect(bin))
  end
  vim.cmd("runtime plugin/ioh.lua")
  H.record_commands(vim.env.IOH_COMMAND_LOG)
  local dir = H.copy_fixture(here .. "/fixture/calc")
  -- Keep this run's trace store out of the user's state directory.
  vim.env.IOH_STATE_DIR = vim.fn.tempname()
  -- The user config trusts the fixture: editor settings may come from the
  -- repository (exrc, project-local plugin config), so the server takes
  -- their provider and cassette only in a trusted workspace
  -- (docs/editors.md#settings-and-trust).
  local config_home = vim.fn.tempname()
  vim.fn.mkdir(config_home .. "/ioh", "p")
  vim.fn.writefile({ "trusted: [" .. vim.json.encode(dir) .. "]" }, config_home .. "/ioh/config.yaml")
  vim.env.XDG_CONFIG_HOME = config_home
  vim.lsp.set_log_level("warn")

  local msgs = H.messages
  local function context()
    return "notifications: " .. vim.inspect(msgs) .. "\nLSP log: " .. vim.lsp.get_log_path()
  end

  require("ioh").setup({
    cmd = { bin, "serve" },
    model = { provider = "replay", cassette = dir .. "/cassette.json" },
    approve = "ask",
  })
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/calc.go"))
  local buf = vim.api.nvim_get_current_buf()
  local client = require("ioh.client")
  if not H.wait(15000, function()
    local c = client.get(buf)
    return c ~= nil and vim.lsp.buf_is_attached(buf, c.id) and c.initialized ~= false
  end, "ioh-lsp starts and attaches", context) then
    return
  end

  vim.cmd("IohAsk make the failing test in calc_test.go pass")
  local review = require("ioh.review")
  local run, failed
  H.wait(TIMEOUT, function()
    for _, m in ipairs(msgs) do
      if m:find("failed") or m:find("exited") then
        failed = m
        return true
      end
    end
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local id = vim.api.nvim_buf_get_name(b):match("ioh://review/(.+)$")
      if id then
        run = id
        return true
      end
    end
  end, "the run ends or asks for review", context)
  if not H.ok(run ~= nil and failed == nil, "the verified change is held and opens the review buffer", context()) then
    return
  end
  local rb = review.find(run)
  H.wait(5000, function()
    return vim.tbl_contains(vim.api.nvim_buf_get_lines(rb, 0, -1, false), "+\treturn a + b")
  end, "the review buffer shows the diff", function() return vim.inspect(vim.api.nvim_buf_get_lines(rb, 0, -1, false)) end)
  H.eq(H.read(dir .. "/calc.go"):find("return a %- b") ~= nil, true, "nothing touched the disk before approval")

  vim.api.nvim_set_current_win(vim.fn.bufwinid(rb))
  vim.api.nvim_feedkeys("a", "x", false)
  H.wait(30000, function()
    return vim.api.nvim_buf_get_lines(buf, 4, 5, false)[1] == "\treturn a + b"
  end, "the buffer is fixed", function() return vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) .. "\n" .. context() end)
  H.wait(10000, function()
    return (H.read(dir .. "/calc.go") or ""):find("return a %+ b") ~= nil
  end, "the file on disk is fixed", context)
  H.wait(10000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == "ioh" then
        return true
      end
    end
  end, "ioh diagnostics are shown", function() return vim.inspect(vim.diagnostic.get(buf)) end)
  H.eq(vim.bo[buf].modified, false, "the edited buffer is saved")
  H.wait(30000, function() return require("ioh").status() == "" end, "the statusline is idle after the run",
    function() return vim.inspect(require("ioh").status()) end)
  if vim.fn.executable("go") == 1 then
    local out = vim.fn.system({ "sh", "-c", "cd " .. vim.fn.shellescape(dir) .. " && GOFLAGS=-mod=mod go test ./... 2>&1" })
    H.eq(vim.v.shell_error, 0, "the project's test passes after the change (" .. vim.trim(out) .. ")")
  end

  -- Failures are told, not only stored: a budget stop (one step of a
  -- three-turn cassette) with the way to continue, and a provider failure
  -- (a cassette with no turns) with its reason.
  local function ended(pat)
    local found
    H.wait(TIMEOUT, function()
      for _, m in ipairs(msgs) do
        if m:find(pat) then
          found = m
          return true
        end
      end
    end, "a notification matching " .. pat, context)
    return found
  end
  vim.fn.writefile({ "version: 1", "goal: make the failing test in calc_test.go pass", "budget: {steps: 1}" }, dir .. "/small.ioh.yaml")
  vim.cmd("IohRun " .. vim.fn.fnameescape(dir .. "/small.ioh.yaml"))
  local stop = ended("budget_exceeded")
  H.match(stop, "^ioh: failed: budget_exceeded %(run r%-[%w]+, 1 steps", "the budget stop names the outcome and the run")
  H.match(stop, "continue with a larger budget: :IohResume r%-[%w]+", "the budget stop says how to continue")
  vim.fn.writefile({ '{"version": 1, "turns": []}' }, dir .. "/empty.json")
  vim.fn.writefile({ "version: 1", "goal: anything", "model: {provider: replay, name: t, cassette: empty.json}" }, dir .. "/empty.ioh.yaml")
  vim.cmd("IohRun " .. vim.fn.fnameescape(dir .. "/empty.ioh.yaml"))
  local fail = ended("provider_failed")
  H.match(fail, "^ioh: failed: provider_failed %(run r%-[%w]+, 0 steps, [^)]*%): .+", "the provider failure names the outcome and the reason")

  -- A follow-up on the applied run (:IohFollowUp, ioh.ask with its runId):
  -- the server starts a new run linked to it, whose trace names it.
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("IohFollowUp " .. run .. " now also document Add")
  local next_run = ended("^ioh: follow%-up on " .. run:gsub("%-", "%%-") .. ": run r%-[%w]+ started$")
  next_run = next_run and next_run:match("run (r%-[%w]+) started$")
  if H.ok(next_run ~= nil and next_run ~= run, "a follow-up on an applied run starts a new run", context()) then
    ended("%(run " .. next_run:gsub("%-", "%%-"))
    local res = client.get(buf).request_sync("workspace/executeCommand", { command = "ioh.trace", arguments = { { runId = next_run } } }, 10000, buf)
    local file = res and res.result and res.result.file
    H.match(file and H.read(file) or vim.inspect(res), 'follows="' .. run:gsub("%-", "%%-") .. '"', "the follow-up's trace names the run it follows")
  end

  -- Per-hunk review: a change with two hunks (one.txt's first and last
  -- lines), the second dropped with `x`; `a` applies the first only and
  -- the server records the run applied in part.
  local words = { "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve" }
  vim.fn.writefile(words, dir .. "/words.txt")
  vim.fn.writefile({ vim.json.encode({ version = 1, turns = {
    { tool_calls = { { name = "edit_file", arguments = { path = "words.txt", old = "one\n", new = "ONE\n" } } } },
    { tool_calls = { { name = "edit_file", arguments = { path = "words.txt", old = "twelve\n", new = "TWELVE\n" } } } },
    { tool_calls = { { name = "finish", arguments = { summary = "words shouted at both ends" } } } },
  } }) }, dir .. "/two.json")
  vim.fn.writefile({ "version: 1", "goal: shout the first and last words", "model: {provider: replay, name: t, cassette: two.json}" }, dir .. "/two.ioh.yaml")
  vim.cmd("IohRun " .. vim.fn.fnameescape(dir .. "/two.ioh.yaml"))
  local two, trb
  H.wait(TIMEOUT, function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local id = vim.api.nvim_buf_get_name(b):match("ioh://review/(.+)$")
      if id and vim.tbl_contains(vim.api.nvim_buf_get_lines(b, 0, -1, false), "+TWELVE") then
        two, trb = id, b
        return true
      end
    end
  end, "the two-hunk change opens its review", context)
  if H.ok(two ~= nil, "the two-hunk change is held for review", context()) then
    vim.api.nvim_set_current_win(vim.fn.bufwinid(trb))
    local lines = vim.api.nvim_buf_get_lines(trb, 0, -1, false)
    for i, l in ipairs(lines) do
      if l == "+TWELVE" then
        vim.api.nvim_win_set_cursor(0, { i, 0 })
      end
    end
    vim.api.nvim_feedkeys("x", "x", false)
    vim.api.nvim_feedkeys("a", "x", false)
    local want = vim.deepcopy(words)
    want[1] = "ONE"
    H.wait(30000, function()
      return H.read(dir .. "/words.txt") == table.concat(want, "\n") .. "\n"
    end, "words.txt holds only the kept hunk", function() return vim.inspect(H.read(dir .. "/words.txt")) .. "\n" .. context() end)
    ended("run " .. two:gsub("%-", "%%-") .. " approved")
    local res = client.get(buf).request_sync("workspace/executeCommand", { command = "ioh.trace", arguments = { { runId = two } } }, 10000, buf)
    local file = res and res.result and res.result.file
    H.match(file and H.read(file) or vim.inspect(res), "applied in part: words.txt: 1 of 2 hunks", "the server records the run applied in part")
  end
  client.stop()
end)
