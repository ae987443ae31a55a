// Package archtest holds tests about the shape of the module itself, such as
// the import layering (docs/architecture.md#layers) and the documentation
// references of comments. It has no non-test code.
package archtest
