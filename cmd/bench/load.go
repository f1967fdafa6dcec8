package main

import (
	"bytes"
	"context"
	"encoding/json"
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

	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
)

// loadResult is what the load run saw.
type loadResult struct {
	Clients, Requests, Errors int
	Elapsed, P50, P99         time.Duration
	Kinds                     []*kindStats // in the order of loadMix
	FirstErrors               []string
	SeedTime                  time.Duration
	// CPU seconds used during the run by the gateway and by its DynamoDB
	// Local (its child processes).
	CPUGateway, CPUDynamoDB float64
}

type kindStats struct {
	Kind      string
	N, Errors int
	Latencies []time.Duration
}

// measureLoad runs the local gateway (cmd/local, built) as a subprocess on
// its own DynamoDB Local, seeds the same account there, and drives it with
// concurrent clients: requests/s, p99 latency, errors and the gateway's
// peak RSS.
func measureLoad(ctx context.Context, b *board, a *artifacts, tmpl *sam.Template, root string, o options, rep *report) error {
	missing := func(why string) {
		b.missing(why, "rps_local", "ms_p99_local", "errors_local", "mb_rss_local")
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

	db, err := ddblocal.NewClient(ctx, g.dynamoDB)
	if err != nil {
		return err
	}
	tables := map[string]string{}
	for _, id := range tmpl.ResourcesOfType(sam.TableType) {
		tables[id] = id // the local stack names tables by logical ID
	}
	s, key, seedTime, err := seedAccount(ctx, db, tables)
	if err != nil {
		missing(fmt.Sprintf("seeding the gateway's DynamoDB Local: %v", err))
		return nil
	}
	logf("load: %d clients for %s through %s", o.clients, o.duration, g.api)
	gateway0, dynamoDB0 := g.cpuSeconds()
	res := drive(ctx, g.api, key, s, o.clients, o.duration)
	gateway1, dynamoDB1 := g.cpuSeconds()
	res.CPUGateway, res.CPUDynamoDB = gateway1-gateway0, dynamoDB1-dynamoDB0
	res.SeedTime = seedTime
	rep.Load = res
	// VmHWM: the gateway's peak resident memory.
	var rssKB float64
	if _, err := fmt.Sscan(strings.TrimSuffix(procField(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid), "VmHWM:"), " kB"), &rssKB); err != nil {
		logf("load: could not read the gateway's VmHWM")
	}
	b.add(Figure{Name: "rps_local", Value: float64(res.Requests) / res.Elapsed.Seconds(), Unit: "rps"})
	b.add(Figure{Name: "ms_p99_local", Value: float64(res.P99.Microseconds()) / 1000, Unit: "ms"})
	b.add(Figure{Name: "errors_local", Value: float64(res.Errors), Unit: "errors"})
	b.add(Figure{Name: "mb_rss_local", Value: rssKB / 1024, Unit: "MB"})
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
// developer's .data/dynamodb, on free ports. env overrides its environment.
func startGateway(ctx context.Context, binary, root string, env ...string) (*gateway, error) {
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
	cmd.Env = append(cmd.Env, env...)
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

// cpuSeconds is the CPU time used so far by the gateway and by its child
// processes (DynamoDB Local's JVM), from /proc/<pid>/stat.
func (g *gateway) cpuSeconds() (gateway, children float64) {
	pid := g.cmd.Process.Pid
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		// utime and stime are the 14th and 15th fields of the line, in
		// clock ticks (USER_HZ).
		f := procStat(e.Name())
		if len(f) < 13 {
			continue
		}
		user, _ := strconv.ParseFloat(f[11], 64)
		sys, _ := strconv.ParseFloat(f[12], 64)
		switch cpu := (user + sys) / 100; {
		case e.Name() == strconv.Itoa(pid):
			gateway += cpu
		case f[1] == strconv.Itoa(pid):
			children += cpu
		}
	}
	return gateway, children
}

// procStat is the fields of /proc/<pid>/stat after the command name:
// state, ppid, ...; nil if there is no such process.
func procStat(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// The load mix, in percent of requests: 70% reads, 30% writes of the
// client's own records.
type loadShare struct {
	Kind    string
	Percent int
}

var loadMix = []loadShare{
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

	res := &loadResult{Clients: clients}
	byKind := map[string]*kindStats{}
	for _, m := range loadMix {
		byKind[m.Kind] = &kindStats{Kind: m.Kind}
		res.Kinds = append(res.Kinds, byKind[m.Kind])
	}
	var mu sync.Mutex
	record := func(kind string, lat time.Duration, problem string) {
		mu.Lock()
		defer mu.Unlock()
		k := byKind[kind]
		k.N++
		k.Latencies = append(k.Latencies, lat)
		res.Requests++
		if problem != "" {
			k.Errors++
			res.Errors++
			if len(res.FirstErrors) < 10 {
				res.FirstErrors = append(res.FirstErrors, kind+": "+problem)
			}
		}
	}
	call := func(method, path string, form url.Values, want int) (int64, string, time.Duration) {
		start := time.Now()
		resp, err := hc.Do(apiRequest(ctx, method, api+path, key, form))
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
			return 0, fmt.Sprintf("%s %s: %d %.160s", method, path, resp.StatusCode, bytes.TrimSpace(raw)), lat
		}
		var created struct{ Data struct{ ID int64 } }
		_ = json.Unmarshal(raw, &created)
		return created.Data.ID, "", lat
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
				method, path, form, want := "GET", "", url.Values(nil), 200
				switch kind {
				case "get":
					path = fmt.Sprintf("/api/v1/documents/%d", s.firstDocument+rng.Int64N(int64(len(s.docs))))
					if rng.IntN(2) == 1 {
						path = fmt.Sprintf("/api/v1/images/%d", s.firstImage+rng.Int64N(int64(len(s.imgs))))
					}
				case "list":
					res := []string{"documents", "images"}[rng.IntN(2)]
					path = fmt.Sprintf("/api/v1/%s?page=%d&per_page=%d", res, 1+rng.IntN(5), []int{10, 25}[rng.IntN(2)])
				case "list_filtered":
					path = "/api/v1/images?favorite=1&sort_by=name&style=" + images.Styles[rng.IntN(len(images.Styles))]
					if rng.IntN(2) == 1 {
						path = "/api/v1/documents?search=" + []string{"cafe", "launch", "zurich", "sale"}[rng.IntN(4)]
					}
				case "create":
					method, path, want = "POST", "/api/v1/documents", 201
					form = url.Values{"name": {fmt.Sprintf("Load test %d: café menu", c)}, "creativity": {"0.5"},
						"prompt": {"Write a short welcome email for new customers of our café in Zürich."}}
				case "update":
					method, path = "PUT", fmt.Sprintf("/api/v1/documents/%d", own[rng.IntN(len(own))])
					form = url.Values{"name": {fmt.Sprintf("Load test %d: renamed", c)}, "favorite": {strconv.Itoa(rng.IntN(2))}}
				case "delete":
					method, path, own = "DELETE", fmt.Sprintf("/api/v1/documents/%d", own[0]), own[1:]
				}
				id, problem, lat := call(method, path, form, want)
				if kind == "create" && problem == "" && id > 0 {
					own = append(own, id)
				}
				record(kind, lat, problem)
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	var all []time.Duration
	for _, k := range res.Kinds {
		all = append(all, k.Latencies...)
	}
	res.P50, res.P99 = percentile(all, 50), percentile(all, 99)
	return res
}

func pickKind(r int) string {
	for _, m := range loadMix {
		if r < m.Percent {
			return m.Kind
		}
		r -= m.Percent
	}
	return loadMix[0].Kind
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
