package trace

import "errors"

var (
	// ErrNotFound: no run with that id.
	ErrNotFound = errors.New("run not found")
	// ErrLeased: another live process drives the run.
	ErrLeased = errors.New("run is leased by another process")
	// ErrNewerSchema: the database was written by a newer build.
	ErrNewerSchema = errors.New("trace database is newer than this build")
	// ErrStepExists: a step with that number is already committed (a
	// resumed process must never write a step twice).
	ErrStepExists = errors.New("step already committed")
)
