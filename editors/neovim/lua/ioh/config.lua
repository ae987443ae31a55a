-- ioh.config: the options of require("ioh").setup{} and the server
-- configuration built from them (initializationOptions.ioh and the `ioh`
-- section of workspace/configuration, docs/lsp.md#settings).
local M = {}

M.defaults = {
  cmd = { "ioh-lsp", "serve" },
  -- model = { provider = "anthropic", name = "claude-sonnet-4-6", base_url = "", api_key_env = "", cassette = "" }
  model = nil,
  approve = nil, -- "ask" | "auto" | "never"
  budget = nil, -- { steps = 40, tokens = 400000, cost_usd = 2, wall = "15m" }
  policy = nil, -- { rules = { { act = "exec", effect = "allow", pattern = "go test *" } } }
  trusted = nil, -- { "/home/me/src/mine" }
  root_markers = { ".git", ".ioh", "go.mod", "package.json", "Cargo.toml", "pyproject.toml" },
  filetypes = nil, -- nil: every file buffer
  autostart = true,
  save_on_apply = true, -- write the buffers an approved ioh edit touched
  keymaps = false, -- false, or { ask = "<leader>ia", run = ..., approve = ..., reject = ..., cancel = ..., trace = ..., runs = ..., review = ... }
  review_keymaps = { approve = "a", reject = "r", toggle = "x", close = "q" },
  -- The keys every Neovim LSP setup passes, as nvim-lspconfig names them:
  -- on_attach(client, bufnr) is called on each attached buffer;
  -- capabilities are merged (vim.tbl_deep_extend) over Neovim's own;
  -- handlers run after the plugin's for the same method (their answer wins
  -- for requests); flags go to the client as they are; root_dir is a
  -- directory or a function(fname, bufnr) returning one (nil: not
  -- attached); settings and init_options are merged under the plugin's
  -- `ioh` section, which the options above build.
  on_attach = nil,
  capabilities = nil,
  handlers = nil,
  flags = nil,
  root_dir = nil,
  settings = nil,
  init_options = nil,
}

--- KNOWN lists every option setup{} takes (defaults with a nil value included).
M.KNOWN = {
  "cmd", "model", "approve", "budget", "policy", "trusted", "root_markers", "filetypes", "autostart",
  "save_on_apply", "keymaps", "review_keymaps",
  "on_attach", "capabilities", "handlers", "flags", "root_dir", "settings", "init_options",
}
local KNOWN_SET = {}
for _, k in ipairs(M.KNOWN) do
  KNOWN_SET[k] = true
end

-- The keys and values setup{} checks before the server does are the
-- server's own (ioh.api is generated from its declarations).
local api = require("ioh.api")
local function set(list, drop)
  local out = {}
  for _, v in ipairs(list) do
    if v ~= drop then
      out[v] = true
    end
  end
  return out
end
local PROVIDERS = set(api.CHOICES["model.provider"], "")
local APPROVE = set(api.CHOICES.approve)
local MODEL_KEYS = set(api.KEYS.model)
local BUDGET_KEYS = set(api.KEYS.budget)
local ACTS = set(api.CHOICES["policy.rules.act"])
local EFFECTS = set(api.CHOICES["policy.rules.effect"])

--- CHOICES are the values setup{} checks before the server does; the tests
--- hold them equal to schema/settings.schema.json.
M.CHOICES = {
  ["model.provider"] = PROVIDERS,
  approve = APPROVE,
  model = MODEL_KEYS,
  budget = BUDGET_KEYS,
  ["policy.rules.act"] = ACTS,
  ["policy.rules.effect"] = EFFECTS,
}

local function fail(key, msg)
  error(string.format("ioh.setup: %s: %s", key, msg), 0)
end

local function check_model(m)
  if m == nil then
    return
  end
  if type(m) ~= "table" then
    fail("model", "want a table")
  end
  for k, v in pairs(m) do
    if not MODEL_KEYS[k] then
      fail("model." .. tostring(k), "unknown key")
    end
    if k ~= "fallback" and type(v) ~= "string" then
      fail("model." .. k, "want a string")
    end
  end
  if m.provider and m.provider ~= "" and not PROVIDERS[m.provider] then
    fail("model.provider", "want one of " .. table.concat(vim.tbl_filter(function(p) return p ~= "" end, api.CHOICES["model.provider"]), ", ") .. ", got " .. m.provider)
  end
  if m.api_key_env and m.api_key_env ~= "" and not (m.api_key_env:match("_API_KEY$") or m.api_key_env:match("_TOKEN$")) then
    fail("model.api_key_env", "must name a variable ending in _API_KEY or _TOKEN")
  end
end

local function check_budget(b)
  if b == nil then
    return
  end
  if type(b) ~= "table" then
    fail("budget", "want a table")
  end
  for k, v in pairs(b) do
    if not BUDGET_KEYS[k] then
      fail("budget." .. tostring(k), "unknown key")
    end
    if k == "wall" then
      if type(v) ~= "string" or not v:match("^[%d%.]+[a-zµ]+") then
        fail("budget.wall", "want a Go duration such as 15m")
      end
    elseif type(v) ~= "number" or v < 0 then
      fail("budget." .. k, "want a non-negative number")
    end
  end
end

local function check_policy(p)
  if p == nil then
    return
  end
  if type(p) ~= "table" or (p.rules ~= nil and type(p.rules) ~= "table") then
    fail("policy", "want { rules = { {act, effect, pattern}, ... } }")
  end
  for i, r in ipairs(p.rules or {}) do
    if type(r) ~= "table" or not ACTS[r.act] or not EFFECTS[r.effect] or type(r.pattern) ~= "string" then
      fail(string.format("policy.rules[%d]", i), "want {act = read|write|exec|net, effect = allow|ask|deny, pattern = string}")
    end
  end
end

--- distance is the Levenshtein edit distance of a and b.
function M.distance(a, b)
  local prev = {}
  for j = 0, #b do
    prev[j] = j
  end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

--- nearest is the known key closest to key (case ignored), or nil when
--- none is near enough to be a likely typo: at most a third of the longer
--- word's letters differ (and at least 2 are allowed), or one key of four
--- letters or more contains the other.
function M.nearest(key, known)
  local lk = key:lower()
  local best, best_d
  for _, k in ipairs(known) do
    local d = M.distance(lk, k:lower())
    if best_d == nil or d < best_d then
      best, best_d = k, d
    end
  end
  if best == nil then
    return nil
  end
  local limit = math.max(2, math.floor(math.max(#key, #best) / 3))
  if best_d <= limit then
    return best
  end
  for _, k in ipairs(known) do
    if #lk >= 4 and (k:find(lk, 1, true) or lk:find(k, 1, true)) then
      return k
    end
  end
  return nil
end

local function check_lsp_keys(o)
  if o.on_attach ~= nil and not vim.is_callable(o.on_attach) then
    fail("on_attach", "want a function(client, bufnr)")
  end
  for _, k in ipairs({ "capabilities", "flags", "settings", "init_options" }) do
    if o[k] ~= nil and type(o[k]) ~= "table" then
      fail(k, "want a table")
    end
  end
  if o.handlers ~= nil then
    if type(o.handlers) ~= "table" then
      fail("handlers", "want a table of method = function(err, result, ctx, config)")
    end
    for m, h in pairs(o.handlers) do
      if type(m) ~= "string" or not vim.is_callable(h) then
        fail("handlers." .. tostring(m), "want a function(err, result, ctx, config)")
      end
    end
  end
  if o.root_dir ~= nil then
    if type(o.root_dir) == "string" then
      if vim.fn.isdirectory(vim.fn.expand(o.root_dir)) ~= 1 then
        fail("root_dir", o.root_dir .. " is not a directory")
      end
    elseif not vim.is_callable(o.root_dir) then
      fail("root_dir", "want a directory or a function(fname, bufnr) returning one")
    end
  end
  if type(o.settings) == "table" and o.settings.ioh ~= nil and type(o.settings.ioh) ~= "table" then
    fail("settings.ioh", "want a table")
  end
  if type(o.init_options) == "table" and o.init_options.ioh ~= nil and type(o.init_options.ioh) ~= "table" then
    fail("init_options.ioh", "want a table")
  end
end

--- validate merges opts over the defaults and checks them; errors name the key.
function M.validate(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    fail("setup", "want a table")
  end
  local unknown = {}
  for k in pairs(opts) do
    if not KNOWN_SET[k] then
      table.insert(unknown, tostring(k))
    end
  end
  if #unknown > 0 then
    table.sort(unknown)
    local near = M.nearest(unknown[1], M.KNOWN)
    fail(unknown[1], "unknown option" .. (near and string.format(" (did you mean %s?)", near) or "; known options: " .. table.concat(M.KNOWN, ", ")))
  end
  -- Top-level values replace the defaults (a cmd of one word must not keep
  -- the default's "serve"); only review_keymaps merges key by key.
  local o = vim.deepcopy(M.defaults)
  for k, v in pairs(opts) do
    o[k] = v
  end
  if type(opts.review_keymaps) == "table" then
    o.review_keymaps = vim.tbl_extend("force", M.defaults.review_keymaps, opts.review_keymaps)
  end
  if type(o.cmd) ~= "table" or #o.cmd == 0 or type(o.cmd[1]) ~= "string" then
    fail("cmd", "want a list such as { 'ioh-lsp', 'serve' }")
  end
  check_lsp_keys(o)
  check_model(o.model)
  if o.approve ~= nil and not APPROVE[o.approve] then
    fail("approve", "want ask, auto or never")
  end
  check_budget(o.budget)
  check_policy(o.policy)
  if o.trusted ~= nil and type(o.trusted) ~= "table" then
    fail("trusted", "want a list of directories")
  end
  if o.keymaps ~= false and type(o.keymaps) ~= "table" then
    fail("keymaps", "want false or a table of action = lhs")
  end
  return o
end

--- server_config is the `ioh` object: only the keys docs/lsp.md#settings names, empty ones dropped.
function M.server_config(o)
  local out = {}
  if o.model then
    local m = {}
    for k, v in pairs(o.model) do
      if v ~= "" then
        m[k] = v
      end
    end
    if next(m) then
      out.model = m
    end
  end
  if o.approve then
    out.approve = o.approve
  end
  if o.budget and next(o.budget) then
    out.budget = o.budget
  end
  if o.policy and o.policy.rules and #o.policy.rules > 0 then
    out.policy = { rules = o.policy.rules }
  end
  if o.trusted and #o.trusted > 0 then
    out.trusted = o.trusted
  end
  if next(out) == nil then
    return vim.empty_dict()
  end
  return out
end

--- section merges the user's settings or init_options table under the
--- plugin's own `ioh` section: the typed options above win for the keys
--- they set, the rest of the user's table goes through as given.
function M.with_ioh(user, cfg)
  local out = vim.tbl_deep_extend("force", vim.deepcopy(user or {}), { ioh = cfg })
  if next(out.ioh) == nil then
    out.ioh = vim.empty_dict()
  end
  return out
end

--- capabilities is Neovim's client capabilities with the user's merged over them.
function M.capabilities(o)
  local base = vim.lsp.protocol.make_client_capabilities()
  if o.capabilities == nil then
    return base
  end
  return vim.tbl_deep_extend("force", base, o.capabilities)
end

--- chain_handlers gives each method the plugin's handler and then the
--- user's: a request is answered with the user's result when it returns
--- one, else with the plugin's.
function M.chain_handlers(plugin, user)
  local out = {}
  for m, h in pairs(plugin or {}) do
    out[m] = h
  end
  for m, uh in pairs(user or {}) do
    local ph = out[m]
    if ph == nil then
      out[m] = uh
    else
      out[m] = function(err, result, ctx, cfg)
        local pr, perr = ph(err, result, ctx, cfg)
        local ur, uerr = uh(err, result, ctx, cfg)
        if ur ~= nil or uerr ~= nil then
          return ur, uerr
        end
        return pr, perr
      end
    end
  end
  return out
end

return M
