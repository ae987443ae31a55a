import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveServer, ServerMissingError, serverVersion, settingSource } from '../src/server';
import { ensureReviewCapabilities } from '../src/capabilities';

test('server binary is found on PATH or by path, and a missing one says how to install', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ioh-vscode-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const exe = path.join(bin, 'ioh-lsp');
  fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
  const plain = path.join(bin, 'not-exec');
  fs.writeFileSync(plain, '', { mode: 0o644 });

  assert.equal(resolveServer('ioh-lsp', { PATH: `/nonexistent:${bin}` }, 'linux'), exe);
  assert.equal(resolveServer('', { PATH: bin }, 'linux'), exe);
  assert.equal(resolveServer(exe, { PATH: '' }, 'linux'), exe);
  assert.equal(resolveServer('bin/ioh-lsp', {}, 'linux', dir), exe);
  assert.equal(resolveServer('~/bin/ioh-lsp', { HOME: dir }, 'linux'), exe);

  for (const [setting, env] of [['ioh-lsp', { PATH: '/nonexistent' }], [plain, {}], [bin, {}], ['not-exec', { PATH: bin }]] as const) {
    assert.throws(() => resolveServer(setting, env, 'linux'), (err: unknown) => {
      assert.ok(err instanceof ServerMissingError);
      assert.match(err.message, /go install github.com\/ioh-lsp\/ioh-lsp\/cmd\/ioh-lsp@latest/);
      assert.match(err.message, /docs\/editors.md/);
      return true;
    }, setting);
  }
});

test('client capabilities ask for annotated edits', () => {
  assert.deepEqual(ensureReviewCapabilities({}), {
    workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'], changeAnnotationSupport: { groupsOnLabel: true } } },
    window: { workDoneProgress: true, showDocument: { support: true } },
  });
  const existing = { workspace: { workspaceEdit: { resourceOperations: ['delete'], failureHandling: 'textOnlyTransactional' } }, window: { showDocument: { support: false } } };
  assert.deepEqual(ensureReviewCapabilities(existing), {
    workspace: { applyEdit: true, workspaceEdit: { resourceOperations: ['delete', 'create', 'rename'], failureHandling: 'textOnlyTransactional', documentChanges: true, changeAnnotationSupport: { groupsOnLabel: true } } },
    window: { showDocument: { support: false }, workDoneProgress: true },
  });
});

test('the output channel can name the started binary\'s version', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ioh-vscode-ver-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const good = path.join(dir, 'ioh-lsp');
  fs.writeFileSync(good, '#!/bin/sh\n[ "$1" = version ] || exit 9\necho "ioh-lsp v9.8.7"\necho "commit abc"\n', { mode: 0o755 });
  const failing = path.join(dir, 'broken');
  fs.writeFileSync(failing, '#!/bin/sh\necho nope >&2\nexit 3\n', { mode: 0o755 });
  const hanging = path.join(dir, 'hang');
  fs.writeFileSync(hanging, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
  assert.equal(await serverVersion(good), 'ioh-lsp v9.8.7');
  assert.match(await serverVersion(failing), /^version unknown: `broken version` failed: Command failed/);
  assert.match(await serverVersion(hanging, process.env, 200), /^version unknown: `hang version` did not answer in 200 ms$/);
  assert.match(await serverVersion(path.join(dir, 'missing')), /^version unknown: `missing version` failed: spawn .*ENOENT/);
  const real = process.env.IOH_LSP || path.resolve('..', '..', 'bin', 'ioh-lsp');
  if (fs.existsSync(real)) assert.match(await serverVersion(real), /^ioh-lsp \S+$/, 'the real binary');
});

test('which settings layer gave ioh.server.path', () => {
  assert.equal(settingSource(undefined), 'default');
  assert.equal(settingSource({ defaultValue: 'ioh-lsp' }), 'default');
  assert.equal(settingSource({ defaultValue: 'ioh-lsp', globalValue: '/opt/ioh-lsp' }), 'user or remote settings');
  assert.equal(settingSource({ defaultValue: 'ioh-lsp', globalValue: '/opt/ioh-lsp', workspaceValue: './bin/ioh-lsp' }), 'workspace settings');
  assert.equal(settingSource({ globalValue: 'a', workspaceValue: 'b', workspaceFolderValue: 'c' }), 'folder settings');
});
