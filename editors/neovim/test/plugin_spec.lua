-- The plugin against test/fake_server.py: setup → attach → :IohAsk →
-- progress and an `ioh` diagnostic → held proposal opens the review
-- buffer → `a` applies → buffer and disk fixed. Plus the pure functions.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
package.path = here .. "/?.lua;" .. package.path
local H = require("helpers")

H.run(function()
  vim.cmd("runtime plugin/ioh.lua")
  H.eq(vim.fn.exists(":IohAsk"), 2, "user commands are defined")
  for _, c in ipairs({ "IohRun", "IohApprove", "IohReject", "IohCancel", "IohTrace", "IohRuns" }) do
    H.eq(vim.fn.exists(":" .. c), 2, ":" .. c .. " is defined")
  end

  -- :help ioh works once helptags ran (in a copy, so the tree stays clean).
  local docdir = vim.fn.tempname() .. "/doc"
  vim.fn.mkdir(docdir, "p")
  vim.fn.writefile(vim.fn.readfile(here .. "/../doc/ioh.txt"), docdir .. "/ioh.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(docdir))
  vim.opt.runtimepath:append(vim.fn.fnamemodify(docdir, ":h"))
  for _, tag in ipairs({ "ioh", "ioh.setup()", ":IohAsk", ":IohAsk!", ":IohFollowUp", ":IohRuns", "ioh-review", "ioh-review-hunks", "ioh.status()" }) do
    H.ok(pcall(vim.cmd, "help " .. tag), ":help " .. tag)
  end
  vim.cmd("helpclose")

  -- Options: validation names the key; the server sees only the keys of
  -- docs/lsp.md#settings.
  local config = require("ioh.config")

  -- The values setup{} allows are the server's (schema/settings.schema.json,
  -- generated from its declaration).
  local schema = vim.fn.json_decode(table.concat(vim.fn.readfile(here .. "/../../../schema/settings.schema.json"), "\n"))
  local function keys(set)
    local out = {}
    for k in pairs(set) do
      table.insert(out, k)
    end
    table.sort(out)
    return out
  end
  local function sorted(list, drop)
    local out = {}
    for _, v in ipairs(list) do
      if v ~= drop then
        table.insert(out, v)
      end
    end
    table.sort(out)
    return out
  end
  local sp = schema.properties
  local rule = sp.policy.properties.rules.items.properties
  H.eq(keys(config.CHOICES["model.provider"]), sorted(sp.model.properties.provider.enum, ""), "setup{} providers are the server's")
  H.eq(keys(config.CHOICES.approve), sorted(sp.approve.enum), "setup{} approve modes are the server's")
  H.eq(keys(config.CHOICES.model), keys(sp.model.properties), "setup{} model keys are the server's")
  H.eq(keys(config.CHOICES.budget), keys(sp.budget.properties), "setup{} budget keys are the server's")
  H.eq(keys(config.CHOICES["policy.rules.act"]), sorted(rule.act.enum), "setup{} rule acts are the server's")
  H.eq(keys(config.CHOICES["policy.rules.effect"]), sorted(rule.effect.enum), "setup{} rule effects are the server's")
  for _, k in ipairs(config.KNOWN) do
    if vim.tbl_contains({ "model", "approve", "budget", "policy", "trusted" }, k) then
      H.ok(sp[k] ~= nil, "setup{} option " .. k .. " is a server setting")
    end
  end
  local bad = {
    { { approve = "yes" }, "approve" },
    { { model = { provider = "gemini" } }, "model.provider" },
    { { model = { api_key_env = "HOME" } }, "model.api_key_env" },
    { { model = { temperature = "1" } }, "model.temperature" },
    { { budget = { wall = "soon" } }, "budget.wall" },
    { { budget = { steps = -1 } }, "budget.steps" },
    { { policy = { rules = { { act = "sudo", effect = "allow", pattern = "*" } } } }, "policy.rules%[1%]" },
    { { cmd = "ioh-lsp" }, "cmd" },
    { { colour = "red" }, "colour: unknown option; known options: cmd, model," },
    -- Typos of known keys name the nearest one (edit distance).
    { { on_atach = function() end }, "on_atach: unknown option %(did you mean on_attach%?%)" },
    { { capabilites = {} }, "capabilites: unknown option %(did you mean capabilities%?%)" },
    { { Settings = {} }, "Settings: unknown option %(did you mean settings%?%)" },
    { { rootdir = "/" }, "rootdir: unknown option %(did you mean root_dir%?%)" },
    { { init_option = {} }, "init_option: unknown option %(did you mean init_options%?%)" },
    { { aprove = "ask" }, "aprove: unknown option %(did you mean approve%?%)" },
    { { attach = function() end }, "attach: unknown option %(did you mean on_attach%?%)" },
    -- The nvim-lspconfig keys are checked for their type.
    { { on_attach = "f" }, "on_attach: want a function" },
    { { capabilities = true }, "capabilities: want a table" },
    { { handlers = { ["$/progress"] = 1 } }, "handlers.%$/progress: want a function" },
    { { flags = 1 }, "flags: want a table" },
    { { root_dir = 3 }, "root_dir: want a directory or a function" },
    { { root_dir = "/nonexistent/ioh" }, "root_dir: /nonexistent/ioh is not a directory" },
    { { settings = { ioh = "x" } }, "settings.ioh: want a table" },
    { { init_options = "x" }, "init_options: want a table" },
  }
  for _, c in ipairs(bad) do
    local ok, err = pcall(config.validate, c[1])
    H.ok(not ok and tostring(err):find("^ioh.setup: " .. c[2]) ~= nil, "setup rejects bad " .. c[2]:gsub("%%", ""), tostring(err))
  end
  H.eq(config.nearest("xyzzy", config.KNOWN), nil, "no suggestion when no key is near")
  H.eq(config.distance("kitten", "sitting"), 3, "edit distance")
  H.eq(config.validate({ cmd = { "/opt/ioh-lsp" } }).cmd, { "/opt/ioh-lsp" }, "a one-word cmd is kept as given (not merged with the default's serve)")
  H.eq(config.validate({ review_keymaps = { approve = "A" } }).review_keymaps, { approve = "A", reject = "r", toggle = "x", close = "q" }, "review_keymaps merge key by key")
  H.eq(config.with_ioh({ ioh = { sandbox = { require = "landlock" }, approve = "never" }, other = { x = 1 } }, { approve = "ask" }),
    { ioh = { sandbox = { require = "landlock" }, approve = "ask" }, other = { x = 1 } }, "user settings merge under the plugin's ioh section, typed options win")
  H.match(vim.fn.json_encode(config.with_ioh(nil, vim.empty_dict())), '^{"ioh": ?{}}$', "an empty ioh section stays an object on the wire")
  local order = {}
  local chained = config.chain_handlers({ m = function() table.insert(order, "plugin"); return "p" end, only = function() return "o" end },
    { m = function() table.insert(order, "user") end, u = function() return "u" end })
  H.eq({ chained.m(), order, chained.only(), chained.u() }, { "p", { "plugin", "user" }, "o", "u" }, "handlers: the plugin's, then the user's; a nil answer keeps the plugin's")
  chained = config.chain_handlers({ m = function() return "p" end }, { m = function() return "user answer" end })
  H.eq(chained.m(), "user answer", "handlers: the user's answer wins when it gives one")
  H.eq(config.server_config(config.validate({ model = { provider = "anthropic", name = "claude-sonnet-4-6", base_url = "" }, budget = { steps = 40, cost_usd = 2 }, trusted = {} })),
    { model = { provider = "anthropic", name = "claude-sonnet-4-6" }, budget = { steps = 40, cost_usd = 2 } }, "server config keeps set keys only")

  -- Pure helpers.
  local handlers = require("ioh.handlers")
  H.eq(handlers.run_in_message("ioh run r-12: verified change to 2 file(s) ready: x"), "r-12", "run id from the held proposal's message")
  H.eq(handlers.run_in_message("something else"), nil, "no run id in other messages")
  H.eq(handlers.touched({ changes = { ["file:///b"] = {}, ["file:///a"] = {} }, documentChanges = {
    { textDocument = { uri = "file:///c" }, edits = {} }, { kind = "create", uri = "file:///d" }, { kind = "rename", oldUri = "file:///e", newUri = "file:///f" } } }),
    { "file:///a", "file:///b", "file:///c", "file:///d", "file:///f" }, "touched files of a workspace edit")
  local status = require("ioh.status")
  status.reset()
  H.eq(status.text(), "", "idle status is empty")
  status.on_progress({ token = "ioh/r-1", value = { kind = "begin", title = "ioh: fix", message = "run r-1" } })
  status.on_progress({ token = "ioh/r-2", value = { kind = "begin", title = "ioh: other" } })
  status.on_progress({ token = "ioh/r-1", value = { kind = "report", message = "step 3 · 1200 tokens · $0.0100" } })
  status.on_progress({ token = "other/1", value = { kind = "begin", title = "not ours" } })
  H.eq(status.text(), "ioh r-2 +1", "status shows the newest run and how many more")
  status.on_progress({ token = "ioh/r-2", value = { kind = "end", message = "verified" } })
  status.set_pending("r-2", true)
  H.eq(status.text(), "ioh r-1: step 3 · 1200 tokens · $0.0100 · 1 to review", "status with a run and a proposal")
  status.reset()
  -- The end of a run, as the server words it (lsp/progress.go endMessage).
  local L = vim.log.levels
  H.eq({ status.end_notice("r-1", "failed: provider_failed (run r-1, 2 steps, $0.0000): provider: 503") },
    { "ioh: failed: provider_failed (run r-1, 2 steps, $0.0000): provider: 503", L.ERROR }, "a failed run's end is an error with its reason")
  H.eq({ status.end_notice("r-2", "failed: budget_exceeded (run r-2, 1 steps, $0.0000): budget exceeded: steps 1/1") },
    { "ioh: failed: budget_exceeded (run r-2, 1 steps, $0.0000): budget exceeded: steps 1/1\ncontinue with a larger budget: :IohResume r-2 (the server asks how much to raise it)", L.WARN },
    "a budget stop says how to continue")
  H.eq({ status.end_notice("r-3", "completed: applied (run r-3, 3 steps, $0.0010)") }, { "ioh: completed: applied (run r-3, 3 steps, $0.0010)", L.INFO }, "a completed run's end")
  H.eq({ status.end_notice("r-4", "applied") }, { "ioh: run r-4 ended: applied", L.INFO }, "an end message without the run id names it")
  H.eq(require("ioh.review").lines("r-1", "-a\n+b\n", nil, { approve = "a", reject = "r", toggle = "x", close = "q" }),
    { "# ioh run r-1: proposed change", "# a: apply   r: reject   x: drop/keep the hunk   q: close", "", "-a", "+b" }, "review buffer text")
  local lines = require("ioh.runs").format({ { runId = "r-1", goal = "fix  it", outcome = "applied", steps = 3, tokens = 1200, costUsd = 0.01, started = "2026-11-29T22:00:00Z" } })
  H.eq(#lines, 2, "runs list has a header and one line")
  H.match(lines[2], "^r%-1%s+applied%s+3 steps%s+1200 tok %$0%.0100  2026%-11%-29T22:00:00Z  fix it$", "runs list line")
  -- An unpriced run (costUsd null, which Neovim decodes as nil or vim.NIL) has an unknown cost, not $0.
  for _, null in ipairs({ vim.NIL, "absent" }) do
    local run = { runId = "r-2", goal = "g", outcome = "applied", steps = 1, tokens = 10, started = "2026-11-29T22:00:00Z" }
    if null ~= "absent" then
      run.costUsd = null
    end
    H.match(require("ioh.runs").format({ run })[2], "10 tok cost unknown  2026", "an unpriced run's cost is unknown (" .. tostring(null) .. ")")
  end

  -- End to end against the fake server.
  local dir = H.copy_fixture(here .. "/fixture/calc")
  local cassette = dir .. "/cassette.json"
  -- The keys of an nvim-lspconfig setup, each observable below.
  local attached, roots, user_progress = {}, {}, 0
  require("ioh").setup({
    cmd = { "python3", here .. "/fake_server.py" },
    model = { provider = "replay", cassette = cassette },
    approve = "ask",
    on_attach = function(c, b)
      table.insert(attached, { name = c.name, bufnr = b })
    end,
    capabilities = { workspace = { ioh_probe = { on = true } }, textDocument = { hover = { contentFormat = { "plaintext" } } } },
    handlers = { ["$/progress"] = function() user_progress = user_progress + 1 end },
    flags = { debounce_text_changes = 7 },
    root_dir = function(fname, b)
      table.insert(roots, { fname = fname, bufnr = b })
      return fname:find("/calc%.go$") and vim.fn.fnamemodify(fname, ":h") or nil
    end,
    settings = { other = { x = 1 }, ioh = { sandbox = { require = "landlock" } } },
    init_options = { extra = true },
  })
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/calc.go"))
  local buf = vim.api.nvim_get_current_buf()
  local client = require("ioh.client")
  H.wait(5000, function()
    local c = client.get(buf)
    return c ~= nil and c.initialized ~= false and vim.lsp.buf_is_attached(buf, c.id)
  end, "the buffer is attached to ioh-lsp")
  H.wait(5000, function() return #attached > 0 end, "on_attach is called")
  H.eq(attached, { { name = "ioh-lsp", bufnr = buf } }, "on_attach(client, bufnr) gets the ioh-lsp client and the buffer")
  H.eq(roots[1], { fname = dir .. "/calc.go", bufnr = buf }, "root_dir(fname, bufnr) is asked for the buffer's root")
  H.eq(client.get(buf).config.flags, { debounce_text_changes = 7 }, "flags reach the client")
  local c = client.get(buf)
  local function calls()
    local res = c.request_sync("workspace/executeCommand", { command = "fake.calls", arguments = {} }, 5000, buf)
    return res and res.result or {}
  end
  local function find(method, cmd)
    for _, m in ipairs(calls()) do
      if m.method == method and (cmd == nil or (m.params and m.params.command == cmd)) then
        return m.params
      end
    end
  end
  H.wait(5000, function() return find("fake/configuration") ~= nil end, "server pulled workspace/configuration")
  local init = find("initialize")
  H.eq(init and init.initializationOptions, { ioh = { model = { provider = "replay", cassette = cassette }, approve = "ask" }, extra = true }, "initializationOptions: ioh and the user's init_options")
  H.eq(init and init.rootUri, vim.uri_from_fname(dir), "root is the one root_dir gave")
  local caps = init and init.capabilities or {}
  H.eq({ caps.workspace and caps.workspace.ioh_probe, caps.workspace and caps.workspace.applyEdit, caps.textDocument and caps.textDocument.hover and caps.textDocument.hover.contentFormat },
    { { on = true }, true, { "plaintext" } }, "capabilities: the user's merged over Neovim's own")
  H.eq(find("fake/configuration"), { { model = { provider = "replay", cassette = cassette }, approve = "ask", sandbox = { require = "landlock" } }, { x = 1 } },
    "workspace/configuration: section ioh with the user's settings merged, and the user's other section")

  vim.cmd("2,5IohAsk make the failing test pass")
  H.wait(5000, function() return require("ioh.review").find("r-1") ~= nil end, "the held proposal opens the review buffer")
  local ask = find("workspace/executeCommand", "ioh.ask")
  H.eq(ask and ask.arguments, { { goal = "make the failing test pass", uri = vim.uri_from_fname(dir .. "/calc.go"),
    range = { start = { line = 1, character = 0 }, ["end"] = { line = 5, character = 0 } } } }, "ioh.ask arguments")
  local rb = require("ioh.review").find("r-1")
  H.wait(2000, function()
    return vim.tbl_contains(vim.api.nvim_buf_get_lines(rb, 0, -1, false), "+\treturn a + b")
  end, "the review buffer shows the diff")
  H.eq(vim.bo[rb].filetype, "diff", "review buffer is a diff")
  H.eq(require("ioh").status(), "ioh r-1: step 2 · 2000 tokens · $0.0036 · edit_file · 1 to review", "statusline during review (the plugin's $/progress handler still runs)")
  H.ok(user_progress >= 2, "the user's $/progress handler runs too", "called " .. user_progress .. " times")
  local diags = vim.diagnostic.get(buf)
  H.ok(#diags == 1 and diags[1].source == "ioh", "an ioh diagnostic is shown", vim.inspect(diags))

  -- Approve from the review buffer with its mapping.
  vim.api.nvim_set_current_win(vim.fn.bufwinid(rb))
  vim.api.nvim_feedkeys("a", "x", false)
  H.wait(5000, function()
    return vim.api.nvim_buf_get_lines(buf, 4, 5, false)[1] == "\treturn a + b"
  end, "the buffer is fixed", function() return vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) end)
  H.wait(5000, function()
    return (H.read(dir .. "/calc.go") or ""):find("return a %+ b") ~= nil
  end, "the file on disk is fixed")
  H.eq(vim.bo[buf].modified, false, "the buffer is saved")
  H.wait(2000, function() return require("ioh.review").find("r-1") == nil end, "the review buffer closes")
  H.eq((find("workspace/executeCommand", "ioh.approve") or {}).arguments, { { runId = "r-1" } }, "ioh.approve arguments")
  H.eq(require("ioh").status(), "", "status is idle after the run")

  -- :IohRuns lists the run.
  vim.cmd("IohRuns")
  H.wait(3000, function() return vim.fn.bufnr("ioh://runs") ~= -1 end, ":IohRuns opens the list")
  local rl = vim.api.nvim_buf_get_lines(vim.fn.bufnr("ioh://runs"), 0, -1, false)
  H.match(rl[2], "^r%-1%s+applied", ":IohRuns shows the applied run")

  -- A second proposal, rejected from the review buffer with a reason.
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("IohAsk rename Add")
  H.wait(5000, function() return require("ioh.review").find("r-2") ~= nil end, "the second proposal opens its review")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(require("ioh.review").find("r-2")))
  local input = vim.ui.input
  vim.ui.input = function(_, cb) cb("too broad") end
  vim.api.nvim_feedkeys("r", "x", false)
  vim.ui.input = input
  H.wait(5000, function() return require("ioh.review").find("r-2") == nil end, "rejecting closes the review")
  H.eq((find("workspace/executeCommand", "ioh.reject") or {}).arguments, { { runId = "r-2", reason = "too broad" } }, "ioh.reject arguments")
  H.eq(vim.api.nvim_buf_get_lines(buf, 4, 5, false)[1], "\treturn a + b", "a rejected proposal changes nothing")

  -- Follow-ups: :IohAsk! goes to the last run, :IohFollowUp to the one named;
  -- ioh.ask carries its runId (docs/lsp.md#follow-ups).
  local function last_ask()
    local got
    for _, m in ipairs(calls()) do
      if m.method == "workspace/executeCommand" and m.params and m.params.command == "ioh.ask" then
        got = m.params.arguments
      end
    end
    return got
  end
  local function notified(pat)
    return function()
      for _, m in ipairs(H.messages) do
        if m:find(pat) then
          return true
        end
      end
      return false
    end
  end
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("IohAsk! keep Sub as it is")
  H.wait(3000, notified("^ioh: follow%-up on r%-2: run r%-3 started$"), ":IohAsk! says which run the follow-up started")
  H.eq(last_ask(), { { goal = "keep Sub as it is", uri = vim.uri_from_fname(dir .. "/calc.go"), runId = "r-2" } },
    ":IohAsk! sends ioh.ask with the last run's runId")
  vim.cmd("2,3IohFollowUp r-1 document Add")
  H.wait(3000, notified("^ioh: follow%-up on r%-1: run r%-4 started$"), ":IohFollowUp says which run the follow-up started")
  H.eq(last_ask(), { { goal = "document Add", uri = vim.uri_from_fname(dir .. "/calc.go"), runId = "r-1",
    range = { start = { line = 1, character = 0 }, ["end"] = { line = 3, character = 0 } } } }, ":IohFollowUp sends the named run's runId")
  vim.cmd("IohFollowUp r-99 more")
  H.wait(3000, notified("^ioh: follow%-up on r%-99 failed: .*no such run"), "a follow-up the server refuses says why")

  -- The other commands, through the plugin's API (run.sh checks every
  -- payload against schema/commands.schema.json).
  local task = dir .. "/fix.ioh.yaml"
  vim.fn.writefile({ "version: 1", "goal: fix it" }, task)
  require("ioh").run(task)
  H.wait(3000, function() return find("workspace/executeCommand", "ioh.run") ~= nil end, "ioh.run is sent")
  H.eq((find("workspace/executeCommand", "ioh.run") or {}).arguments, { { contract = vim.uri_from_fname(task) } }, "ioh.run arguments")
  vim.api.nvim_set_current_buf(buf)
  for _, step in ipairs({
    { "cancel", "ioh.cancel", { "r-3" } }, { "resume", "ioh.resume", { "r-2" } }, { "trace", "ioh.trace", { "r-1" } },
    { "clear_trace", "ioh.clearTrace", { "r-1" } },
  }) do
    require("ioh")[step[1]](unpack(step[3]))
    H.wait(3000, function() return find("workspace/executeCommand", step[2]) ~= nil end, step[2] .. " is sent")
    H.eq((find("workspace/executeCommand", step[2]) or {}).arguments, { { runId = step[3][1] } }, step[2] .. " arguments")
  end

  -- Bad input from the user: a clear message, no request.
  local msgs = {}
  local orig = vim.notify
  vim.notify = function(m) table.insert(msgs, m) end
  vim.cmd("IohRun " .. dir .. "/missing.ioh.yaml")
  vim.notify = orig
  H.match(msgs[1], "^ioh: run: no task file", ":IohRun on a missing file says so")

  -- root_dir answering nil: the buffer is not attached (nvim-lspconfig's rule).
  local other = dir .. "/notes.txt"
  vim.fn.writefile({ "x" }, other)
  vim.cmd("edit " .. vim.fn.fnameescape(other))
  local ob = vim.api.nvim_get_current_buf()
  H.wait(2000, function() return #roots >= 2 end, "root_dir is asked for the other buffer")
  local on_ob = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = ob }) or vim.lsp.buf_get_clients(ob)
  H.eq(vim.tbl_count(on_ob), 0, "a buffer root_dir answers nil for is not attached")

  -- Per-hunk review: of a two-hunk change, `x` on the second hunk drops it;
  -- `a` then applies only the first hunk's edit.
  local two = dir .. "/two.txt"
  local twelve = {}
  for i = 1, 12 do
    twelve[i] = "l" .. i
  end
  vim.fn.writefile(twelve, two)
  vim.cmd("edit " .. vim.fn.fnameescape(two))
  local tb = vim.api.nvim_get_current_buf()
  vim.cmd("IohAsk change two hunks")
  local trun
  H.wait(5000, function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local id = vim.api.nvim_buf_get_name(b):match("ioh://review/(.+)$")
      if id and vim.tbl_contains(vim.api.nvim_buf_get_lines(b, 0, -1, false), "+L12") then
        trun = id
        return true
      end
    end
  end, "the two-hunk proposal opens its review")
  local review = require("ioh.review")
  local trb = review.find(trun)
  local function marks()
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(trb, vim.api.nvim_create_namespace("ioh_review"), 0, -1, { details = true })) do
      local vt = m[4].virt_text
      if vt then
        table.insert(out, { vim.api.nvim_buf_get_lines(trb, m[2], m[2] + 1, false)[1], vt[1][1] })
      end
    end
    return out
  end
  H.eq(marks(), { { "@@ -1,4 +1,4 @@", "  [kept]" }, { "@@ -9,4 +9,4 @@", "  [kept]" } }, "every hunk starts kept")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(trb))
  local lines = vim.api.nvim_buf_get_lines(trb, 0, -1, false)
  local function row(text)
    for i, l in ipairs(lines) do
      if l == text then
        return i
      end
    end
  end
  vim.api.nvim_win_set_cursor(0, { row(" l10"), 0 })
  vim.api.nvim_feedkeys("x", "x", false)
  H.eq(marks(), { { "@@ -1,4 +1,4 @@", "  [kept]" }, { "@@ -9,4 +9,4 @@", "  [dropped]" } }, "x drops the hunk under the cursor")
  vim.api.nvim_win_set_cursor(0, { row("-l1"), 0 })
  vim.api.nvim_feedkeys("x", "x", false)
  local warned = {}
  vim.notify = function(m) table.insert(warned, m) end
  vim.api.nvim_feedkeys("a", "x", false)
  vim.notify = orig
  H.match(warned[1] or "", "every hunk is dropped; keep one %(x in the review%) or reject", "approving with every hunk dropped is refused")
  local function approves()
    local n = 0
    for _, m in ipairs(calls()) do
      n = n + ((m.params and m.params.command == "ioh.approve") and 1 or 0)
    end
    return n
  end
  local before = approves()
  vim.wait(300)
  H.eq(approves(), before, "and no approval is sent")
  vim.api.nvim_feedkeys("x", "x", false)
  H.eq(marks(), { { "@@ -1,4 +1,4 @@", "  [kept]" }, { "@@ -9,4 +9,4 @@", "  [dropped]" } }, "x again keeps the hunk")
  vim.api.nvim_feedkeys("a", "x", false)
  H.wait(5000, function() return review.find(trun) == nil end, "approving closes the review")
  local want = vim.deepcopy(twelve)
  want[1] = "L1"
  H.eq(vim.api.nvim_buf_get_lines(tb, 0, -1, false), want, "only the kept hunk is applied")
  H.eq(H.read(two), table.concat(want, "\n") .. "\n", "and saved")

  client.stop()
end)
