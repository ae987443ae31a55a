// Package archtest holds tests about the shape of the module itself, such as
// the import layering (docs/architecture.md#layers), the documentation
// references of comments and what the binary does before main (no regular
// expression compiled in package init, an allocation budget for the package
// initializers; bench/startup.sh has the timings). It has no non-test code.
package archtest
