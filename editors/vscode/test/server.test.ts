import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveServer, ServerMissingError } from '../src/server';
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
