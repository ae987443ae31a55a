package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// exitSandboxSetup is the exit code of `sandbox run` when the sandbox
// could not be set up (docs/cli.md#sandbox-run); otherwise it exits with
// the child's own code (runExit).
const exitSandboxSetup = 125

// sandboxRunOutput is the output cap of `sandbox run` without --output,
// larger than an agent run's (sandbox.DefaultLimits): a person reads it.
const sandboxRunOutput = "64MiB"

// cmdSandbox dispatches `sandbox run` and `sandbox doctor`.
func cmdSandbox(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.stderr, "ioh-lsp sandbox: missing sub-command (run or doctor)")
		return exitUsage
	}
	switch args[0] {
	case "run":
		return cmdSandboxRun(ctx, env, args[1:])
	case "doctor":
		return cmdSandboxDoctor(ctx, env, args[1:])
	case "stage-bench":
		return cmdSandboxStageBench(ctx, env, args[1:])
	case "spawn-bench":
		return cmdSandboxSpawnBench(ctx, env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.stdout, "usage: ioh-lsp sandbox run [flags] -- CMD [ARGS] | ioh-lsp sandbox doctor [--json]")
		return exitOK
	}
	fmt.Fprintf(env.stderr, "ioh-lsp sandbox: unknown sub-command %q (want run or doctor)\n", args[0])
	return exitUsage
}

func cmdSandboxRun(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("sandbox run", env.stderr)
	var writes stringList
	fs.Var(&writes, "write", "writable directory `DIR` (repeatable; default the current directory)")
	network := fs.Bool("net", false, "grant the whole network: every host, port and protocol (see --net-allow)")
	var netAllow stringList
	fs.Var(&netAllow, "net-allow", "reach only `HOST` (host or host:port glob, or preset:go, preset:npm, preset:pypi, preset:crates) through an egress proxy, with the user config's network.allow and network.deny (repeatable)")
	timeout := fs.Duration("timeout", sandbox.DefaultLimits.Wall, "wall-clock cap `D`")
	cpu := fs.Duration("cpu", 0, "CPU time cap `D` per process")
	memory := fs.String("memory", "", "memory cap in `BYTES` (plain or with a unit: 256MiB)")
	procs := fs.Int("procs", 0, "process cap `N`")
	output := fs.String("output", sandboxRunOutput, "output cap in `BYTES` (stdout+stderr)")
	backend := fs.String("backend", "", "backend `NAME`: linux, landlock, macos, windows or floor (default: the strongest that works)")
	report := fs.String("report", "", "write the outcome as JSON to `FILE`")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageError(env, "sandbox run", err)
	}
	if err := wantArgs(pos, 1, -1); err != nil {
		return usageError(env, "sandbox run", fmt.Errorf("missing command after --"))
	}
	mem, err := parseBytes(*memory)
	if err != nil {
		return usageError(env, "sandbox run", fmt.Errorf("--memory: %w", err))
	}
	outCap, err := parseBytes(*output)
	if err != nil {
		return usageError(env, "sandbox run", fmt.Errorf("--output: %w", err))
	}
	if *network && len(netAllow) > 0 {
		return usageError(env, "sandbox run", errors.New("--net grants the whole network and --net-allow only the hosts it names: give one"))
	}
	if *timeout <= 0 || *cpu < 0 || *procs < 0 {
		return usageError(env, "sandbox run", errors.New("--timeout, --cpu and --procs must be positive"))
	}
	if len(writes) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %v\n", err)
			return exitSandboxSetup
		}
		writes = stringList{wd}
	}
	// The user config's sandbox key, as agent runs take it (masked and
	// readable paths, required tier); its limits are defaults the flags
	// given override.
	cfg, err := wire.LoadConfig("", env.getenv, nil)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %v\n", err)
		return exitUsage
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %s\n", w)
	}
	set := wire.SandboxFromConfig(cfg)
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	limits := set.Limits
	if given["timeout"] || limits.Wall == 0 {
		limits.Wall = *timeout
	}
	if given["cpu"] {
		limits.CPU = *cpu
	}
	if given["memory"] {
		limits.Memory = mem
	}
	if given["procs"] {
		limits.Procs = *procs
	}
	if given["output"] || limits.Output == 0 {
		limits.Output = outCap
	}
	// What the host's git runs from a writable work tree stays read-only.
	protected, err := sandboxexec.HostRunProtected(writes)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %v (the paths found are protected)\n", err)
	}
	// The Go caches as an agent run's commands get them: the build cache
	// readable in place, its writes kept in a layer discarded with the run.
	goEnv, scratch := wire.Toolchain(env.getenv)
	spec := &sandbox.Spec{
		Argv: pos, Writable: writes, Protected: protected, Network: *network, Backend: *backend,
		View:    policy.Default(policy.Options{Env: goEnv, Readable: set.Readable, Masked: set.Masked}),
		Require: set.Require, Env: goEnv, Scratch: scratch, Limits: limits,
		Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr,
	}
	if wd, err := os.Getwd(); err == nil {
		spec.Dir = wd
	}
	if len(netAllow) > 0 {
		eg, err := startNetAllow(cfg, netAllow, env.stderr) // sandbox_netallow.go
		if err != nil {
			return usageError(env, "sandbox run", err)
		}
		defer eg.close()
		spec.NetProxy, spec.Stderr = eg.spec(), eg
	}
	var rep *reportFile
	if *report != "" {
		// Made before the run: a report that cannot be written is a usage
		// error, not a result lost after the command ran.
		if rep, err = createReport(*report); err != nil {
			return usageError(env, "sandbox run", err)
		}
		defer rep.discard()
	}
	out, err := sandbox.NewRunner(nil).Run(ctx, spec)
	if errors.Is(err, sandbox.ErrUnknownBackend) || errors.Is(err, sandbox.ErrBadSpec) {
		return usageError(env, "sandbox run", err)
	}
	if out == nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %v\n", err)
		return exitSandboxSetup
	}
	if out.Downgrade != "" {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: contained by the %s tier, not a stronger one: %s\n", out.Backend, out.Downgrade)
	}
	code, note := runExit(out, err)
	if rep != nil {
		if err := rep.write(out); err != nil {
			fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %v (the command exited %d)\n", err, code)
			return exitSandboxSetup
		}
	}
	if note != "" {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox run: %s\n", note)
	}
	return code
}

// runExit decides the exit code of `sandbox run` from the outcome the
// --report file holds, and the line that explains a cap: the command's
// own code (128+N when signal N killed it, so 137 when a cap killed it
// with SIGKILL), whether or not a cap was hit; 130 when the run was
// interrupted. A cap that refused something without killing the command
// (the process cap makes fork fail) leaves the command's own code.
func runExit(out *sandbox.Outcome, err error) (int, string) {
	note := ""
	switch {
	case out.CapHit != "" && out.Signal != "":
		note = fmt.Sprintf("%s cap hit: the command was killed (%s)", out.CapHit, out.Signal)
	case out.CapHit != "":
		note = fmt.Sprintf("%s cap hit: the command was refused past it, not killed, and exited %d", out.CapHit, out.ExitCode)
	}
	if err != nil { // interrupted
		return exitCancelled, note
	}
	return out.ExitCode, note
}

// reportFile is the --report destination: a temp file in its directory,
// made before the run, renamed over the path once the outcome is in it, so
// a reader never sees half of it.
type reportFile struct {
	path string
	tmp  *os.File
}

// createReport makes the temp file of the report at path. Errors name
// path, not the temp file.
func createReport(path string) (*reportFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*")
	if err != nil {
		return nil, fmt.Errorf("--report %s: %w", path, pathErr(err))
	}
	return &reportFile{path: path, tmp: tmp}, nil
}

// write puts the outcome JSON in place.
func (r *reportFile) write(out *sandbox.Outcome) error {
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if _, err := r.tmp.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write report %s: %w", r.path, pathErr(err))
	}
	if err := r.tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", r.path, pathErr(err))
	}
	if err := os.Rename(r.tmp.Name(), r.path); err != nil {
		return fmt.Errorf("write report %s: %w", r.path, pathErr(err))
	}
	r.tmp = nil
	return nil
}

// discard removes the temp file when the report was not put in place.
func (r *reportFile) discard() {
	if r.tmp != nil {
		r.tmp.Close()
		os.Remove(r.tmp.Name())
	}
}

// pathErr drops the path of a *os.PathError or *os.LinkError (the temp
// file's name, which the user never gave) and keeps its cause.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// parseBytes reads a byte size: plain bytes or with a unit (KiB, MiB, GiB,
// KB, MB, GB, K, M, G). "" is zero.
func parseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
	}
	num, mult := s, int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad byte size %q", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("byte size %q too large", s)
	}
	return n * mult, nil
}

func cmdSandboxDoctor(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("sandbox doctor", env.stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageError(env, "sandbox doctor", err)
	}
	if err := wantArgs(pos, 0, 0); err != nil {
		return usageError(env, "sandbox doctor", err)
	}
	rep := sandbox.Doctor(ctx)
	req := requireFor(env, rep)
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			*sandbox.DoctorReport
			Require *requireNote `json:"require"`
		}{rep, req}); err != nil {
			return exitFailed
		}
	} else {
		printDoctor(env.stdout, rep, req)
	}
	if rep.Backend == "" {
		return exitFailed
	}
	return exitOK
}

// requireNote is what the user config's `sandbox.require` makes of the
// tier a run gets here.
type requireNote struct {
	Tier    string `json:"tier"`             // the required tier
	From    string `json:"from"`             // "user config" or "default"
	Refused bool   `json:"refused"`          // agent runs are refused here
	Config  string `json:"config,omitempty"` // the config's error, when it has one
	Text    string `json:"text"`
}

// requireFor reads the user config's required tier as agent runs take it
// (config.RequireDefault when unset; `sandbox run` takes only one that is
// set) and says whether the tier a run gets here meets it.
func requireFor(env *cliEnv, rep *sandbox.DoctorReport) *requireNote {
	n := &requireNote{Tier: config.RequireDefault, From: "default"}
	cfg, err := wire.LoadConfig("", env.getenv, nil)
	if err != nil {
		n.Config = err.Error()
	} else if r := wire.SandboxFromConfig(cfg).Require; r != "" {
		n.Tier, n.From = r, "user config"
	}
	switch {
	case rep.Backend == "":
		n.Refused = true
		n.Text = fmt.Sprintf("agent runs are refused here (no tier works; sandbox.require: %s, %s)", n.Tier, n.From)
	case !sandbox.MeetsRequire(rep.Backend, n.Tier):
		n.Refused = true
		who := "agent runs are"
		if n.From == "user config" {
			who = "agent runs and `sandbox run` are"
		}
		n.Text = fmt.Sprintf("%s refused here: sandbox.require is %s (%s) and only the %s tier works; accept it with `sandbox: {require: %s}` in your user config, or fix the cause above",
			who, n.Tier, n.From, rep.Backend, rep.Backend)
	default:
		n.Text = fmt.Sprintf("agent runs accept it: sandbox.require is %s (%s)", n.Tier, n.From)
	}
	if n.Config != "" {
		n.Text += "; the user config has an error, agent runs and `sandbox run` refuse to start: " + n.Config
	}
	return n
}

func printDoctor(w io.Writer, rep *sandbox.DoctorReport, req *requireNote) {
	if rep.Backend == "" {
		fmt.Fprintf(w, "no sandbox backend works on this %s machine\n", rep.OS)
	} else {
		fmt.Fprintf(w, "a run gets the %s tier here\n", rep.Backend)
	}
	// Why each stronger tier is not used, in the words the runner found.
	for _, b := range rep.Backends {
		if b.Name == rep.Backend {
			break
		}
		fmt.Fprintf(w, "  not %s: %s\n", b.Name, b.Error)
	}
	if rep.Backend != "" && rep.Backend == rep.Backends[0].Name {
		fmt.Fprintf(w, "  %s\n", rep.Reason)
	}
	if req != nil {
		fmt.Fprintf(w, "%s\n", req.Text)
	}
	if rep.Defaults != "" {
		fmt.Fprintf(w, "caps of an agent's command or check that asks for none: %s\n", rep.Defaults)
		fmt.Fprintf(w, "caps of `sandbox run` without flags: the same but output %s (--output), and the user config's sandbox.limits first\n", sandboxRunOutput)
	}
	if rep.InitProgram != "" {
		fmt.Fprintf(w, "stages run in: %s\n", rep.InitProgram)
	}
	if rep.NetAllow != "" {
		fmt.Fprintf(w, "network allow-list (--net-allow, network.allow): %s\n", rep.NetAllow)
	}
	if rep.ProbeCaps != "" {
		fmt.Fprintf(w, "each tier's mechanisms below are its probe's, which ran with its own caps: %s\n", rep.ProbeCaps)
	}
	for _, b := range rep.Backends {
		state := "works"
		if !b.Works {
			state = "FAILS: " + b.Error
		}
		fmt.Fprintf(w, "\n%s: %s\n", b.Name, state)
		for _, m := range b.Mechanisms {
			fmt.Fprintf(w, "  %-22s %-11s %s\n", m.Name, m.State, m.Detail)
		}
		if b.NetAllow != "" {
			fmt.Fprintf(w, "  %-22s %s\n", "allow-list", b.NetAllow)
		}
	}
}

// cmdSandboxStageBench is a hidden helper for bench/sandbox.sh: it stages a
// view of DIR with N files changed (the first N regular files found, plus
// one created) and runs /bin/true over it, so a benchmark can time staging
// against copying the tree.
func cmdSandboxStageBench(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("sandbox stage-bench", env.stderr)
	n := fs.Int("changes", 3, "files to change")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageError(env, "sandbox stage-bench", err)
	}
	if err := wantArgs(pos, 1, 1); err != nil {
		return usageError(env, "sandbox stage-bench", err)
	}
	var changes []sandbox.Change
	_ = filepath.WalkDir(pos[0], func(p string, d os.DirEntry, err error) error {
		if err != nil || len(changes) >= *n {
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(pos[0], p)
			changes = append(changes, sandbox.Change{Path: filepath.ToSlash(rel), Content: []byte("// changed\n")})
		}
		return nil
	})
	start := time.Now()
	st, err := sandbox.NewStage(pos[0], changes)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox stage-bench: %v\n", err)
		return exitSandboxSetup
	}
	defer st.Close()
	out, err := sandbox.NewRunner(nil).Run(ctx, &sandbox.Spec{Argv: []string{"/bin/true"}, Stage: st, View: policy.Default(policy.Options{}), Stdout: env.stdout, Stderr: env.stderr})
	if out == nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox stage-bench: %v\n", err)
		return exitSandboxSetup
	}
	fmt.Fprintf(env.stderr, "staged %d changes over %s and ran in %s (%s)\n", len(changes), pos[0], time.Since(start).Round(time.Microsecond), out.Backend)
	return out.ExitCode
}

// cmdSandboxSpawnBench is a hidden helper for bench/sandbox.sh: from this
// one running process (the server's situation) it spawns N contained
// /bin/true through a pool with a policy cache (as the server's adapter
// has them), N on the cold path with the same policy cache (what the
// pool alone saves), N with neither (what a one-shot command gets), N
// bare /bin/true and N of the given reference command, and prints each
// mean in milliseconds: "sandbox S cold C oneshot O bare B reference R".
func cmdSandboxSpawnBench(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("sandbox spawn-bench", env.stderr)
	n := fs.Int("n", 100, "spawns of each kind")
	backend := fs.String("backend", "", "backend of the contained spawns (default: the strongest that works)")
	gap := fs.Duration("gap", 20*time.Millisecond, "idle time before each spawn, not counted")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return usageError(env, "sandbox spawn-bench", err)
	}
	if *n <= 0 || len(pos) == 0 {
		return usageError(env, "sandbox spawn-bench", errors.New("want -n > 0 and a reference command"))
	}
	// Stages started ahead of their run, as the server has them.
	pool := sandbox.NewPool()
	defer pool.Close()
	r := sandbox.NewRunner(nil, sandbox.WithPool(pool))
	// A workspace-like working directory, as the server's runs have.
	work, err := os.MkdirTemp("", "ioh-spawn-bench-")
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox spawn-bench: %v\n", err)
		return exitSandboxSetup
	}
	defer os.RemoveAll(work)
	// Each spawn is timed alone, after an idle pause that is not counted:
	// a server's runs come between model turns, not back to back, so
	// what a run waits for is its own latency (with whatever the
	// previous one left prepared), not a loop's throughput.
	timeIt := func(f func() error) (float64, error) {
		if err := f(); err != nil { // warm-up
			return 0, err
		}
		var total time.Duration
		for i := 0; i < *n; i++ {
			time.Sleep(*gap)
			start := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			total += time.Since(start)
		}
		return float64(total.Microseconds()) / 1000 / float64(*n), nil
	}
	contained := func(r *sandbox.Runner, views *policy.Cache) func() error {
		return func() error {
			spec := &sandbox.Spec{Argv: []string{"/bin/true"}, Dir: work, Writable: []string{work}, Backend: *backend, View: policy.Default(policy.Options{Cache: views})}
			out, err := r.Run(ctx, spec)
			if err == nil && out.ExitCode != 0 {
				err = fmt.Errorf("exit %d", out.ExitCode)
			}
			return err
		}
	}
	views := policy.NewCache()
	sb, err := timeIt(contained(r, views))
	var cold, oneshot float64
	if err == nil {
		pool.Close() // nothing of the pooled runs is left for the cold ones
		cold, err = timeIt(contained(sandbox.NewRunner(nil), views))
	}
	if err == nil {
		oneshot, err = timeIt(contained(sandbox.NewRunner(nil), nil))
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox spawn-bench: %v\n", err)
		return exitSandboxSetup
	}
	bare, err := timeIt(func() error { return exec.CommandContext(ctx, "/bin/true").Run() })
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox spawn-bench: %v\n", err)
		return exitFailed
	}
	ref, err := timeIt(func() error { return exec.CommandContext(ctx, pos[0], pos[1:]...).Run() })
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp sandbox spawn-bench: reference: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(env.stdout, "sandbox %.3f cold %.3f oneshot %.3f bare %.3f reference %.3f\n", sb, cold, oneshot, bare, ref)
	return exitOK
}
