//go:build !linux

package sandbox

// explainFailure words a backend's setup failure; outside Linux the
// error already names its cause.
func explainFailure(_ string, err error) string { return err.Error() }
