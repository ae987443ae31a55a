// The server's JSON Schemas (schema/*.schema.json, generated from the Go
// declarations by `go run ./internal/schemagen`) compiled with ajv, so the
// tests check what this extension sends and what it reads against exactly
// what the server declares. Paths are relative to editors/vscode, where
// `make test` runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';

const SCHEMA_DIR = path.resolve('..', '..', 'schema');
const COMMANDS_ID = 'https://github.com/ioh-lsp/ioh-lsp/schema/commands.schema.json';

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
const commandsDoc = JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, 'commands.schema.json'), 'utf8'));
ajv.addSchema(commandsDoc);

/** The command names the server declares, in its order. */
export const DECLARED_COMMANDS: readonly string[] = commandsDoc.properties.command.enum;

function compiled(ref: string): ValidateFunction {
  const v = ajv.getSchema(ref);
  if (!v) throw new Error(`no schema ${ref}`);
  return v;
}

function explain(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`).join('; ');
}

/** schemaErrors is '' when value fits $defs/<def> of the commands schema, else why not. */
export function schemaErrors(def: string, value: unknown): string {
  const v = compiled(`${COMMANDS_ID}#/$defs/${def}`);
  return v(value) ? '' : explain(v.errors);
}

/** paramsErrors checks a whole workspace/executeCommand params object. */
export function paramsErrors(params: { command: string; arguments?: unknown[] }): string {
  const v = compiled(COMMANDS_ID);
  return v(params) ? '' : explain(v.errors);
}

const SETTINGS_ID = 'https://github.com/ioh-lsp/ioh-lsp/schema/settings.schema.json';
/** settingsDoc is schema/settings.schema.json: the server's `ioh` settings section. */
export const settingsDoc = JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, 'settings.schema.json'), 'utf8'));
ajv.addSchema(settingsDoc);

/** settingsErrors is '' when value fits the settings schema, else why not. */
export function settingsErrors(value: unknown): string {
  const v = compiled(SETTINGS_ID);
  return v(value) ? '' : explain(v.errors);
}

/** requiredArgs lists a command's required argument fields. */
export function requiredArgs(command: string): string[] {
  return commandsDoc.$defs[`${command}.args`]?.required ?? [];
}
