-- Test helpers for headless Neovim: assertions that count, waits on the
-- event loop, and an exit status for the shell.
local H = { passed = 0, failed = 0 }

local function out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end

function H.log(s)
  out("  " .. s)
end

function H.ok(cond, name, detail)
  if cond then
    H.passed = H.passed + 1
    out("ok   " .. name)
  else
    H.failed = H.failed + 1
    out("FAIL " .. name .. (detail and ("\n     " .. detail:gsub("\n", "\n     ")) or ""))
  end
  return cond
end

--- eq compares with vim.deep_equal and shows got and want on failure.
function H.eq(got, want, name)
  return H.ok(vim.deep_equal(got, want), name, "got:  " .. vim.inspect(got) .. "\nwant: " .. vim.inspect(want))
end

function H.match(s, pat, name)
  return H.ok(type(s) == "string" and s:find(pat) ~= nil, name, "got " .. vim.inspect(s) .. ", want a match for " .. pat)
end

--- wait runs the event loop until pred holds or ms pass.
function H.wait(ms, pred, name, detail)
  local ok = vim.wait(ms, pred, 20)
  return H.ok(ok, name, not ok and detail and detail() or nil)
end

function H.read(path)
  local f = io.open(path, "r")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

--- copy copies a fixture directory to a fresh temporary one.
function H.copy_fixture(src)
  local dst = vim.fn.tempname()
  vim.fn.mkdir(dst, "p")
  for _, name in ipairs(vim.fn.readdir(src)) do
    vim.fn.writefile(vim.fn.readfile(src .. "/" .. name, "b"), dst .. "/" .. name, "b")
  end
  return dst
end

--- record_commands appends each ioh.* workspace/executeCommand the plugin
--- sends to path as one JSON line, {command, arguments} (run.sh checks them
--- against schema/commands.schema.json). Results are not recorded: Neovim
--- decodes JSON null and {} lossily.
function H.record_commands(path)
  if path == nil or path == "" then
    return
  end
  local client = require("ioh.client")
  local call = client.call
  client.call = function(c, name, method, params, ...)
    if name == "request" and method == "workspace/executeCommand" and type(params) == "table"
      and tostring(params.command):find("^ioh%.") then
      local f = assert(io.open(path, "a"))
      f:write(vim.json.encode({ command = params.command, arguments = params.arguments }) .. "\n")
      f:close()
    end
    return call(c, name, method, params, ...)
  end
end

--- messages holds every vim.notify text, also echoed on its own line.
H.messages = {}

--- run calls body, then exits nvim: 0 when every check passed.
function H.run(body)
  vim.notify = function(m)
    table.insert(H.messages, tostring(m))
    out("  notify: " .. tostring(m))
  end
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.failed = H.failed + 1
    out("FAIL uncaught error: " .. tostring(err))
  end
  out(string.format("%d passed, %d failed", H.passed, H.failed))
  if H.failed > 0 then
    vim.cmd("cquit 1")
  else
    vim.cmd("qall!")
  end
end

return H
