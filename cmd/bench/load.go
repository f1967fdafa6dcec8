package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"contentapi/shared/auth"
	"contentapi/shared/ddblocal"
	"contentapi/shared/images"
	"contentapi/shared/sam"
)

// loadResult is what the load run saw.
type loadResult struct {
	requests, errors int
	elapsed          time.Duration
	p50, p99         time.Duration
	rssMB            float64
	byKind           map[string]*kindStats
	firstErrors      []string
	seedTime         time.Duration
	clients          int
	// CPU seconds used during the run by the gateway and by its DynamoDB
	// Local (its child processes).
	cpuGateway, cpuDynamoDB float64
}

type kindStats struct {
	n, errors int
	latencies []time.Duration
}

// measureLoad runs the local gateway (cmd/local, built) as a subprocess on
// its own DynamoDB Local, seeds the same account there, and drives it with
// concurrent clients: requests/s, p99 latency, errors and the gateway's
// peak RSS.
func measureLoad(ctx context.Context, b *board, a *artifacts, root string, o options, rep *report) error {
	missing := func(why string) {
		for _, f := range []struct{ name, unit string }{{"rps_local", "rps"}, {"ms_p99_local", "ms"}, {"errors_local", "errors"}, {"mb_rss_local", "MB"}} {
			b.add(Figure{Name: f.name, Unit: f.unit, Missing: why})
		}
		logf("load run skipped: %s", why)
	}
	if err := a.wait(ctx); err != nil {
		return err
	}
	if err := a.errs["local"]; err != nil {
		missing("the local gateway (cmd/local) does not build: " + err.Error())
		return nil
	}
	g, err := startGateway(ctx, a.gateway, root)
	if err != nil {
		missing(err.Error())
		return nil
	}
	defer g.stop()

	tmpl, err := loadTemplate()
	if err != nil {
		return err
	}
	db, err := ddblocal.NewClient(ctx, g.dynamoDB)
	if err != nil {
		return err
	}
	tables := map[string]string{}
	for _, id := range tmpl.ResourcesOfType(sam.TableType) {
		tables[id] = id // the local stack names tables by logical ID
	}
	logf("load: seeding the gateway's DynamoDB Local")
	t0 := time.Now()
	s, err := seed(ctx, db, tables, account, seedDocuments, seedImages)
	if err != nil {
		missing(fmt.Sprintf("seeding the gateway's DynamoDB Local: %v", err))
		return nil
	}
	seedTime := time.Since(t0)
	key, _, err := auth.NewKeys(db, tables["ApiKeysTable"], auth.PublicChecksum).Create(ctx, account, []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		return err
	}
	logf("load: %d clients for %s through %s", o.clients, o.duration, g.api)
	cpu0 := g.cpuSeconds()
	res := drive(ctx, g.api, key, s, o.clients, o.duration)
	cpu1 := g.cpuSeconds()
	res.cpuGateway, res.cpuDynamoDB = cpu1[0]-cpu0[0], cpu1[1]-cpu0[1]
	res.seedTime = seedTime
	res.rssMB = g.peakRSS()
	if res.rssMB == 0 {
		logf("load: could not read the gateway's VmHWM")
	}
	rep.load = res
	rep.gatewayLog = g.out.String()
	b.add(Figure{Name: "rps_local", Value: float64(res.requests) / res.elapsed.Seconds(), Unit: "rps"})
	b.add(Figure{Name: "ms_p99_local", Value: float64(res.p99.Microseconds()) / 1000, Unit: "ms"})
	b.add(Figure{Name: "errors_local", Value: float64(res.errors), Unit: "errors"})
	b.add(Figure{Name: "mb_rss_local", Value: res.rssMB, Unit: "MB"})
	return nil
}

// gateway is the running local stack.
type gateway struct {
	cmd      *exec.Cmd
	api      string // http://127.0.0.1:port
	dynamoDB string // its DynamoDB Local
	dir      string
	out      *ddblocal.Tail
	exited   chan struct{}
}

// startGateway runs `local serve` in a scratch directory holding a copy of
// template.yaml, so its DynamoDB Local keeps its data there and not in the
// developer's .data/dynamodb, on free ports.
func startGateway(ctx context.Context, binary, root string) (*gateway, error) {
	// In memory where there is a tmpfs: DynamoDB Local's database on disk
	// makes seeding several times slower.
	parent := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "contentapi-bench-gateway-")
	if err != nil {
		return nil, err
	}
	tmpl, err := os.ReadFile(filepath.Join(root, sam.FileName))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, sam.FileName), tmpl, 0o644); err != nil {
		return nil, err
	}
	jar, err := ddblocal.JarPath()
	if err != nil {
		return nil, err
	}
	apiPort, err := ddblocal.FreePort()
	if err != nil {
		return nil, err
	}
	ddbPort, err := ddblocal.FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PORT="+strconv.Itoa(apiPort),
		"DYNAMODB_PORT="+strconv.Itoa(ddbPort),
		ddblocal.JarEnv+"="+jar,
		// One key drives all the clients: a per-key limit would only
		// measure the limiter's 429s. Set high rather than off, so a
		// limiter, when there is one, still does its work per request.
		"RATE_LIMIT_PER_MINUTE=100000000",
		// The 8 s request deadline and 10 s function timeout protect a
		// Lambda deployment from a slow DynamoDB. Here DynamoDB Local's JVM
		// is the bottleneck (see Raw output), and at the defaults a few
		// requests queued behind it became 503s; errors_local counts the
		// service's failures, and ms_p99_local still shows the queueing.
		"REQUEST_TIMEOUT_SECONDS=60",
		"FUNCTION_TIMEOUT=60s",
	)
	g := &gateway{cmd: cmd, api: "http://127.0.0.1:" + strconv.Itoa(apiPort),
		dynamoDB: "http://127.0.0.1:" + strconv.Itoa(ddbPort), dir: dir,
		out: ddblocal.NewTail(64 << 10), exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = g.out, g.out
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(g.exited) }()
	deadline := time.After(2 * time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(apiPort), time.Second); err == nil {
			c.Close()
			if strings.Contains(g.out.String(), "Local API") {
				return g, nil
			}
		}
		select {
		case <-g.exited:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("the local gateway exited before serving:\n%s", tailOf(g.out.String(), 3000))
		case <-deadline:
			g.stop()
			return nil, fmt.Errorf("the local gateway did not serve within 2 minutes:\n%s", tailOf(g.out.String(), 3000))
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop interrupts the gateway, which stops its DynamoDB Local, and kills it
// if it takes too long.
func (g *gateway) stop() {
	select {
	case <-g.exited:
	default:
		_ = g.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-g.exited:
		case <-time.After(20 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.exited
		}
	}
	os.RemoveAll(g.dir)
}

// peakRSS is the gateway process's VmHWM, in MB.
func (g *gateway) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// cpuSeconds is the CPU time used so far by the gateway and by its child
// processes (DynamoDB Local's JVM).
func (g *gateway) cpuSeconds() [2]float64 {
	pid := g.cmd.Process.Pid
	var out [2]float64
	out[0] = procCPU(pid)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if ppid, ok := procParent(child); ok && ppid == pid {
			out[1] += procCPU(child)
		}
	}
	return out
}

// procStat returns the fields of /proc/<pid>/stat after the command name.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Fields(s)
}

// clockTicks is Linux's USER_HZ, what /proc/<pid>/stat counts in.
const clockTicks = 100

func procCPU(pid int) float64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	// Fields 14 and 15 of stat (utime, stime); f starts at field 3.
	user, _ := strconv.ParseFloat(f[11], 64)
	sys, _ := strconv.ParseFloat(f[12], 64)
	return (user + sys) / clockTicks
}

func procParent(pid int) (int, bool) {
	f := procStat(pid)
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// The load mix, in percent of requests: 70% reads, 30% writes of the
// client's own records.
var loadMix = []struct {
	kind    string
	percent int
}{
	{"get", 38},          // GET a seeded document or image by id
	{"list", 25},         // a list page (1-5) of documents or images, id order
	{"list_filtered", 7}, // images by style+favorite in name order, or a name search of documents
	{"create", 12},       // POST a document
	{"update", 10},       // PUT name/favorite of one of the client's own documents
	{"delete", 8},        // DELETE one of the client's own documents
}

// drive runs clients concurrent clients for d against the gateway at api.
func drive(ctx context.Context, api, key string, s *seeded, clients int, d time.Duration) *loadResult {
	transport := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	defer transport.CloseIdleConnections()

	res := &loadResult{byKind: map[string]*kindStats{}, clients: clients}
	for _, m := range loadMix {
		res.byKind[m.kind] = &kindStats{}
	}
	var mu sync.Mutex
	record := func(kind string, lat time.Duration, problem string) {
		mu.Lock()
		defer mu.Unlock()
		k := res.byKind[kind]
		k.n++
		k.latencies = append(k.latencies, lat)
		res.requests++
		if problem != "" {
			k.errors++
			res.errors++
			if len(res.firstErrors) < 10 {
				res.firstErrors = append(res.firstErrors, kind+": "+problem)
			}
		}
	}
	call := func(method, path string, form url.Values, want int) (int64, string, time.Duration) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequestWithContext(ctx, method, api+path, body)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err.Error(), time.Since(start)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat := time.Since(start)
		if err != nil {
			return 0, err.Error(), lat
		}
		if resp.StatusCode != want {
			return 0, fmt.Sprintf("%s %s: %d %.160s", method, path, resp.StatusCode, raw), lat
		}
		var id int64
		if want == http.StatusCreated {
			if i := strings.Index(string(raw), `"id":`); i >= 0 {
				rest := string(raw[i+5:])
				end := strings.IndexAny(rest, ",}")
				id, _ = strconv.ParseInt(rest[:end], 10, 64)
			}
		}
		return id, "", lat
	}

	stopAt := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 42))
			var own []int64
			for time.Now().Before(stopAt) && ctx.Err() == nil {
				kind := pickKind(rng.IntN(100))
				if (kind == "update" || kind == "delete") && len(own) == 0 {
					kind = "create"
				}
				var problem string
				var lat time.Duration
				switch kind {
				case "get":
					if rng.IntN(2) == 0 {
						_, problem, lat = call("GET", fmt.Sprintf("/api/v1/documents/%d", s.firstDocument+rng.Int64N(int64(len(s.docs)))), nil, 200)
					} else {
						_, problem, lat = call("GET", fmt.Sprintf("/api/v1/images/%d", s.firstImage+rng.Int64N(int64(len(s.imgs)))), nil, 200)
					}
				case "list":
					res := []string{"documents", "images"}[rng.IntN(2)]
					_, problem, lat = call("GET", fmt.Sprintf("/api/v1/%s?page=%d&per_page=%d", res, 1+rng.IntN(5), []int{10, 25}[rng.IntN(2)]), nil, 200)
				case "list_filtered":
					if rng.IntN(2) == 0 {
						_, problem, lat = call("GET", "/api/v1/images?favorite=1&sort_by=name&style="+images.Styles[rng.IntN(len(images.Styles))], nil, 200)
					} else {
						_, problem, lat = call("GET", "/api/v1/documents?search="+[]string{"cafe", "launch", "zurich", "sale"}[rng.IntN(4)], nil, 200)
					}
				case "create":
					var id int64
					id, problem, lat = call("POST", "/api/v1/documents", url.Values{
						"name":       {fmt.Sprintf("Load test %d: café menu", c)},
						"prompt":     {"Write a short welcome email for new customers of our café in Zürich."},
						"creativity": {"0.5"},
					}, 201)
					if problem == "" && id > 0 {
						own = append(own, id)
					}
				case "update":
					id := own[rng.IntN(len(own))]
					_, problem, lat = call("PUT", fmt.Sprintf("/api/v1/documents/%d", id), url.Values{
						"name": {fmt.Sprintf("Load test %d: renamed", c)}, "favorite": {strconv.Itoa(rng.IntN(2))},
					}, 200)
				case "delete":
					id := own[0]
					own = own[1:]
					_, problem, lat = call("DELETE", fmt.Sprintf("/api/v1/documents/%d", id), nil, 200)
				}
				record(kind, lat, problem)
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	var all []time.Duration
	for _, k := range res.byKind {
		all = append(all, k.latencies...)
	}
	res.p50, res.p99 = percentile(all, 50), percentile(all, 99)
	return res
}

func pickKind(r int) string {
	for _, m := range loadMix {
		if r < m.percent {
			return m.kind
		}
		r -= m.percent
	}
	return loadMix[0].kind
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
