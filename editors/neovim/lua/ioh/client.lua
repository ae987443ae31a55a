-- ioh.client: starts or reuses one ioh-lsp client per workspace root and
-- attaches buffers to it, with vim.lsp.start where Neovim has it (0.8+) and
-- vim.lsp.start_client + vim.lsp.buf_attach_client on 0.7.
local status = require("ioh.status")

local M = {}

M.name = "ioh-lsp"
local by_root = {} -- root -> client id (0.7 path)
local opts -- validated setup options

function M.configure(o)
  opts = o
end

function M.options()
  return opts
end

local function is_dir(p)
  return vim.fn.isdirectory(p) == 1
end

local function exists(p)
  return vim.loop.fs_stat(p) ~= nil
end

--- root_for finds the workspace root above path: the nearest directory
--- holding a root marker, else the file's directory (or the cwd).
function M.root_for(path)
  local dir = path ~= "" and vim.fn.fnamemodify(path, ":p:h") or vim.loop.cwd()
  if not is_dir(dir) then
    dir = vim.loop.cwd()
  end
  local cur = dir
  while true do
    for _, m in ipairs(opts.root_markers) do
      if exists(cur .. "/" .. m) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ":h")
    if parent == cur then
      return dir
    end
    cur = parent
  end
end

-- Client methods are called with ":" from 0.11 on (the "." form is
-- deprecated there) and with "." before.
local method_style = vim.fn.has("nvim-0.11") == 1

--- call invokes a client method the way this Neovim expects.
function M.call(c, name, ...)
  if method_style then
    return c[name](c, ...)
  end
  return c[name](...)
end

--- clients lists the running ioh-lsp clients.
function M.clients()
  local out = {}
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in ipairs(all) do
    if c.name == M.name and not M.call(c, "is_stopped") then
      table.insert(out, c)
    end
  end
  return out
end

--- get returns the ioh-lsp client of bufnr, else the only/first one running.
function M.get(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local all = M.clients()
  for _, c in ipairs(all) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then
      return c
    end
  end
  return all[1]
end

--- root_of is the buffer's workspace root: setup's root_dir (a directory,
--- or a function(fname, bufnr) whose nil means "do not attach"), else the
--- nearest directory with a root marker.
function M.root_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local rd = opts.root_dir
  if type(rd) == "string" then
    return (vim.fn.fnamemodify(vim.fn.expand(rd), ":p"):gsub("(.)/$", "%1"))
  end
  if rd ~= nil then
    local ok, r = pcall(rd, name, bufnr)
    if not ok then
      vim.notify("ioh: root_dir failed: " .. tostring(r), vim.log.levels.ERROR)
      return nil
    end
    if type(r) ~= "string" or r == "" then
      return nil
    end
    return (vim.fn.fnamemodify(r, ":p"):gsub("(.)/$", "%1"))
  end
  return M.root_for(name)
end

local function config_for(root, handlers)
  local config = require("ioh.config")
  local cfg = config.server_config(opts)
  return {
    name = M.name,
    cmd = opts.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = config.with_ioh(opts.init_options, cfg),
    settings = config.with_ioh(opts.settings, cfg),
    capabilities = config.capabilities(opts),
    handlers = config.chain_handlers(handlers, opts.handlers),
    flags = opts.flags,
    on_attach = opts.on_attach,
    on_exit = function(code, signal)
      by_root[root] = nil
      if code ~= 0 and signal ~= 15 then
        vim.schedule(function()
          vim.notify(string.format("ioh-lsp exited with code %d (signal %d)", code, signal), vim.log.levels.WARN)
        end)
      end
    end,
  }
end

--- attach starts (or reuses) the client for bufnr's root and attaches bufnr.
function M.attach(bufnr, handlers)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  if vim.fn.executable(opts.cmd[1]) ~= 1 then
    vim.notify_once(
      string.format("ioh: %s is not executable; install it (go install github.com/ioh-lsp/ioh-lsp/cmd/ioh-lsp@latest) or set cmd in require('ioh').setup{}; see :help ioh", opts.cmd[1]),
      vim.log.levels.ERROR
    )
    return nil
  end
  local root = M.root_of(bufnr)
  if root == nil then
    return nil
  end
  local cfg = config_for(root, handlers)
  if vim.lsp.start then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = by_root[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(cfg)
    if not id then
      vim.notify("ioh: could not start " .. opts.cmd[1], vim.log.levels.ERROR)
      return nil
    end
    by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- execute sends workspace/executeCommand with one object argument (none
--- when arg is nil) and calls cb(err, result) on the main loop.
function M.execute(command, arg, cb, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local c = M.get(bufnr)
  if not c then
    if not M.attach(bufnr, M.handlers) then
      cb({ message = "ioh-lsp is not running (open a file in a workspace, or check :checkhealth / :LspInfo)" })
      return
    end
    c = M.get(bufnr)
  end
  if not c then
    cb({ message = "ioh-lsp is not running" })
    return
  end
  local params = { command = command, arguments = arg ~= nil and { arg } or {} }
  M.call(c, "request", "workspace/executeCommand", params, function(err, result)
    vim.schedule(function()
      cb(err, result)
    end)
  end, bufnr)
end

--- stop stops every ioh-lsp client and forgets the runs' status.
function M.stop()
  for _, c in ipairs(M.clients()) do
    M.call(c, "stop")
  end
  by_root = {}
  status.reset()
end

return M
