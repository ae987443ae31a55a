package wire

import (
	"context"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/telemetry"
)

// withTelemetry returns the sink runs emit to: o.Sink, plus the OTLP
// exporter when the user config sets telemetry.otlp_endpoint (off by
// default: nothing leaves the machine unless configured). stop flushes
// the exporter, waiting at most 5 s.
func withTelemetry(ctx context.Context, cfg *config.Config, o Options) (event.Sink, func(), error) {
	if cfg.Telemetry.OTLPEndpoint == "" {
		return o.Sink, func() {}, nil
	}
	exp, err := telemetry.New(ctx, telemetry.Options{Endpoint: cfg.Telemetry.OTLPEndpoint, Secrets: Secrets(o.Getenv, o.Environ)})
	if err != nil {
		return nil, nil, err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := exp.Close(sctx); err != nil {
			o.Logger.Warn("telemetry: export at close", "err", err)
		}
	}
	if o.Sink == nil {
		return exp, stop, nil
	}
	next := o.Sink
	return event.SinkFunc(func(e event.Event) { next.Emit(e); exp.Emit(e) }), stop, nil
}
