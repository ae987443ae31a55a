package model

import (
	"errors"
	"fmt"
	"time"
)

// Class is the retry class of a provider failure
// (docs/contract.md#providers-retries-and-fallback).
type Class string

const (
	ClassRateLimited     Class = "rate_limited"
	ClassServer          Class = "server"
	ClassTransport       Class = "transport"
	ClassTimeout         Class = "timeout"
	ClassMalformed       Class = "malformed"
	ClassAuth            Class = "auth"
	ClassRequest         Class = "request"
	ClassContextOverflow Class = "context_overflow"
	// ClassExhausted: a replay cassette ran out of turns. Not retried.
	ClassExhausted Class = "exhausted"
)

// Retryable reports whether a failure of this class is retried with backoff.
func (c Class) Retryable() bool {
	switch c {
	case ClassRateLimited, ClassServer, ClassTransport, ClassTimeout, ClassMalformed:
		return true
	}
	return false
}

// Error is a classified provider failure.
type Error struct {
	Class      Class
	Provider   string
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from Retry-After, 0 when absent
	Err        error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: %s (HTTP %d): %v", e.Provider, e.Class, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Provider, e.Class, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err, or ClassTransport for an unclassified
// error (the safest assumption: retried a bounded number of times).
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassTransport
}
