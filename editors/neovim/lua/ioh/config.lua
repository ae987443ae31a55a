-- ioh.config: the options of require("ioh").setup{} and the server
-- configuration built from them (initializationOptions.ioh and the `ioh`
-- section of workspace/configuration, SPEC §8).
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
  review_keymaps = { approve = "a", reject = "r", close = "q" },
}

local PROVIDERS = { anthropic = true, openai = true, openrouter = true, ["openai-compatible"] = true, replay = true }
local APPROVE = { ask = true, auto = true, never = true }
local MODEL_KEYS = { provider = true, name = true, base_url = true, api_key_env = true, cassette = true, fallback = true }
local BUDGET_KEYS = { steps = true, tokens = true, cost_usd = true, wall = true }
local ACTS = { read = true, write = true, exec = true, net = true }
local EFFECTS = { allow = true, ask = true, deny = true }

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
    fail("model.provider", "want anthropic, openai, openrouter, openai-compatible or replay, got " .. m.provider)
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

--- validate merges opts over the defaults and checks them; errors name the key.
function M.validate(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    fail("setup", "want a table")
  end
  for k in pairs(opts) do
    if M.defaults[k] == nil and not ({ model = 1, approve = 1, budget = 1, policy = 1, trusted = 1, filetypes = 1 })[k] then
      fail(tostring(k), "unknown option")
    end
  end
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if type(o.cmd) ~= "table" or #o.cmd == 0 or type(o.cmd[1]) ~= "string" then
    fail("cmd", "want a list such as { 'ioh-lsp', 'serve' }")
  end
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

--- server_config is the `ioh` object: only the keys SPEC §8 names, empty ones dropped.
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

return M
