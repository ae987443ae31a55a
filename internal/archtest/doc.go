// Package archtest holds tests about the shape of the module itself, such as
// the import layering of SPEC §1. It has no non-test code.
package archtest
