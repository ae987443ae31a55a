// The packaged extension ships only dist/extension.js (vsce
// --no-dependencies): the bundle may load 'vscode' and node's built-in
// modules at run time, nothing from node_modules.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';

const BUNDLE = path.resolve('dist', 'extension.js');

test('the bundle requires only vscode and node built-ins', (t) => {
  if (!fs.existsSync(BUNDLE)) {
    t.skip('dist/extension.js not built: `make bundle` first');
    return;
  }
  const src = fs.readFileSync(BUNDLE, 'utf8');
  const allowed = new Set(['vscode', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const required = new Set([...src.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  assert.ok(required.has('vscode'), 'the bundle uses the vscode API');
  assert.deepEqual([...required].filter((m) => !allowed.has(m)), []);
  const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
  assert.equal(manifest.main, './dist/extension.js');
  const palette = (manifest.contributes.commands as { command: string }[]).map((c) => c.command);
  for (const id of palette) {
    assert.ok(src.includes(`"${id}"`), `the bundle registers ${id}`);
  }
  for (const c of ['run', 'ask', 'approve', 'reject', 'cancel', 'resume', 'trace', 'runs', 'clearTrace']) {
    assert.ok(palette.includes(`ioh-lsp.${c}`), `palette has ioh-lsp.${c}`);
  }
});
