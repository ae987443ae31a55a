package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// History is the engine's read side of a workspace's trace store: the
// runs it recorded (in this process, in another, in an earlier session,
// from the CLI) and their events, as engine types. Front ends read runs
// through it, never through the store: a harness's (Harness.History), or
// one opened for reading where no harness runs (OpenHistory: `ioh-lsp
// runs`, `trace`, the ACP agent's list of another workspace's runs).
type History struct {
	store *trace.Store
	// changes restores a stored change set, secrets put back (a
	// harness's); nil for a history opened for reading.
	changes func([]byte) (*workspace.ChangeSet, error)
	// opened: OpenHistory opened the store, so Close closes it and
	// Note refuses (it has none of the secrets a write redacts).
	opened bool
}

// ErrNotFound: no run has the id (errors.Is; trace.ErrNotFound).
var ErrNotFound = trace.ErrNotFound

// ErrLeased: another live process drives the run (trace.ErrLeased).
var ErrLeased = trace.ErrLeased

// ErrStorage: the trace store failed, a full disk or an I/O error
// (trace.ErrStorage).
var ErrStorage = trace.ErrStorage

// ErrStateDir: the state directory is not configured usably, such as a
// relative IOH_STATE_DIR (trace.ErrStateDir).
var ErrStateDir = trace.ErrStateDir

// StateDir is the directory the workspaces' trace stores are kept in
// (docs/trace.md): $IOH_STATE_DIR, else $XDG_STATE_HOME/ioh, else
// ~/.local/state/ioh (trace.StateDir).
func StateDir(getenv func(string) string) (string, error) { return trace.StateDir(getenv) }

// History is the read side of the harness's trace store. Its Close does
// not close the store: the harness's owner does.
func (h *Harness) History() *History {
	return &History{store: h.opts.Store, changes: h.unmarshalChanges}
}

// OpenHistory opens the trace store of workspace root under stateDir
// (trace.DBPath) for reading, read-only (trace.OpenReadOnly): nothing is
// written, so it reads a store another process is writing and one whose
// files it may not write. Only what reading cannot do opens it as a
// writer does (trace.Open, docs/trace.md): a missing store is created,
// as every command that names the workspace does, a corrupt one moved
// aside, an older one migrated. Close closes it. Run's changes and Note
// need a harness (the environment's secrets): use Harness.History.
func OpenHistory(ctx context.Context, stateDir, root string) (*History, error) {
	path := trace.DBPath(stateDir, root)
	s, err := trace.OpenReadOnly(ctx, path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, trace.ErrCorrupt) || errors.Is(err, trace.ErrOlderSchema) {
		s, err = trace.Open(ctx, path, nil)
	}
	if err != nil {
		return nil, err
	}
	return &History{store: s, opened: true}, nil
}

// HasHistory reports whether workspace root has a trace store under
// stateDir, without creating one.
func HasHistory(stateDir, root string) bool {
	_, err := os.Stat(trace.DBPath(stateDir, root))
	return err == nil
}

// Close closes a store OpenHistory opened; a harness's history leaves
// the store open.
func (hs *History) Close() error {
	if !hs.opened {
		return nil
	}
	return hs.store.Close()
}

// Recovered says, for people, that opening the store found the database
// corrupt and moved it aside (where to, and why); "" when it did not.
func (hs *History) Recovered() string {
	if r := hs.store.Recovered(); r != nil {
		return r.String()
	}
	return ""
}

// StoredRun is a run as the trace store keeps it. Its Result is the
// run's end state as recorded (Outcome as stored, Err a *BudgetError for
// a budget stop so StopLimit names the limit, Changes left nil: History.
// Changes restores them).
type StoredRun struct {
	Result
	Parent string // "" for a root run
	Root   string // the tree's root run (itself for a root)
	Goal   string
	// Shown is the outcome to show at the time it was read: interrupted
	// for a running one no live process drives, awaiting_approval for a
	// running one whose change an editor shows for review, else Outcome.
	Shown Outcome
	// Spend is the run's spend against its limits, its sub-agents'
	// tokens and cost included (Spends).
	Spend Spend
	// Contract is the stored contract (nil when it does not decode);
	// ContractPath the task file it came from ("" inline).
	Contract     *contract.Contract
	ContractPath string
	// Reviewing: an editor shows the run's change for review now.
	Reviewing bool
	// Offered: the run's last state is its change offered for approval
	// (a pending change is answered with approve or reject, not resumed).
	Offered bool
	// Updated is when the run last changed.
	Updated time.Time
	// StateErr: the run's stored resume state does not decode (written
	// by another version of ioh-lsp, or damaged). The run is still
	// listed, from its row, but it cannot be resumed, approved or
	// rejected; the error names the run and what to do. nil when it
	// decodes.
	StateErr error
	changes  []byte
}

// Runs lists every run of the workspace, oldest first.
func (hs *History) Runs(ctx context.Context) ([]*StoredRun, error) {
	rows, err := hs.store.Runs(ctx)
	if err != nil {
		return nil, err
	}
	return StoredRuns(rows), nil
}

// Run reads run id; its Spend includes the sub-agents of its tree. An
// unknown id is an error wrapping ErrNotFound.
func (hs *History) Run(ctx context.Context, id string) (*StoredRun, error) {
	row, err := hs.store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	tree, err := hs.store.Tree(ctx, row.Root)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(tree, func(t *trace.RunRow) bool { return t.ID == row.ID }) {
		tree = append(tree, row)
	}
	r := storedRunOf(row, time.Now())
	r.Spend = Spends(tree)[row.ID]
	return r, nil
}

// Events lists run id's events in the order they were stored.
func (hs *History) Events(ctx context.Context, id string) ([]event.Event, error) {
	return hs.store.Events(ctx, id)
}

// TreeEvents lists the events of run id and of every sub-agent of its
// tree, in the order they were stored.
func (hs *History) TreeEvents(ctx context.Context, id string) ([]event.Event, error) {
	return hs.store.TreeEvents(ctx, id)
}

// Changes is run r's change set as of its last step, secrets put back;
// nil when it changed nothing.
func (hs *History) Changes(r *StoredRun) (*workspace.ChangeSet, error) {
	if len(r.changes) == 0 {
		return nil, nil
	}
	if hs.changes == nil {
		return nil, errors.New("read a run's change: the history was opened without a harness, which puts its secrets back")
	}
	cs, err := hs.changes(r.changes)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.RunID, err)
	}
	return cs, nil
}

// HasChanges reports whether run r stored a change set.
func (r *StoredRun) HasChanges() bool { return len(r.changes) > 0 }

// Note records what a front end saw happen to run id (an editor's
// review opened, an edit applied in part, what landed): one event,
// stored after the run's own.
func (hs *History) Note(ctx context.Context, id string, p event.Payload) error {
	if hs.opened {
		return errors.New("note an event: the history was opened for reading")
	}
	return hs.store.AppendEvents(ctx, event.New(id, "", 0, p))
}

// StoredRuns is store rows in the engine's form, each run's Spend rolled
// up over all of them and its outcome shown as of now (Runs reads them
// so).
func StoredRuns(rows []*trace.RunRow) []*StoredRun {
	now := time.Now()
	spends := Spends(rows)
	out := make([]*StoredRun, len(rows))
	for i, row := range rows {
		out[i] = storedRunOf(row, now)
		out[i].Spend = spends[row.ID]
	}
	return out
}

// storedRunOf is row as an engine type, its outcome shown as at now.
func storedRunOf(row *trace.RunRow, now time.Time) *StoredRun {
	st, err := decodeState(row.State)
	r := &StoredRun{Result: resultOf(row, st), Parent: row.Parent, Root: row.Root, Goal: row.Goal,
		Shown: Outcome(row.Shown(now)), Reviewing: row.Reviewing, Updated: row.Updated, changes: row.Changes}
	if err != nil {
		r.StateErr = fmt.Errorf("run %s: %w: it cannot be resumed, approved or rejected; it was recorded by another version of ioh-lsp or its store is damaged: use the version that recorded it, or start the task again (ioh-lsp run)", row.ID, err)
	}
	if st != nil {
		r.ContractPath, r.Offered = st.ContractPath, st.Phase == phaseProposal
	}
	var c contract.Contract
	if len(row.Contract) > 0 && json.Unmarshal(row.Contract, &c) == nil {
		r.Contract = &c
	}
	return r
}
