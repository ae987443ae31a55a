//go:build !linux

package sandbox

// linuxNetProxySupport is netProxySupport for a backend that is not a
// Linux tier: none here is.
func linuxNetProxySupport(name string) (bool, string) {
	return false, "a run restricted to allowed hosts is refused: " + name + " is not a backend of this system"
}
