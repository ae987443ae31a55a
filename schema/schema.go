// Package schema embeds the JSON Schemas that ship with ioh-lsp, so the
// contract parser validates against exactly the file editors use.
package schema

import _ "embed"

// TaskJSON is schema/task.schema.json: the JSON Schema of a task contract
// (docs/contract.md).
//
//go:embed task.schema.json
var TaskJSON []byte

// TaskID is the $id of the task contract schema.
const TaskID = "https://github.com/ioh-lsp/ioh-lsp/schema/task.schema.json"
