package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"contentapi/shared/images"
	"contentapi/shared/local/stack"
)

// LoadResult is what the clients saw.
type LoadResult struct {
	Clients, Requests, Errors int
	Elapsed, P50, P99         time.Duration
	Kinds                     []*LoadKind // in the order of LoadMix
	FirstErrors               []string
}

// LoadKind is what one kind of request saw.
type LoadKind struct {
	Kind      string
	N, Errors int
	Latencies []time.Duration
}

// LoadShare is one kind of request of the load, in percent of requests.
type LoadShare struct {
	Kind    string
	Percent int
}

// LoadMix is the load: 70% reads, 30% writes of the client's own records.
var LoadMix = []LoadShare{
	{"get", 38},          // GET a seeded document or image by id
	{"list", 25},         // a list page (1-5) of documents or images, id order
	{"list_filtered", 7}, // images by style+favorite in name order, or a name search of documents
	{"create", 12},       // POST a document
	{"update", 10},       // PUT name/favorite of one of the client's own documents
	{"delete", 8},        // DELETE one of the client's own documents
}

// DriveLoad runs clients concurrent clients for d against the stack at api,
// on the seeded account s, each client its own random sequence of LoadMix.
func DriveLoad(ctx context.Context, api string, s *SeededAccount, clients int, d time.Duration) *LoadResult {
	key := s.Key
	transport := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	defer transport.CloseIdleConnections()

	res := &LoadResult{Clients: clients}
	byKind := map[string]*LoadKind{}
	for _, m := range LoadMix {
		byKind[m.Kind] = &LoadKind{Kind: m.Kind}
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
		resp, err := hc.Do(stack.APIRequest(ctx, method, api+path, key, form))
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
					path = fmt.Sprintf("/api/v1/documents/%d", s.FirstDocument+rng.Int64N(int64(len(s.Docs))))
					if rng.IntN(2) == 1 {
						path = fmt.Sprintf("/api/v1/images/%d", s.FirstImage+rng.Int64N(int64(len(s.Imgs))))
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
	res.P50, res.P99 = Percentile(all, 50), Percentile(all, 99)
	return res
}

func pickKind(r int) string {
	for _, m := range LoadMix {
		if r < m.Percent {
			return m.Kind
		}
		r -= m.Percent
	}
	return LoadMix[0].Kind
}

// Percentile is the p-th percentile of ds (0 for none).
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
