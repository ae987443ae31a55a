// The settings this extension sends (initializationOptions.ioh and the
// `ioh` section of workspace/configuration) against
// schema/settings.schema.json, generated from the server's declaration of
// a configuration layer; and the extension's own lists of allowed values
// (settings.ts, package.json) against the schema's.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { APPROVE_MODES, initializationOptions, PROVIDERS, serverConfig, SettingsError } from '../src/settings';
import { settingsDoc, settingsErrors } from './schema';

const props = settingsDoc.properties;

function getter(values: Record<string, unknown>) {
  return (k: string) => values[k];
}

test('what the extension builds from its settings fits the server settings schema', () => {
  const inputs: Record<string, unknown>[] = [
    {},
    { 'model.provider': 'replay', 'model.cassette': '/w/c.json', approve: 'ask' },
    { 'model.provider': 'openai-compatible', 'model.name': 'qwen', 'model.baseUrl': 'http://localhost:11434/v1', 'model.apiKeyEnv': 'OLLAMA_API_KEY' },
    { 'budget.steps': 40, 'budget.tokens': 400000, 'budget.costUsd': 2.5, 'budget.wall': '15m' },
    { 'policy.rules': [{ act: 'exec', effect: 'allow', pattern: 'go test *' }, { act: 'net', effect: 'deny', pattern: '*' }], trusted: ['/home/me/src'] },
    { 'model.provider': '', 'model.name': '', approve: '', 'budget.steps': 0, 'policy.rules': [] },
  ];
  for (const values of inputs) {
    const cfg = serverConfig(getter(values));
    assert.equal(settingsErrors(cfg), '', `serverConfig(${JSON.stringify(values)}) = ${JSON.stringify(cfg)}`);
    assert.equal(settingsErrors(initializationOptions(getter(values)).ioh), '', 'initializationOptions.ioh');
  }
});

test('a setting the extension refuses is one the server refuses too', () => {
  const refused: [Record<string, unknown>, unknown][] = [
    [{ 'model.provider': 'anthropix' }, { model: { provider: 'anthropix' } }],
    [{ 'model.apiKeyEnv': 'HOME' }, { model: { api_key_env: 'HOME' } }],
    [{ approve: 'always' }, { approve: 'always' }],
    [{ 'budget.steps': 1.5 }, { budget: { steps: 1.5 } }],
    [{ 'policy.rules': [{ act: 'run', effect: 'allow', pattern: 'x' }] }, { policy: { rules: [{ act: 'run', effect: 'allow', pattern: 'x' }] } }],
    [{ 'policy.rules': [{ act: 'exec', effect: 'permit', pattern: 'x' }] }, { policy: { rules: [{ act: 'exec', effect: 'permit', pattern: 'x' }] } }],
  ];
  for (const [values, raw] of refused) {
    assert.throws(() => serverConfig(getter(values)), SettingsError, JSON.stringify(values));
    assert.notEqual(settingsErrors(raw), '', `the server schema accepts ${JSON.stringify(raw)}`);
  }
});

test("the extension's lists of allowed values are the server's", () => {
  assert.deepEqual(['', ...PROVIDERS], props.model.properties.provider.enum, 'settings.ts PROVIDERS');
  assert.deepEqual([...APPROVE_MODES], props.approve.enum, 'settings.ts APPROVE_MODES');
  const contributed = JSON.parse(fs.readFileSync('package.json', 'utf8')).contributes.configuration.properties;
  assert.deepEqual(contributed['ioh.model.provider'].enum, props.model.properties.provider.enum, 'package.json ioh.model.provider');
  assert.deepEqual(contributed['ioh.approve'].enum, ['', ...props.approve.enum], 'package.json ioh.approve');
  const rule = props.policy.properties.rules.items;
  const item = contributed['ioh.policy.rules'].items;
  assert.deepEqual(item.properties.act.enum, rule.properties.act.enum, 'package.json rule acts');
  assert.deepEqual(item.properties.effect.enum, rule.properties.effect.enum, 'package.json rule effects');
  assert.deepEqual(item.required, rule.required, 'package.json rule required fields');
  // Every server key the extension contributes a setting for exists.
  for (const key of Object.keys(contributed)) {
    const top = key.replace(/^ioh\./, '').split('.')[0];
    if (top === 'server' || top === 'trace') continue; // the client's own
    assert.ok(top in props, `package.json contributes ${key}, but the server has no ${top}`);
  }
});
