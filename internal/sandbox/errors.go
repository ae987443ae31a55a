package sandbox

import "errors"

var (
	// ErrNoCommand: the Spec has no argv.
	ErrNoCommand = errors.New("sandbox: no command")
	// ErrBadSpec: a Spec field is invalid.
	ErrBadSpec = errors.New("sandbox: invalid spec")
	// ErrUnknownBackend: Spec.Backend names no backend.
	ErrUnknownBackend = errors.New("sandbox: unknown backend")
	// ErrBackendUnavailable: the requested backend cannot run here. A
	// requested backend is never silently replaced by a weaker one.
	ErrBackendUnavailable = errors.New("sandbox: backend unavailable")
	// ErrSetup: the sandbox could not be set up (CLI exit 125).
	ErrSetup = errors.New("sandbox: setup failed")
	// ErrSecretEnv: Spec.Env carries a variable whose name looks like a
	// secret.
	ErrSecretEnv = errors.New("sandbox: secret-looking environment variable refused")
	// ErrBelowRequired: the only backends that work here are weaker than
	// Spec.Require (the `sandbox.require` config key).
	ErrBelowRequired = errors.New("sandbox: containment below the required tier")
	// ErrBadChange: a staged change has an unsafe or empty path.
	ErrBadChange = errors.New("sandbox: bad staged change")
)
