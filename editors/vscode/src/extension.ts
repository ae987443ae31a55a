// Package ioh-lsp's VS Code extension: starts the ioh-lsp language server,
// forwards settings and SecretStorage-held API keys to it, and adds palette
// commands, an "Ask agent…" input box and a status bar item. The logic lives
// in modules without a 'vscode' import (settings, commands, status, server,
// capabilities); this file and ui.ts only connect them to the editor.

import * as vscode from 'vscode';
import { Controller } from './controller';
import { registerCommands } from './ui';

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller(context);
  context.subscriptions.push(controller);
  registerCommands(context, controller);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('ioh.server')) void controller?.restart();
      else if (e.affectsConfiguration('ioh')) void controller?.configChanged();
    }),
  );
  await controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
