package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	// MaxURLLength is the longest endpoint URL accepted.
	MaxURLLength = 2048
	// DefaultTimeout bounds one attempt, from dialing to the last byte read.
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes is how much of a receiver's answer is read: the
	// status decides, the body is only kept for the delivery's record.
	MaxResponseBytes = 4 << 10
)

// ErrURL is an endpoint URL that is never called; its message says why
// in words fit for a 422.
var ErrURL = errors.New("webhook: URL refused")

// Resolver looks up a host's addresses; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Client; the zero value is a deployment's client.
type Options struct {
	// AllowLoopback also lets http:// and https:// URLs whose host is
	// literally 127.0.0.1 or localhost reach 127.0.0.1, and nothing else.
	// For a receiver on the developer's machine under make run: only the
	// local stack sets it (from WEBHOOKS_ALLOW_LOOPBACK=1), no function
	// reads it.
	AllowLoopback bool
	// Resolver is net.DefaultResolver when nil.
	Resolver Resolver
	// Timeout is DefaultTimeout when zero.
	Timeout time.Duration
	// TLS is the TLS configuration; nil means the system's roots. The
	// server name is always the URL's host.
	TLS *tls.Config
	// Now is the clock Deliver signs by; time.Now when nil.
	Now func() time.Time
}

// Client posts webhook deliveries to public addresses only.
type Client struct {
	opts   Options
	http   *http.Client
	public func(netip.Addr) error // CheckPublic; tests widen it
}

// NewClient returns a client that resolves each URL's host itself on
// every attempt, refuses the attempt if any address is not public,
// connects to exactly the address it checked, follows no redirect and uses no proxy.
func NewClient(opts Options) *Client {
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Client{opts: opts, public: CheckPublic}
	c.http = &http.Client{
		Transport: &http.Transport{
			Proxy:           nil, // a proxy would connect where we did not check
			DialContext:     c.dial,
			TLSClientConfig: opts.TLS,
			// A new connection for each attempt, so each attempt resolves
			// and checks the host again.
			DisableKeepAlives:      true,
			DisableCompression:     true,
			MaxResponseHeaderBytes: 16 << 10,
		},
		Timeout: opts.Timeout,
		// A redirect is an answer, not a success: never followed, so it
		// cannot lead anywhere the URL's check did not cover.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Response is a receiver's answer: 2xx is success.
type Response struct {
	Status int
	Body   []byte // at most MaxResponseBytes
}

// Attempt is one try at delivering an event to an endpoint.
type Attempt struct {
	URL string
	// Key is the endpoint's signing key (NewSecret's).
	Key []byte
	// Previous are the keys a rotation replaced that still sign, newest
	// first, after Key (Sign).
	Previous [][]byte
	// MsgID is the event's webhook-id, the same on every attempt.
	MsgID string
	Body  []byte
}

// Deliver signs a at this moment, so each attempt carries its own
// webhook-timestamp, and posts it. The answer is a success when it is 2xx.
func (c *Client) Deliver(ctx context.Context, a Attempt) (Response, error) {
	h, err := Sign(a.Key, a.MsgID, c.opts.Now(), a.Body, a.Previous...)
	if err != nil {
		return Response{}, err
	}
	return c.Post(ctx, a.URL, h, a.Body)
}

// OK says whether the receiver took the delivery: any 2xx.
func (r Response) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Post delivers body with header (Sign's) to rawURL. An error means no
// answer: the URL or its addresses were refused (errors.Is ErrURL or
// ErrNotPublic), or the connection failed or timed out. It never holds
// the URL: net/http's names it whole, the query (where a receiver may
// keep a token) and user name included, and an error is logged.
func (c *Client) Post(ctx context.Context, rawURL string, header http.Header, body []byte) (Response, error) {
	u, err := c.parse(rawURL)
	if err != nil {
		return Response{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if header != nil {
		req.Header = header.Clone()
	}
	req.Header.Set("User-Agent", "contentapi-webhooks/1")
	resp, err := c.http.Do(req)
	var withURL *url.Error
	if errors.As(err, &withURL) {
		err = withURL.Err
	}
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	// A body that is slow or cut short after the status line does not
	// change the answer: the status decides.
	got, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	return Response{Status: resp.StatusCode, Body: got}, nil
}

// Host is the host of an endpoint's URL, as a log names it beside the
// endpoint's id: never its path, query or user information, where a
// receiver may keep a secret. "" when the URL does not parse.
func Host(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// CheckURL is the check at registration: the URL as Post would accept it,
// and its host resolving to public addresses only (or, with
// AllowLoopback, being 127.0.0.1 or localhost).
func (c *Client) CheckURL(ctx context.Context, rawURL string) error {
	u, err := c.parse(rawURL)
	if err != nil {
		return err
	}
	_, err = c.vet(ctx, u.Hostname())
	return err
}

// parse accepts an absolute https URL with a host, of at most
// MaxURLLength characters (or, with AllowLoopback, http to a loopback
// host).
func (c *Client) parse(rawURL string) (*url.URL, error) {
	if len(rawURL) > MaxURLLength {
		return nil, fmt.Errorf("%w: must be at most %d characters", ErrURL, MaxURLLength)
	}
	u, err := url.Parse(rawURL)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: must be an absolute https:// URL with a host", ErrURL)
	}
	if u.Port() != "" {
		if p, err := strconv.ParseUint(u.Port(), 10, 16); err != nil || p == 0 {
			return nil, fmt.Errorf("%w: the port must be 1 to 65535", ErrURL)
		}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && c.loopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("%w: must be an https:// URL", ErrURL)
	}
	return u, nil
}

// loopback says whether host is the local receiver AllowLoopback admits.
func (c *Client) loopback(host string) bool {
	return c.opts.AllowLoopback && (host == "127.0.0.1" || strings.EqualFold(host, "localhost"))
}

// vet returns the addresses to connect to for host, all of them checked:
// one non-public address refuses the host, whatever the others are, since
// which one a resolver answers first is the attacker's choice.
func (c *Client) vet(ctx context.Context, host string) ([]netip.Addr, error) {
	if c.loopback(host) {
		// localhost is 127.0.0.1 here, whatever a resolver says.
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = c.opts.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return nil, fmt.Errorf("%w: the host %q does not resolve", ErrURL, host)
		}
	}
	for i, a := range addrs {
		if err := c.public(a); err != nil {
			return nil, fmt.Errorf("%w: the host %q resolves to a non-public address (%w)", ErrURL, host, err)
		}
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// dial is the transport's only way out: it connects to an address vet
// returned, as an IP literal, never to the name, so what was checked is
// what is connected to.
func (c *Client) dial(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: bad port %q", ErrURL, portText)
	}
	addrs, err := c.vet(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}
