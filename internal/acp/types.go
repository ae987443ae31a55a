package acp

import "encoding/json"

// ProtocolVersion is the ACP major version spoken here.
const ProtocolVersion = 1

// Method names (agent side: what the client calls; client side: what we
// call or send).
const (
	methodInitialize        = "initialize"
	methodAuthenticate      = "authenticate"
	methodSessionNew        = "session/new"
	methodSessionLoad       = "session/load"
	methodSessionResume     = "session/resume"
	methodSessionList       = "session/list"
	methodSessionPrompt     = "session/prompt"
	methodSessionCancel     = "session/cancel"
	methodSessionUpdate     = "session/update"
	methodRequestPermission = "session/request_permission"
)

// Stop reasons of a prompt turn.
const (
	stopEndTurn   = "end_turn"
	stopMaxTokens = "max_tokens"
	stopMaxTurns  = "max_turn_requests"
	stopRefusal   = "refusal"
	stopCancelled = "cancelled"
)

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion    *int            `json:"protocolVersion"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	ClientInfo         *implementation `json:"clientInfo,omitempty"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AgentInfo         implementation    `json:"agentInfo"`
	AuthMethods       []struct{}        `json:"authMethods"`
}

type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type sessionCapabilities struct {
	List   *struct{} `json:"list,omitempty"`
	Resume *struct{} `json:"resume,omitempty"`
}

type newSessionParams struct {
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

type newSessionResult struct {
	SessionID string `json:"sessionId"`
	sessionSetup
}

// loadSessionParams serves session/load and session/resume.
type loadSessionParams struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

type listSessionsParams struct {
	CWD    *string `json:"cwd,omitempty"`
	Cursor *string `json:"cursor,omitempty"`
}

type sessionInfo struct {
	SessionID string         `json:"sessionId"`
	CWD       string         `json:"cwd"`
	Title     string         `json:"title,omitempty"`
	UpdatedAt string         `json:"updatedAt,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

type listSessionsResult struct {
	Sessions []sessionInfo `json:"sessions"`
}

type promptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
}

// contentBlock is the subset of ACP content blocks read from prompts and
// written in chunks: text, resource_link and an embedded text resource.
type contentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	Resource *embeddedResource `json:"resource,omitempty"`
}

type embeddedResource struct {
	URI  string `json:"uri"`
	Text string `json:"text,omitempty"`
}

func textBlock(s string) contentBlock { return contentBlock{Type: "text", Text: s} }

type promptResult struct {
	StopReason string `json:"stopReason"`
}

type cancelParams struct {
	SessionID string `json:"sessionId"`
}

// sessionNotification is session/update's params; Update is one of the
// update structs below.
type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

type chunkUpdate struct {
	SessionUpdate string       `json:"sessionUpdate"` // user_message_chunk, agent_message_chunk, agent_thought_chunk
	Content       contentBlock `json:"content"`
}

// Tool kinds and statuses.
const (
	kindRead    = "read"
	kindEdit    = "edit"
	kindDelete  = "delete"
	kindMove    = "move"
	kindSearch  = "search"
	kindExecute = "execute"
	kindThink   = "think"
	kindFetch   = "fetch"
	kindOther   = "other"

	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
)

// toolCall is both the tool_call update (every field set) and the
// tool_call_update (only what changed): the same shape, told apart by
// SessionUpdate.
type toolCall struct {
	SessionUpdate string            `json:"sessionUpdate,omitempty"`
	ToolCallID    string            `json:"toolCallId"`
	Title         string            `json:"title,omitempty"`
	Kind          string            `json:"kind,omitempty"`
	Status        string            `json:"status,omitempty"`
	Content       []toolCallContent `json:"content,omitempty"`
	Locations     []location        `json:"locations,omitempty"`
	RawInput      any               `json:"rawInput,omitempty"`
	RawOutput     any               `json:"rawOutput,omitempty"`
	Meta          map[string]any    `json:"_meta,omitempty"`
}

// toolCallContent is {type: content, content: block} or {type: diff,
// path, oldText, newText} (oldText null for a new file).
type toolCallContent struct {
	Type    string         `json:"type"`
	Content *contentBlock  `json:"content,omitempty"`
	Path    string         `json:"path,omitempty"`
	OldText *string        `json:"oldText,omitempty"`
	NewText *string        `json:"newText,omitempty"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

func textContent(s string) toolCallContent {
	b := textBlock(s)
	return toolCallContent{Type: "content", Content: &b}
}

func diffContent(path string, oldText *string, newText string) toolCallContent {
	return toolCallContent{Type: "diff", Path: path, OldText: oldText, NewText: &newText}
}

type location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high, medium, low
	Status   string `json:"status"`   // pending, in_progress, completed
}

// usageUpdate is ACP's usage_update (unstable schema): used and size in
// tokens, the cost so far; ioh's budget figures ride in _meta.
type usageUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	Used          int64          `json:"used"`
	Size          int64          `json:"size"`
	Cost          *cost          `json:"cost,omitempty"`
	Meta          map[string]any `json:"_meta,omitempty"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

type requestPermissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  toolCall           `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type requestPermissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"` // selected, cancelled
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}
