// Package webhooktest holds test helpers for the webhooks: a resolver
// with a public name and a private one, so that tests register endpoints
// without DNS.
package webhooktest

import (
	"context"
	"net"
	"net/netip"
)

// The names Resolver answers.
const (
	// PublicHost resolves to a public address.
	PublicHost = "hooks.example.com"
	// PrivateHost resolves to a private address (10.0.0.1).
	PrivateHost = "internal.example.com"
)

// Resolver answers PublicHost and PrivateHost; no other name resolves.
type Resolver struct{}

// LookupNetIP is webhook.Resolver's.
func (Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case PublicHost:
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	case PrivateHost:
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
