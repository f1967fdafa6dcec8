package webhook_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/shared/webhook"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// resolver answers each host with its answers in turn (the last one
// repeating), as a DNS server under an attacker's control can: a rebinding
// resolver answers a public address first and a private one next. It
// counts the lookups.
type resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups map[string]int
}

func newResolver(answers map[string][][]netip.Addr) *resolver {
	return &resolver{answers: answers, lookups: map[string]int{}}
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.lookups[host], len(seq)-1)
	r.lookups[host]++
	return append([]netip.Addr(nil), seq[i]...), nil
}

func (r *resolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// receiver is a TLS test server, whose certificate names *.example.com,
// counting the requests it gets and answering with answer.
func receiver(t *testing.T, answer http.HandlerFunc) (srv *httptest.Server, port string, requests *atomic.Int32, tlsConfig *tls.Config) {
	t.Helper()
	requests = new(atomic.Int32)
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return srv, port, requests, &tls.Config{RootCAs: pool}
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// The client connects to the address it resolved and checked, not to the
// name (the host resolves nowhere but in the test's resolver), with TLS
// naming the URL's host, and posts the signed headers and body as given.
func TestPostConnectsToTheCheckedAddressWithTheHostsTLSName(t *testing.T) {
	var got struct {
		sni, id, ctype, body string
	}
	_, port, requests, tlsConfig := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		got.sni = r.TLS.ServerName
		got.id = r.Header.Get("webhook-id")
		got.ctype = r.Header.Get("content-type")
		b := new(strings.Builder)
		_, _ = fmt.Fprint(b, r.Method, " ")
		buf := make([]byte, 64)
		n, _ := r.Body.Read(buf)
		b.Write(buf[:n])
		got.body = b.String()
		w.WriteHeader(http.StatusOK)
	})
	res := newResolver(map[string][][]netip.Addr{"hooks.example.com": {{loopback}}})
	c := webhook.NewClientTreatingAsPublic(webhook.Options{Resolver: res, TLS: tlsConfig}, loopback)
	h, err := webhook.Sign(make([]byte, 32), "msg_1", time.Now(), []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(t.Context(), "https://hooks.example.com:"+port+"/hook", h, []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK || requests.Load() != 1 {
		t.Fatalf("status %d after %d requests", resp.Status, requests.Load())
	}
	if got.sni != "hooks.example.com" || got.id != "msg_1" || got.ctype != "application/json" || got.body != `POST {"a":1}` {
		t.Errorf("the receiver got %+v", got)
	}
	if n := res.count("hooks.example.com"); n != 1 {
		t.Errorf("%d lookups for one attempt", n)
	}
}

// DNS rebinding: the name answers a public address for the first attempt
// and the metadata service's for the next. The next attempt resolves again,
// is refused, and never reaches a socket.
func TestPostRechecksEveryAttemptAgainstRebinding(t *testing.T) {
	_, port, requests, tlsConfig := receiver(t, ok)
	res := newResolver(map[string][][]netip.Addr{"rebind.example.com": {{loopback}, addrs("169.254.169.254")}})
	c := webhook.NewClientTreatingAsPublic(webhook.Options{Resolver: res, TLS: tlsConfig}, loopback)
	url := "https://rebind.example.com:" + port + "/"
	if resp, err := c.Post(t.Context(), url, nil, nil); err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("first attempt: %v, %+v", err, resp)
	}
	_, err := c.Post(t.Context(), url, nil, nil)
	if !errors.Is(err, webhook.ErrNotPublic) {
		t.Fatalf("second attempt after rebinding: %v, want refused", err)
	}
	if requests.Load() != 1 || res.count("rebind.example.com") != 2 {
		t.Errorf("%d requests, %d lookups: want 1 and 2", requests.Load(), res.count("rebind.example.com"))
	}
}

// A receiver that redirects to the metadata service gets its redirect
// taken as the answer (a failure, not followed): following would have
// been refused as a non-public address instead of answering 302.
func TestPostFollowsNoRedirect(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		_, port, requests, tlsConfig := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/security-credentials/", status)
		})
		res := newResolver(map[string][][]netip.Addr{"hooks.example.com": {{loopback}}})
		c := webhook.NewClientTreatingAsPublic(webhook.Options{Resolver: res, TLS: tlsConfig}, loopback)
		resp, err := c.Post(t.Context(), "https://hooks.example.com:"+port+"/", nil, []byte("{}"))
		if err != nil || resp.Status != status || requests.Load() != 1 {
			t.Errorf("redirect %d: %v, status %d, %d requests", status, err, resp.Status, requests.Load())
		}
	}
}

// A name that resolves to a non-public address, alone or among public
// ones, is refused at registration and on delivery; so is each non-public
// address written in the URL itself, IPv6 and IPv4-mapped included.
func TestNonPublicHostsAreRefused(t *testing.T) {
	res := newResolver(map[string][][]netip.Addr{
		"internal.example.com":  {addrs("10.0.0.5")},
		"metadata.example.com":  {addrs("169.254.169.254")},
		"mixed.example.com":     {addrs("93.184.215.14", "192.168.0.10")},
		"v6local.example.com":   {addrs("fd00:ec2::254")},
		"mapped.example.com":    {addrs("::ffff:127.0.0.1")},
		"nat64.example.com":     {addrs("64:ff9b::a9fe:a9fe")},
		"cgnat.example.com":     {addrs("100.100.100.200")},
		"localhost.example.com": {addrs("127.0.0.1", "::1")},
	})
	c := webhook.NewClient(webhook.Options{Resolver: res})
	for _, url := range []string{
		"https://internal.example.com/", "https://metadata.example.com/latest", "https://mixed.example.com/",
		"https://v6local.example.com/", "https://mapped.example.com/", "https://nat64.example.com/",
		"https://cgnat.example.com/", "https://localhost.example.com/",
		"https://127.0.0.1/", "https://169.254.169.254/", "https://[::1]/", "https://[::ffff:169.254.169.254]/",
		"https://[fe80::1%25eth0]/", "https://[fd00:ec2::254]/", "https://0.0.0.0/", "https://10.1.1.1:8443/",
	} {
		if err := c.CheckURL(t.Context(), url); !errors.Is(err, webhook.ErrNotPublic) || !errors.Is(err, webhook.ErrURL) {
			t.Errorf("registering %s: %v, want refused as non-public", url, err)
		}
		if _, err := c.Post(t.Context(), url, nil, nil); !errors.Is(err, webhook.ErrNotPublic) {
			t.Errorf("delivering to %s: %v, want refused as non-public", url, err)
		}
	}
}

// What registration refuses before any lookup, and that a public host
// passes it.
func TestCheckURL(t *testing.T) {
	res := newResolver(map[string][][]netip.Addr{"hooks.example.com": {addrs("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")}})
	c := webhook.NewClient(webhook.Options{Resolver: res})
	if err := c.CheckURL(t.Context(), "https://hooks.example.com/a?b=c"); err != nil {
		t.Errorf("a public host: %v", err)
	}
	long := "https://hooks.example.com/" + strings.Repeat("a", webhook.MaxURLLength)
	for _, url := range []string{
		"http://hooks.example.com/", "ftp://hooks.example.com/", "hooks.example.com/x", "/relative",
		"https://", "https:///path", "https:hooks.example.com", "https://hooks.example.com:0/",
		"https://hooks.example.com:99999/", "https://nowhere.example.com/", long, "",
		"http://127.0.0.1:8080/", "http://localhost:8080/",
	} {
		if err := c.CheckURL(t.Context(), url); !errors.Is(err, webhook.ErrURL) {
			t.Errorf("%q: %v, want refused", url, err)
		}
	}
}

// Only under make run, http:// and https:// to 127.0.0.1 or localhost
// reach a local receiver; any other loopback address or name still does
// not, nor does plain http to any other host.
func TestAllowLoopbackAdmitsTheLocalReceiverOnly(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := newResolver(map[string][][]netip.Addr{
		"localhost":       {addrs("10.0.0.1")}, // never asked: localhost is 127.0.0.1, not what DNS says
		"local.test":      {{loopback}},
		"hooks.local.dev": {addrs("93.184.215.14")},
	})
	c := webhook.NewClient(webhook.Options{Resolver: res, AllowLoopback: true})
	for _, url := range []string{"http://127.0.0.1:" + port + "/hook", "http://localhost:" + port + "/hook", "http://LocalHost:" + port + "/"} {
		if err := c.CheckURL(t.Context(), url); err != nil {
			t.Errorf("registering %s: %v", url, err)
		}
		if resp, err := c.Post(t.Context(), url, nil, nil); err != nil || resp.Status != http.StatusOK {
			t.Errorf("delivering to %s: %v, %+v", url, err, resp)
		}
	}
	for _, url := range []string{
		"http://127.0.0.2:" + port + "/", "http://[::1]:" + port + "/", "https://local.test:" + port + "/",
		"http://local.test:" + port + "/", "http://hooks.local.dev/", "https://10.0.0.1/",
	} {
		if err := c.CheckURL(t.Context(), url); err == nil {
			t.Errorf("registering %s passed", url)
		}
		if _, err := c.Post(t.Context(), url, nil, nil); err == nil {
			t.Errorf("delivering to %s passed", url)
		}
	}
	if requests.Load() != 3 || res.count("localhost") != 0 {
		t.Errorf("%d requests, %d lookups of localhost: want 3 and 0", requests.Load(), res.count("localhost"))
	}
	strict := webhook.NewClient(webhook.Options{Resolver: res})
	if _, err := strict.Post(t.Context(), "http://127.0.0.1:"+port+"/", nil, nil); !errors.Is(err, webhook.ErrURL) {
		t.Errorf("without AllowLoopback: %v, want refused", err)
	}
	if _, err := strict.Post(t.Context(), "https://localhost:"+port+"/", nil, nil); !errors.Is(err, webhook.ErrURL) {
		t.Errorf("without AllowLoopback, https://localhost: %v, want refused", err)
	}
}

// At most MaxResponseBytes of an answer are read, however much is sent.
func TestPostReadsAFewKBOfTheAnswer(t *testing.T) {
	_, port, _, tlsConfig := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 64 { // 4 MiB, or until the client hangs up
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	res := newResolver(map[string][][]netip.Addr{"hooks.example.com": {{loopback}}})
	c := webhook.NewClientTreatingAsPublic(webhook.Options{Resolver: res, TLS: tlsConfig}, loopback)
	resp, err := c.Post(t.Context(), "https://hooks.example.com:"+port+"/", nil, nil)
	if err != nil || resp.Status != http.StatusAccepted || len(resp.Body) != webhook.MaxResponseBytes {
		t.Errorf("%v: status %d, %d bytes kept", err, resp.Status, len(resp.Body))
	}
}

// An attempt ends at the client's timeout when the receiver never
// answers (the test's timeout is short; a deployment's is 10 s).
func TestPostGivesUpAtTheTimeout(t *testing.T) {
	release := make(chan struct{})
	_, port, _, tlsConfig := receiver(t, func(http.ResponseWriter, *http.Request) {
		<-release // answers only once the client has given up
	})
	defer close(release)
	res := newResolver(map[string][][]netip.Addr{"hooks.example.com": {{loopback}}})
	c := webhook.NewClientTreatingAsPublic(webhook.Options{Resolver: res, TLS: tlsConfig, Timeout: 100 * time.Millisecond}, loopback)
	resp, err := c.Post(t.Context(), "https://hooks.example.com:"+port+"/", nil, nil)
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("%v %+v, want a timeout", err, resp)
	}
}

// Each attempt of one event is signed when it is made: the receiver sees
// the same webhook-id with the attempt's own timestamp, and the
// specification's verifier takes both.
func TestDeliverSignsEachAttemptAtItsTime(t *testing.T) {
	key, secret := webhook.NewSecret()
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ids, stamps []string
	_, port, _, tlsConfig := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.VerifyIgnoringTimestamp(body, r.Header); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		stamps = append(stamps, r.Header.Get("webhook-timestamp"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	now := time.Unix(1_800_000_000, 0)
	res := newResolver(map[string][][]netip.Addr{"hooks.example.com": {{loopback}}})
	c := webhook.NewClientTreatingAsPublic(webhook.Options{Resolver: res, TLS: tlsConfig, Now: func() time.Time { return now }}, loopback)
	a := webhook.Attempt{URL: "https://hooks.example.com:" + port + "/", Key: key, MsgID: webhook.NewMessageID(), Body: []byte(`{"type":"webhook.test"}`)}
	for range 2 {
		resp, err := c.Deliver(t.Context(), a)
		if err != nil || !resp.OK() {
			t.Fatalf("%v, %+v", err, resp)
		}
		now = now.Add(5 * time.Second)
	}
	if len(ids) != 2 || ids[0] != a.MsgID || ids[1] != a.MsgID || stamps[0] != "1800000000" || stamps[1] != "1800000005" {
		t.Errorf("ids %v, timestamps %v", ids, stamps)
	}
}

func TestResponseOK(t *testing.T) {
	for status, want := range map[int]bool{199: false, 200: true, 204: true, 299: true, 300: false, 302: false, 404: false, 500: false} {
		if got := (webhook.Response{Status: status}).OK(); got != want {
			t.Errorf("%d: %v", status, got)
		}
	}
}
