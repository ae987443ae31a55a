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
  -- With a bang: a follow-up on the last run (docs/lsp.md#follow-ups).
  local send = a.bang and function(g) ioh().follow_up(g, range) end or function(g) ioh().ask(g, range) end
  if a.args == "" then
    vim.ui.input({ prompt = a.bang and "Follow up: " or "Ask agent: " }, function(goal)
      if goal and goal ~= "" then
        send(goal)
      end
    end)
    return
  end
  send(a.args)
end, { nargs = "*", range = true, bang = true, desc = "ioh: ask the agent (goal) about this file or the selected lines; !: follow up on the last run" })

cmd("IohFollowUp", function(a)
  local range = a.range > 0 and { a.line1, a.line2 } or nil
  local run, goal = a.args:match("^(%S+)%s*(.*)$")
  if goal == "" then
    vim.ui.input({ prompt = "Follow up on " .. run .. ": " }, function(g)
      if g and g ~= "" then
        ioh().follow_up(g, range, run)
      end
    end)
    return
  end
  ioh().follow_up(goal, range, run)
end, { nargs = "+", range = true, desc = "ioh: follow up on a run: {run} {goal}, in its conversation" })

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
