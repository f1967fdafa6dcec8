package webhook

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrNotPublic is an address a webhook is never sent to.
var ErrNotPublic = errors.New("not a public address")

// notPublic are the special-purpose ranges of IANA's registries
// (iana.org/assignments/iana-ipv4-special-registry and -ipv6-) that no
// webhook may reach, beyond what netip's predicates already name
// (loopback, private, link-local, multicast, unspecified). IPv6 outside
// 2000::/3 is refused as a whole (see publicErr), so only the
// special-purpose blocks inside it are listed for IPv6.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments: Teredo, benchmarking, ORCHID, anycast
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4, which embeds any IPv4 address
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
}

// globalUnicast is IPv6's global unicast space: everything else in IPv6
// (unique-local fc00::/7, link-local, site-local, multicast, ::/8 with
// the loopback, unspecified and IPv4-compatible addresses, 100::/64
// discard, 64:ff9b:1::/48 local-use translation, SRv6's 5f00::/16) is
// refused.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// nat64 is the well-known NAT64 prefix: it reaches the IPv4 address held
// in its last 32 bits, so that address decides.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// CheckPublic returns nil for an address a webhook may be sent to, and an
// error wrapping ErrNotPublic naming the range otherwise. An IPv4-mapped
// IPv6 address (::ffff:a.b.c.d) and a NAT64 one (64:ff9b::a.b.c.d) are
// judged by the IPv4 address they reach.
func CheckPublic(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrNotPublic)
	}
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case a.IsUnspecified():
		return fmt.Errorf("%w: %s is unspecified", ErrNotPublic, a)
	case a.IsLoopback():
		return fmt.Errorf("%w: %s is loopback", ErrNotPublic, a)
	case a.IsPrivate():
		return fmt.Errorf("%w: %s is private", ErrNotPublic, a)
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s is link-local", ErrNotPublic, a)
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return fmt.Errorf("%w: %s is multicast", ErrNotPublic, a)
	case a.Is6() && !globalUnicast.Contains(a):
		return fmt.Errorf("%w: %s is outside IPv6 global unicast", ErrNotPublic, a)
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return fmt.Errorf("%w: %s is in the special-purpose range %s", ErrNotPublic, a, p)
		}
	}
	return nil
}
