package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A NetProxy that is malformed or set with Network is a bad spec; the
// message names the field.
func TestNetProxySpecRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"with Network", Spec{Argv: []string{"true"}, Network: true, NetProxy: &NetProxy{Socket: "/tmp/p.sock", TCP: "127.0.0.1:8080"}}, "both set"},
		{"relative socket", Spec{Argv: []string{"true"}, NetProxy: &NetProxy{Socket: "p.sock", TCP: "127.0.0.1:8080"}}, "NetProxy.Socket"},
		{"no port", Spec{Argv: []string{"true"}, NetProxy: &NetProxy{Socket: "/tmp/p.sock", TCP: "127.0.0.1"}}, "NetProxy.TCP"},
		{"not loopback", Spec{Argv: []string{"true"}, NetProxy: &NetProxy{Socket: "/tmp/p.sock", TCP: "10.0.0.1:8080"}}, "NetProxy.TCP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testRunner().Run(context.Background(), &tc.spec)
			if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want ErrBadSpec naming %q", err, tc.want)
			}
		})
	}
}
