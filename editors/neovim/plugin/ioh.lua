-- ioh user commands; require("ioh").setup{} starts the server. See :help ioh.
if vim.g.loaded_ioh then
  return
end
vim.g.loaded_ioh = true

local function ioh()
  local m = require("ioh")
  if not require("ioh.client").options() then
    m.setup({})
  end
  return m
end

local cmd = vim.api.nvim_create_user_command

cmd("IohAsk", function(a)
  local range = a.range > 0 and { a.line1, a.line2 } or nil
  if a.args == "" then
    vim.ui.input({ prompt = "Ask agent: " }, function(goal)
      if goal and goal ~= "" then
        ioh().ask(goal, range)
      end
    end)
    return
  end
  ioh().ask(a.args, range)
end, { nargs = "*", range = true, desc = "ioh: ask the agent (goal) about this file or the selected lines" })

cmd("IohRun", function(a)
  ioh().run(a.args)
end, { nargs = "?", complete = "file", desc = "ioh: run a task contract (default: this file)" })

cmd("IohApprove", function(a)
  ioh().approve(a.args)
end, { nargs = "?", desc = "ioh: apply a pending verified change" })

cmd("IohReject", function(a)
  ioh().reject(nil, a.args)
end, { nargs = "*", desc = "ioh: reject the pending change [reason]" })

cmd("IohCancel", function(a)
  ioh().cancel(a.args)
end, { nargs = "?", desc = "ioh: cancel a run" })

cmd("IohResume", function(a)
  ioh().resume(a.args)
end, { nargs = "?", desc = "ioh: resume a run" })

cmd("IohTrace", function(a)
  ioh().trace(a.args)
end, { nargs = "?", desc = "ioh: show a run's trace" })

cmd("IohRuns", function()
  ioh().runs()
end, { nargs = 0, desc = "ioh: list the runs" })

cmd("IohReview", function(a)
  ioh().review(a.args)
end, { nargs = "?", desc = "ioh: review a held proposal's diff" })

cmd("IohClearTrace", function(a)
  ioh().clear_trace(a.args)
end, { nargs = "?", desc = "ioh: clear the trace diagnostics" })
