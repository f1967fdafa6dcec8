package ddblocal

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// assertListeners checks, in the kernel's own table of sockets, that the
// sockets listening on port are bound to exactly addrs: an IPv4 address may
// show as itself or as its IPv4-mapped IPv6 form, as Java binds them.
func assertListeners(t *testing.T, port string, addrs ...string) {
	t.Helper()
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	var bound []string
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		bound = append(bound, listeningOn(t, file, uint16(p))...)
	}
	slices.Sort(bound)
	want := slices.Clone(addrs)
	slices.Sort(want)
	if !slices.Equal(bound, want) {
		t.Errorf("sockets listening on port %s are bound to %v, want %v", port, bound, want)
	}
}

// listeningOn reads a /proc/net/tcp{,6} table and returns the local
// addresses of the sockets in state LISTEN (0A) on port.
func listeningOn(t *testing.T, file string, port uint16) []string {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil // no IPv6 here
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		hexAddr, hexPort, _ := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); err != nil || uint16(p) != port {
			continue
		}
		raw, err := hex.DecodeString(hexAddr)
		if err != nil || len(raw)%4 != 0 {
			t.Fatalf("%s: bad address %q", file, hexAddr)
		}
		// The kernel prints each 32-bit word in host (little-endian) order.
		ip := make(net.IP, len(raw))
		for i := 0; i < len(raw); i += 4 {
			binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(raw[i:]))
		}
		out = append(out, ip.String())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
