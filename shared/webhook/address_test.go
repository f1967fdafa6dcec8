package webhook_test

import (
	"errors"
	"net/netip"
	"testing"

	"contentapi/shared/webhook"
)

// Every non-public range of IANA's special-purpose registries, in IPv4 and
// IPv6, with an address at each edge where the edge is what is tested.
func TestCheckPublicRefusesEveryNonPublicRange(t *testing.T) {
	for _, addr := range []string{
		// IPv4
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
		"127.0.0.1", "127.255.255.254", "169.254.169.254", "169.254.0.1", "172.16.0.1",
		"172.31.255.255", "192.0.0.1", "192.0.0.170", "192.0.2.1", "192.88.99.1", "192.168.1.1",
		"198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1",
		"239.255.255.250", "240.0.0.1", "255.255.255.255",
		// IPv4-mapped IPv6: the IPv4 address it reaches decides.
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.1.2.3", "::ffff:0.0.0.0",
		// NAT64 reaching a non-public IPv4 address.
		"64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1",
		// IPv6
		"::", "::1", "::127.0.0.1", "100::1", "64:ff9b:1::1", "2001::1", "2001:2::1", "2001:db8::1",
		"2001:db8:ffff::1", "2002:7f00:1::1", "3fff::1", "5f00::1", "fc00::1", "fd00::1",
		"fd00:ec2::254", "fe80::1", "fe80::1%eth0", "febf::1", "fec0::1", "ff02::1", "ff05::2",
		"ff0e::1", "4000::1", "e000::1",
	} {
		a := netip.MustParseAddr(addr)
		if err := webhook.CheckPublic(a); !errors.Is(err, webhook.ErrNotPublic) {
			t.Errorf("%s: %v, want refused", addr, err)
		}
	}
	if err := webhook.CheckPublic(netip.Addr{}); err == nil {
		t.Error("the zero address passes")
	}
}

func TestCheckPublicPassesPublicAddresses(t *testing.T) {
	for _, addr := range []string{
		"1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.1", "100.63.255.255", "100.128.0.1",
		"169.253.255.255", "172.15.255.255", "172.32.0.1", "192.0.1.1", "192.167.255.255",
		"192.169.0.1", "198.17.255.255", "198.20.0.1", "223.255.255.255",
		"::ffff:8.8.8.8", "64:ff9b::8.8.8.8",
		"2606:4700:4700::1111", "2a00:1450:4001::200e", "2001:4860:4860::8888", "3ffe::1",
	} {
		if err := webhook.CheckPublic(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("%s: %v, want public", addr, err)
		}
	}
}
