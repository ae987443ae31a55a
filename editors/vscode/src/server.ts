// Server: finds the ioh-lsp binary from the `ioh.server.path` setting (a
// path, or a bare name looked up on PATH), and says which binary and
// version was started. No 'vscode' import.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const INSTALL_DOCS = 'https://github.com/ioh-lsp/ioh-lsp/blob/main/docs/editors.md';

export class ServerMissingError extends Error {
  constructor(readonly setting: string, detail: string) {
    super(`ioh-lsp server not found (${detail}). Install it with \`go install github.com/ioh-lsp/ioh-lsp/cmd/ioh-lsp@latest\` or set ioh.server.path; see ${INSTALL_DOCS}`);
    this.name = 'ServerMissingError';
  }
}

function isExecutable(p: string, platform: NodeJS.Platform): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (platform === 'win32') return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * resolveServer returns the absolute path of the server binary. A setting
 * with a path separator is taken as a path (relative to cwd); a bare name
 * is searched on PATH, with PATHEXT on Windows.
 */
export function resolveServer(setting: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, cwd = process.cwd()): string {
  const want = setting.trim() === '' ? 'ioh-lsp' : setting.trim();
  const home = env.HOME ?? env.USERPROFILE;
  const expanded = want.startsWith('~/') && home ? path.join(home, want.slice(2)) : want;
  const exts = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean)] : [''];

  if (expanded.includes('/') || (platform === 'win32' && expanded.includes('\\'))) {
    const abs = path.resolve(cwd, expanded);
    for (const e of exts) if (isExecutable(abs + e, platform)) return abs + e;
    throw new ServerMissingError(setting, `${abs} is not an executable file`);
  }
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  for (const d of dirs) {
    for (const e of exts) {
      const p = path.join(d, expanded + e);
      if (isExecutable(p, platform)) return p;
    }
  }
  throw new ServerMissingError(setting, `"${expanded}" is not on PATH`);
}

/**
 * serverVersion runs `<binary> version` and returns its first line (e.g.
 * "ioh-lsp v0.3.0"), or a short reason when it cannot: the output channel
 * names the binary that was started and its version, so a different
 * build on PATH is visible.
 */
export function serverVersion(binary: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    execFile(binary, ['version'], { env, timeout: timeoutMs, maxBuffer: 64 * 1024 }, (err, stdout) => {
      const first = String(stdout ?? '').split('\n').map((l) => l.trim()).find((l) => l !== '');
      if (err) {
        const e = err as NodeJS.ErrnoException & { killed?: boolean };
        resolve(`version unknown: \`${path.basename(binary)} version\` ${e.killed ? `did not answer in ${timeoutMs} ms` : `failed: ${e.message.split('\n')[0]}`}`);
        return;
      }
      resolve(first ?? 'version unknown: `version` printed nothing');
    });
  });
}

/** SettingInspection is what vscode's WorkspaceConfiguration.inspect returns for one key. */
export interface SettingInspection<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** settingSource says which settings layer gave the value in use. */
export function settingSource<T>(i: SettingInspection<T> | undefined): string {
  if (!i) return 'default';
  if (i.workspaceFolderValue !== undefined) return 'folder settings';
  if (i.workspaceValue !== undefined) return 'workspace settings';
  if (i.globalValue !== undefined) return 'user or remote settings';
  return 'default';
}
