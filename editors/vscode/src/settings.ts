// Settings: turns the editor's `ioh.*` settings into the server's
// configuration (initializationOptions.ioh and the `ioh` section of
// workspace/configuration) and builds the server's environment. This module
// does not import 'vscode' so node's test runner can exercise it.

import { SETTING_CHOICES } from './api.generated';

/** Reads one setting by its key below the `ioh` section, e.g. "model.name". */
export type SettingGetter = (key: string) => unknown;

/**
 * USER_SCOPE_KEYS are the settings that choose where requests go, with
 * which key, and what the agent may do (policy), plus the trusted roots:
 * a repository's .vscode/settings.json must not set them. package.json
 * declares them `application` scope and lists them in
 * capabilities.untrustedWorkspaces.restrictedConfigurations, and
 * userScoped reads them from the User settings (or the default) only.
 */
export const USER_SCOPE_KEYS: readonly string[] = ['model.provider', 'model.baseUrl', 'model.apiKeyEnv', 'model.cassette', 'policy.rules', 'trusted'];

/** Inspection is what VS Code's WorkspaceConfiguration.inspect returns for one key (the fields used here). */
export interface Inspection {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * userScoped is a getter that reads USER_SCOPE_KEYS through inspect,
 * taking only the User (global) value, else the default, and never a
 * workspace or folder value; every other key through get.
 */
export function userScoped(get: SettingGetter, inspect: (key: string) => Inspection | undefined): SettingGetter {
  return (key) => {
    if (!USER_SCOPE_KEYS.includes(key)) return get(key);
    const i = inspect(key);
    return i?.globalValue !== undefined ? i.globalValue : i?.defaultValue;
  };
}

// The allowed values are the server's (agent/config Choices, generated
// into api.generated.ts); "" (unset) is read as no value.
export const PROVIDERS = SETTING_CHOICES['model.provider'].filter((p) => p !== '');
export const APPROVE_MODES = SETTING_CHOICES.approve;
const ACTS: readonly string[] = SETTING_CHOICES['policy.rules.act'];
const EFFECTS: readonly string[] = SETTING_CHOICES['policy.rules.effect'];

/** Default API key variable per provider (`model.api_key_env`, docs/contract.md). */
export const DEFAULT_KEY_ENV: Readonly<Record<string, string>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
};

/** ModelConfig is the server's `model` key, in the server's spelling. */
export interface ModelConfig {
  provider?: string;
  name?: string;
  base_url?: string;
  api_key_env?: string;
  cassette?: string;
}

export interface BudgetConfig {
  steps?: number;
  tokens?: number;
  cost_usd?: number;
  wall?: string;
}

export interface PolicyRule {
  act: string;
  effect: string;
  pattern: string;
}

/** ServerConfig is exactly the key set docs/lsp.md#settings names; the server rejects unknown keys. */
export interface ServerConfig {
  model?: ModelConfig;
  approve?: string;
  budget?: BudgetConfig;
  policy?: { rules: PolicyRule[] };
  trusted?: string[];
}

/** ClientSettings are the settings only the client uses. */
export interface ClientSettings {
  serverPath: string;
  serverArgs: string[];
}

/** SettingsError names the setting that holds a bad value. */
export class SettingsError extends Error {
  constructor(readonly key: string, message: string) {
    super(`setting ioh.${key}: ${message}`);
    this.name = 'SettingsError';
  }
}

function str(get: SettingGetter, key: string): string | undefined {
  const v = get(key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new SettingsError(key, `want a string, got ${typeof v}`);
  const t = v.trim();
  return t === '' ? undefined : t;
}

function num(get: SettingGetter, key: string, integer: boolean): number | undefined {
  const v = get(key);
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new SettingsError(key, `want a non-negative number, got ${JSON.stringify(v)}`);
  }
  if (integer && !Number.isInteger(v)) throw new SettingsError(key, `want a whole number, got ${v}`);
  return v;
}

function oneOf(get: SettingGetter, key: string, allowed: readonly string[]): string | undefined {
  const v = str(get, key);
  if (v !== undefined && !allowed.includes(v)) {
    throw new SettingsError(key, `want one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v;
}

const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;
const KEY_ENV = /^[A-Za-z_][A-Za-z0-9_]*(_API_KEY|_TOKEN)$/;

/** readModel reads the `model` group; an empty group is undefined. */
export function readModel(get: SettingGetter): ModelConfig | undefined {
  const m: ModelConfig = {
    provider: oneOf(get, 'model.provider', PROVIDERS),
    name: str(get, 'model.name'),
    base_url: str(get, 'model.baseUrl'),
    api_key_env: str(get, 'model.apiKeyEnv'),
    cassette: str(get, 'model.cassette'),
  };
  if (m.api_key_env !== undefined && !KEY_ENV.test(m.api_key_env)) {
    throw new SettingsError('model.apiKeyEnv', `must name a variable ending in _API_KEY or _TOKEN, got ${JSON.stringify(m.api_key_env)}`);
  }
  if (m.base_url !== undefined && !/^https?:\/\//.test(m.base_url)) {
    throw new SettingsError('model.baseUrl', `want an http(s) URL, got ${JSON.stringify(m.base_url)}`);
  }
  return compact(m);
}

function readBudget(get: SettingGetter): BudgetConfig | undefined {
  const wall = str(get, 'budget.wall');
  if (wall !== undefined && !GO_DURATION.test(wall)) {
    throw new SettingsError('budget.wall', `want a duration such as 15m or 1h30m, got ${JSON.stringify(wall)}`);
  }
  return compact({
    steps: num(get, 'budget.steps', true),
    tokens: num(get, 'budget.tokens', true),
    cost_usd: num(get, 'budget.costUsd', false),
    wall,
  });
}

function readRules(get: SettingGetter): PolicyRule[] | undefined {
  const v = get('policy.rules');
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new SettingsError('policy.rules', 'want a list of {act, effect, pattern}');
  const rules = v.map((r: unknown, i: number): PolicyRule => {
    const o = r as Record<string, unknown>;
    if (typeof o !== 'object' || o === null || typeof o.act !== 'string' || typeof o.effect !== 'string' || typeof o.pattern !== 'string') {
      throw new SettingsError(`policy.rules[${i}]`, 'want {act, effect, pattern} strings');
    }
    if (!ACTS.includes(o.act)) throw new SettingsError(`policy.rules[${i}].act`, `unknown act ${JSON.stringify(o.act)}`);
    if (!EFFECTS.includes(o.effect)) throw new SettingsError(`policy.rules[${i}].effect`, `unknown effect ${JSON.stringify(o.effect)}`);
    return { act: o.act, effect: o.effect, pattern: o.pattern };
  });
  return rules.length ? rules : undefined;
}

function readStrings(get: SettingGetter, key: string): string[] | undefined {
  const v = get(key);
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new SettingsError(key, 'want a list of strings');
  return v.length ? (v as string[]) : undefined;
}

/** serverConfig builds the `ioh` configuration object sent to the server. */
export function serverConfig(get: SettingGetter): ServerConfig {
  const rules = readRules(get);
  return compact({
    model: readModel(get),
    approve: oneOf(get, 'approve', APPROVE_MODES),
    budget: readBudget(get),
    policy: rules ? { rules } : undefined,
    trusted: readStrings(get, 'trusted'),
  }) ?? {};
}

/** initializationOptions wraps serverConfig as docs/lsp.md#settings asks: `{ioh: {...}}`. */
export function initializationOptions(get: SettingGetter): { ioh: ServerConfig } {
  return { ioh: serverConfig(get) };
}

/** clientSettings reads the settings the client itself uses. */
export function clientSettings(get: SettingGetter): ClientSettings {
  return {
    serverPath: str(get, 'server.path') ?? 'ioh-lsp',
    // An explicit empty list is kept: plain `ioh-lsp` serves too.
    serverArgs: get('server.args') === undefined ? ['serve'] : (readStrings(get, 'server.args') ?? []),
  };
}

/**
 * keyEnvNames lists the variables whose secrets go to the server: the
 * configured api_key_env, else the provider's default, else every default.
 */
export function keyEnvNames(model: ModelConfig | undefined): string[] {
  if (model?.api_key_env) return [model.api_key_env];
  if (model?.provider) {
    const d = DEFAULT_KEY_ENV[model.provider];
    return d ? [d] : [];
  }
  return Object.values(DEFAULT_KEY_ENV);
}

/**
 * serverEnv is the spawned server's environment: the editor's own plus the
 * API keys held in SecretStorage. Keys never go into settings or arguments.
 */
export function serverEnv(base: NodeJS.ProcessEnv, secrets: ReadonlyMap<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const [name, value] of secrets) {
    if (!KEY_ENV.test(name)) continue;
    if (value !== '') env[name] = value;
  }
  return env;
}

/** isKeyEnvName reports whether name may hold an API key (docs/policy.md#configuration). */
export function isKeyEnvName(name: string): boolean {
  return KEY_ENV.test(name);
}

/** compact drops undefined fields; an object left empty becomes undefined. */
function compact<T extends object>(o: T): T | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return Object.keys(out).length ? (out as T) : undefined;
}
