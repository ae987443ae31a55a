package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// A run whose lease another process takes (this one stalled past the
// lease's expiry and the run was resumed elsewhere) stops as interrupted
// at its next renewal and records nothing over the new holder: no
// outcome, no further step. (Before, it logged a warning and drove on.)
func TestLostLeaseStopsTheRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": {say(100, "read_file", args{"path": "a.txt"})}})
	prov := &stallAfterFirst{script: f.prov, called: make(chan struct{}, 1)}
	called := prov.called
	h, err := New(Options{
		Root: f.root, Store: f.store, Approver: f.appr, Events: f.sink, Sandbox: copySandbox{t},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return prov, nil },
		LeaseTTL:  300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := h.Start(ctx, goal("read"))
	if err != nil {
		t.Fatal(err)
	}
	select { // the second model call: step 1 is committed
	case <-called:
	case <-ctx.Done():
		t.Fatal("the run never reached its second call")
	}
	const thief = "otherhost:1:thief"
	if err := f.store.Release(ctx, run.ID(), h.opts.Owner); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Acquire(ctx, run.ID(), thief, time.Minute); err != nil {
		t.Fatal(err)
	}
	var res *Result
	select {
	case <-run.Done():
		res = run.Wait()
	case <-ctx.Done():
		t.Fatal("the run drives on after losing its lease")
	}
	if res.Outcome != OutcomeInterrupted || !errors.Is(res.Err, trace.ErrLeased) {
		t.Errorf("result %s (%v), want interrupted by the lost lease", res.Outcome, res.Err)
	}
	row, err := f.store.Run(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	if row.Outcome != trace.OutcomeRunning || row.Totals.Steps != 1 || row.LeaseOwner != thief {
		t.Errorf("stored outcome %q, %d steps, lease %q: want running, 1, %q (untouched)", row.Outcome, row.Totals.Steps, row.LeaseOwner, thief)
	}
}

// stallAfterFirst answers the first call from the script and blocks every
// later one until its context ends (a model call in flight).
type stallAfterFirst struct {
	*script
	called chan struct{}
}

func (p *stallAfterFirst) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			select {
			case p.called <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	return p.script.Complete(ctx, req)
}
