package sandbox

import "testing"

// testPool is the pool the test's runs go through (testRunner), as a
// long-lived caller's do; nil: the cold path.
var testPool *Pool

// testRunner is a Runner whose runs go through testPool.
func testRunner() *Runner { return NewRunner(nil, WithPool(testPool)) }

// keepWarm gives the test's runs a pool, closed (killing what waits)
// after it.
func keepWarm(t *testing.T) *Pool {
	t.Helper()
	p := NewPool()
	testPool = p
	t.Cleanup(func() {
		p.Close()
		if testPool == p {
			testPool = nil
		}
	})
	return p
}
