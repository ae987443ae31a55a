package telemetry

// Attribute and span names, in one place. The GenAI semantic conventions
// (gen_ai.*) are still in development upstream; when they change, they
// change here. Names under ioh.* are this project's own.
const (
	// GenAI conventions.
	attrOperation        = "gen_ai.operation.name"
	attrProvider         = "gen_ai.provider.name"
	attrRequestModel     = "gen_ai.request.model"
	attrResponseModel    = "gen_ai.response.model"
	attrInputTokens      = "gen_ai.usage.input_tokens"
	attrOutputTokens     = "gen_ai.usage.output_tokens"
	attrCacheReadTokens  = "gen_ai.usage.cache_read.input_tokens"
	attrCacheWriteTokens = "gen_ai.usage.cache_creation.input_tokens"
	attrToolName         = "gen_ai.tool.name"
	attrToolCallID       = "gen_ai.tool.call.id"
	attrAgentID          = "gen_ai.agent.id"

	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"

	// ioh-lsp's own.
	attrRunID        = "ioh.run.id"
	attrParentRun    = "ioh.run.parent"
	attrGoal         = "ioh.run.goal"
	attrOutcome      = "ioh.run.outcome"
	attrStep         = "ioh.step"
	attrCostUSD      = "ioh.cost_usd"
	attrCostSource   = "ioh.cost_source"
	attrAct          = "ioh.policy.act"
	attrTarget       = "ioh.policy.target"
	attrEffect       = "ioh.policy.effect"
	attrRule         = "ioh.policy.rule"
	attrLayer        = "ioh.policy.layer"
	attrAnswer       = "ioh.approval.answer"
	attrToolError    = "ioh.tool.is_error"
	attrResultBytes  = "ioh.tool.result_bytes"
	attrCheckName    = "ioh.check.name"
	attrCheckPhase   = "ioh.check.phase"
	attrCheckBackend = "ioh.check.backend" // the sandbox tier that applied
	attrCheckExit    = "ioh.check.exit_code"
	attrCheckPassed  = "ioh.check.passed"
	attrCheckMillis  = "ioh.check.duration_ms"

	spanRun   = "invoke_agent ioh-lsp"
	spanStep  = "step"
	spanCheck = "check"
)
