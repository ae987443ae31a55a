// Capabilities: what the client must advertise so the server sends the
// annotated, reviewable edit (docs/lsp.md#approval, docs/editors.md) instead of holding the
// proposal. No 'vscode' import.

export interface WorkspaceEditCaps {
  documentChanges?: boolean;
  resourceOperations?: string[];
  changeAnnotationSupport?: { groupsOnLabel?: boolean };
  [k: string]: unknown;
}

export interface ClientCaps {
  workspace?: { applyEdit?: boolean; workspaceEdit?: WorkspaceEditCaps; [k: string]: unknown };
  window?: { workDoneProgress?: boolean; showDocument?: { support: boolean }; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * ensureReviewCapabilities makes sure the advertised capabilities carry
 * change annotations (grouped on label, so VS Code's refactor preview shows
 * the server's groups), document changes, resource operations, work-done
 * progress and showDocument. It only adds; what is there stays.
 */
export function ensureReviewCapabilities(caps: ClientCaps): ClientCaps {
  const ws = (caps.workspace ??= {});
  ws.applyEdit = true;
  const we = (ws.workspaceEdit ??= {});
  we.documentChanges = true;
  const ops = new Set(we.resourceOperations ?? []);
  for (const op of ['create', 'rename', 'delete']) ops.add(op);
  we.resourceOperations = [...ops];
  we.changeAnnotationSupport = { ...(we.changeAnnotationSupport ?? {}), groupsOnLabel: true };
  const win = (caps.window ??= {});
  win.workDoneProgress = true;
  win.showDocument ??= { support: true };
  return caps;
}
