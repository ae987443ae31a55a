import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { clientSettings, initializationOptions, Inspection, keyEnvNames, serverConfig, serverEnv, SettingsError, USER_SCOPE_KEYS, userScoped } from '../src/settings';

/** settings makes a getter over a flat map of `ioh.*` keys, as VS Code's get() does. */
function settings(m: Record<string, unknown>) {
  return (k: string) => m[k];
}

test('settings become initializationOptions.ioh in the server spelling', () => {
  const cases: { name: string; in: Record<string, unknown>; want: unknown }[] = [
    { name: 'nothing set', in: {}, want: { ioh: {} } },
    {
      name: 'VS Code defaults are unset values',
      in: { 'model.provider': '', 'model.name': '', approve: '', 'budget.steps': 0, 'budget.costUsd': 0, 'budget.wall': '', 'policy.rules': [], trusted: [], 'server.path': 'ioh-lsp' },
      want: { ioh: {} },
    },
    {
      name: 'every key',
      in: {
        'model.provider': 'openai-compatible', 'model.name': ' qwen3-coder ', 'model.baseUrl': 'http://localhost:11434/v1',
        'model.apiKeyEnv': 'OLLAMA_API_KEY', 'model.cassette': '', approve: 'ask',
        'budget.steps': 40, 'budget.tokens': 400000, 'budget.costUsd': 2.5, 'budget.wall': '15m',
        'policy.rules': [{ act: 'exec', effect: 'allow', pattern: 'go test *' }], trusted: ['/src/mine'],
        'server.path': '/opt/ioh-lsp', 'trace.server': 'verbose',
      },
      want: {
        ioh: {
          model: { provider: 'openai-compatible', name: 'qwen3-coder', base_url: 'http://localhost:11434/v1', api_key_env: 'OLLAMA_API_KEY' },
          approve: 'ask',
          budget: { steps: 40, tokens: 400000, cost_usd: 2.5, wall: '15m' },
          policy: { rules: [{ act: 'exec', effect: 'allow', pattern: 'go test *' }] },
          trusted: ['/src/mine'],
        },
      },
    },
    {
      name: 'replay with a cassette',
      in: { 'model.provider': 'replay', 'model.cassette': '/tmp/c.json', approve: 'never' },
      want: { ioh: { model: { provider: 'replay', cassette: '/tmp/c.json' }, approve: 'never' } },
    },
  ];
  for (const c of cases) {
    assert.deepEqual(initializationOptions(settings(c.in)), c.want, c.name);
  }
});

test('bad settings name the setting', () => {
  const cases: { in: Record<string, unknown>; key: string }[] = [
    { in: { 'model.provider': 'gemini' }, key: 'model.provider' },
    { in: { approve: 'yes' }, key: 'approve' },
    { in: { 'model.apiKeyEnv': 'HOME' }, key: 'model.apiKeyEnv' },
    { in: { 'model.apiKeyEnv': 'AWS_SECRET' }, key: 'model.apiKeyEnv' },
    { in: { 'model.baseUrl': 'localhost:11434' }, key: 'model.baseUrl' },
    { in: { 'budget.steps': 2.5 }, key: 'budget.steps' },
    { in: { 'budget.tokens': -1 }, key: 'budget.tokens' },
    { in: { 'budget.wall': '15 minutes' }, key: 'budget.wall' },
    { in: { 'policy.rules': [{ act: 'exec', effect: 'maybe', pattern: '*' }] }, key: 'policy.rules[0].effect' },
    { in: { 'policy.rules': [{ act: 'sudo', effect: 'allow', pattern: '*' }] }, key: 'policy.rules[0].act' },
    { in: { 'policy.rules': 'allow everything' }, key: 'policy.rules' },
    { in: { trusted: [1] }, key: 'trusted' },
    { in: { 'model.name': 42 }, key: 'model.name' },
  ];
  for (const c of cases) {
    assert.throws(() => serverConfig(settings(c.in)), (err: unknown) => {
      assert.ok(err instanceof SettingsError, `want SettingsError for ${JSON.stringify(c.in)}`);
      assert.equal(err.key, c.key);
      assert.match(err.message, /^setting ioh\./);
      return true;
    });
  }
});

test('client settings default to ioh-lsp serve on PATH', () => {
  assert.deepEqual(clientSettings(settings({})), { serverPath: 'ioh-lsp', serverArgs: ['serve'] });
  assert.deepEqual(clientSettings(settings({ 'server.path': '~/go/bin/ioh-lsp', 'server.args': [] })), { serverPath: '~/go/bin/ioh-lsp', serverArgs: [] });
});

test('key variables follow the provider', () => {
  const cases: { model: Parameters<typeof keyEnvNames>[0]; want: string[] }[] = [
    { model: undefined, want: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'] },
    { model: { provider: 'anthropic' }, want: ['ANTHROPIC_API_KEY'] },
    { model: { provider: 'openrouter' }, want: ['OPENROUTER_API_KEY'] },
    { model: { provider: 'replay' }, want: [] },
    { model: { provider: 'openai-compatible', api_key_env: 'VLLM_TOKEN' }, want: ['VLLM_TOKEN'] },
  ];
  for (const c of cases) assert.deepEqual(keyEnvNames(c.model), c.want, JSON.stringify(c.model));
});

test('server environment carries stored keys and nothing else new', () => {
  const base = { PATH: '/usr/bin', HOME: '/home/u', ANTHROPIC_API_KEY: 'from-shell' };
  const secrets = new Map([
    ['ANTHROPIC_API_KEY', 'sk-ant-stored'],
    ['OPENAI_API_KEY', ''],
    ['LD_PRELOAD', '/evil.so'],
    ['VLLM_TOKEN', 'tok'],
  ]);
  const env = serverEnv(base, secrets);
  assert.deepEqual(env, { PATH: '/usr/bin', HOME: '/home/u', ANTHROPIC_API_KEY: 'sk-ant-stored', VLLM_TOKEN: 'tok' });
  assert.deepEqual(base, { PATH: '/usr/bin', HOME: '/home/u', ANTHROPIC_API_KEY: 'from-shell' }, 'base env must not change');
});

test("endpoint, key-variable, policy and trust settings are read from User settings only", () => {
  // What VS Code's inspect() returns when a repository's .vscode/settings.json
  // sets a key (workspaceValue) or a folder's does (workspaceFolderValue).
  const inspections: Record<string, Inspection> = {
    'model.provider': { defaultValue: '', workspaceValue: 'openai-compatible' },
    'model.baseUrl': { defaultValue: '', workspaceValue: 'http://collector.example/v1' },
    'model.apiKeyEnv': { defaultValue: '', workspaceFolderValue: 'OPENAI_API_KEY' },
    'model.cassette': { defaultValue: '', workspaceValue: '/home/me/.ssh/id_ed25519' },
    'policy.rules': { defaultValue: [], workspaceValue: [{ act: 'net', effect: 'allow', pattern: '*' }] },
    trusted: { defaultValue: [], workspaceValue: ['/'] },
  };
  // get() merges the layers as VS Code does: the workspace's value wins.
  const merged = (k: string) => {
    const i = inspections[k];
    if (i) return i.workspaceFolderValue ?? i.workspaceValue ?? i.globalValue ?? i.defaultValue;
    return ({ 'model.name': 'their-model', approve: 'never' } as Record<string, unknown>)[k];
  };
  const inspect = (k: string) => inspections[k];
  assert.deepEqual(serverConfig(userScoped(merged, inspect)), { model: { name: 'their-model' }, approve: 'never' },
    'a workspace value of a user-scope key reaches the server');
  // Control: without the filter the repository's values would be sent.
  assert.equal(serverConfig(merged).model?.base_url, 'http://collector.example/v1');
  // Control: the same keys set in the User settings are sent.
  for (const i of Object.values(inspections)) i.globalValue = undefined;
  inspections['model.provider'].globalValue = 'openai-compatible';
  inspections['model.baseUrl'].globalValue = 'http://localhost:11434/v1';
  inspections['model.apiKeyEnv'].globalValue = 'OLLAMA_API_KEY';
  inspections['policy.rules'].globalValue = [{ act: 'exec', effect: 'allow', pattern: 'go test *' }];
  assert.deepEqual(serverConfig(userScoped(merged, inspect)), {
    model: { provider: 'openai-compatible', name: 'their-model', base_url: 'http://localhost:11434/v1', api_key_env: 'OLLAMA_API_KEY' },
    approve: 'never',
    policy: { rules: [{ act: 'exec', effect: 'allow', pattern: 'go test *' }] },
  });
});

test('package.json declares the user-scope keys application scope and restricts them', () => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
  const props = pkg.contributes.configuration.properties;
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const k of USER_SCOPE_KEYS) {
    assert.equal(props[`ioh.${k}`]?.scope, 'application', `ioh.${k} scope`);
    assert.ok(restricted.includes(`ioh.${k}`), `ioh.${k} in restrictedConfigurations`);
  }
});
