package ddblocal

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// DynamoDB Local takes any credentials, so it must not be reachable from
// other machines: it listens on 127.0.0.1 alone unless told otherwise, and
// never on every interface.
func TestListensOnlyWhereTold(t *testing.T) {
	for _, addr := range []string{"0.0.0.0", "::", "localhost", "", "300.0.0.1"} {
		if _, err := Start(t.Context(), Options{Addrs: []string{addr}}); err == nil || !strings.Contains(err.Error(), "listen address") {
			t.Errorf("Start on %q = %v, want a refusal before any JVM starts", addr, err)
		}
	}
	if testing.Short() {
		t.Skip("starts two JVMs")
	}
	other := nonLoopbackIPv4(t)

	srv, err := Start(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	port := srv.Endpoint()[strings.LastIndexByte(srv.Endpoint(), ':')+1:]
	if !strings.HasPrefix(srv.Endpoint(), "http://127.0.0.1:") {
		t.Errorf("Endpoint = %s", srv.Endpoint())
	}
	if !answers(t, "127.0.0.1", port) {
		t.Fatal("DynamoDB Local does not answer on 127.0.0.1")
	}
	if other != "" && answers(t, other, port) {
		t.Errorf("DynamoDB Local answers on %s, an address other machines can reach", other)
	}
	assertListeners(t, port, "127.0.0.1")

	if other == "" {
		t.Skip("no non-loopback address here to listen on as well")
	}
	both, err := Start(t.Context(), Options{Addrs: []string{"127.0.0.1", other}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = both.Stop() })
	port = both.Endpoint()[strings.LastIndexByte(both.Endpoint(), ':')+1:]
	if !answers(t, "127.0.0.1", port) || !answers(t, other, port) {
		t.Errorf("with Addrs 127.0.0.1 and %s, DynamoDB Local does not answer on both", other)
	}
	assertListeners(t, port, "127.0.0.1", other)
}

// answers reports whether an HTTP server answers on host:port.
func answers(t *testing.T, host, port string) bool {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort(host, port))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// nonLoopbackIPv4 is an address of this machine that is not loopback, or ""
// where there is none.
func nonLoopbackIPv4(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}
