// Command chaos is the fault-injection soak (make chaos): clients create
// and delete with Idempotency-Keys and retry as a careful client does,
// while the local stack's DynamoDB Local is paused twice; then it holds
// what the clients were told against what DynamoDB Local holds. It prints
// its figures as make bench does,
//
//	bench: <name> <value> <unit>
//
// and writes them, with how they were made, into their own section of
// BENCHMARKS.md, which make bench keeps.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/template"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
	"contentapi/shared/store"
)

func main() {
	out := flag.String("o", "BENCHMARKS.md", "report whose section to write, relative to the module root unless absolute (\"\" for none)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *out); err != nil {
		fmt.Fprintln(os.Stderr, "[chaos] error:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[chaos] "+format+"\n", args...)
}

// The soak's shape.
const (
	chaosClients  = 16
	chaosDuration = 60 * time.Second
	chaosAccount  = "chaos"
	// chaosAttempts bounds one request's tries; chaosGrace how long the
	// clients may go on retrying after the run, to finish what they began.
	chaosAttempts = 40
	chaosGrace    = 45 * time.Second
	// The deployed settings the soak runs with: the request deadline and
	// the function timeout of template.yaml.
	chaosRequestTimeout  = "8"
	chaosFunctionTimeout = "10s"
	// maxSettle is docs/api.md's bound: a total is exact again this long after
	// a fault, whether or not the account writes.
	maxSettle = 5 * time.Minute
)

// chaosPauses are when DynamoDB Local is stopped, from the start, and for
// how long.
var chaosPauses = []struct{ At, For time.Duration }{{10 * time.Second, 4 * time.Second}, {28 * time.Second, 12 * time.Second}}

//go:embed chaos.md.tmpl
var chaosTemplate string

// chaosResult is what the soak saw.
type chaosResult struct {
	Started                                           time.Time
	Clients                                           int
	Duration                                          time.Duration
	Requests, Creates, Deletes, Acknowledged, Deleted int64
	Status                                            map[int]int64
	TransportErrors, GaveUp, PlatformErrors           int64
	Duplicates, Lost, Undeleted                       int
	Stored                                            int
	Total                                             int64
	TotalsAgree                                       bool
	Recovery                                          []time.Duration
	// Exact is how long after the last pause ended the totals were exact
	// and nothing was left open, with no write after the load.
	Exact   time.Duration
	Pauses  []string
	Machine string
}

// chaosClient is one client's view: the keys it used and what it was told.
type chaosClient struct {
	id      int
	api     string
	key     string
	hc      *http.Client
	rng     *rand.Rand
	res     *chaosResult
	mu      *sync.Mutex
	live    []int64          // records it was told it created and has not deleted
	created map[string]int64 // key -> id, for every acknowledged create
	deleted map[int64]bool   // ids whose delete was acknowledged
	tried   []string         // every create key, answered or not
	success *atomic.Int64    // Unix nanos of the last 2xx anyone got
}

func run(ctx context.Context, out string) error {
	tmplPath, err := sam.Find()
	if err != nil {
		return err
	}
	root := filepath.Dir(tmplPath)
	work, err := os.MkdirTemp("", "contentapi-chaos-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	logf("building the local stack")
	binary := filepath.Join(work, "local")
	if err := stack.BuildProcess(ctx, root, binary); err != nil {
		return err
	}
	g, err := stack.StartProcess(ctx, binary, root, "REQUEST_TIMEOUT_SECONDS="+chaosRequestTimeout, "FUNCTION_TIMEOUT="+chaosFunctionTimeout,
		// All clients share one key: the limiter's 429s are not what
		// the soak is about.
		"RATE_LIMIT_PER_MINUTE=100000000")
	if err != nil {
		return err
	}
	defer g.Stop()
	java := g.Children()
	if len(java) != 1 {
		return fmt.Errorf("the local stack runs %d child processes, want its one DynamoDB Local", len(java))
	}
	db, err := ddblocal.NewClient(ctx, g.DynamoDB)
	if err != nil {
		return err
	}
	key, _, err := auth.NewKeys(db, "ApiKeysTable", auth.PublicChecksum).Create(ctx, chaosAccount, []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		return err
	}

	res := &chaosResult{Started: time.Now(), Clients: chaosClients, Duration: chaosDuration, Status: map[int]int64{}, Machine: bench.Machine()}
	var success atomic.Int64
	var mu sync.Mutex
	clients := make([]*chaosClient, chaosClients)
	for i := range clients {
		clients[i] = &chaosClient{id: i, api: g.API, key: key, rng: rand.New(rand.NewPCG(uint64(i), 17)), res: res, mu: &mu,
			created: map[string]int64{}, deleted: map[int64]bool{}, success: &success,
			// Longer than the function's timeout: the answer, whatever it
			// is, comes from the stack, not from this client giving up.
			hc: &http.Client{Timeout: 20 * time.Second}}
	}
	logf("%d clients for %s; DynamoDB Local (pid %d) paused %v", chaosClients, chaosDuration, java[0], chaosPauses)
	stopAt := time.Now().Add(chaosDuration)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.run(ctx, stopAt) })
	}
	start := time.Now()
	var lastFault time.Time
	for _, p := range chaosPauses {
		select {
		case <-time.After(time.Until(start.Add(p.At))):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := syscall.Kill(java[0], syscall.SIGSTOP); err != nil {
			return err
		}
		time.Sleep(p.For)
		if err := syscall.Kill(java[0], syscall.SIGCONT); err != nil {
			return err
		}
		resumed := time.Now()
		lastFault = resumed
		res.Pauses = append(res.Pauses, fmt.Sprintf("%s for %s", p.At, p.For))
		for success.Load() < resumed.UnixNano() && time.Since(resumed) < time.Minute {
			time.Sleep(20 * time.Millisecond)
		}
		res.Recovery = append(res.Recovery, time.Unix(0, success.Load()).Sub(resumed))
	}
	wg.Wait()

	// Nothing is written any more. What the outage left half done is
	// settled by the tally's sweep on the template's schedule, once older
	// than the settling horizon; deletes' counts come down from the stream.
	if err := waitExact(ctx, db, g.DynamoDB, clients[0]); err != nil {
		return err
	}
	res.Exact = time.Since(lastFault)
	if err := res.check(ctx, db, clients); err != nil {
		return err
	}
	b := &bench.Board{}
	b.Add(bench.Figure{Name: "duplicates_chaos", Value: float64(res.Duplicates), Unit: "records"})
	b.Add(bench.Figure{Name: "platform_500s_chaos", Value: float64(res.PlatformErrors), Unit: "answers"})
	b.Add(bench.Figure{Name: "lost_records_chaos", Value: float64(res.Lost), Unit: "records"})
	b.Add(bench.Figure{Name: "totals_agree_chaos", Value: map[bool]float64{true: 1}[res.TotalsAgree], Unit: "bool"})
	var worst time.Duration
	for _, r := range res.Recovery {
		worst = max(worst, r)
	}
	b.Add(bench.Figure{Name: "recovery_s_chaos", Value: worst.Seconds(), Unit: "s"})
	b.Add(bench.Figure{Name: "s_totals_exact_after_outage", Value: res.Exact.Round(time.Second).Seconds(), Unit: "s"})
	b.Add(bench.Figure{Name: "undeleted_chaos", Value: float64(res.Undeleted), Unit: "records"})
	b.Add(bench.Figure{Name: "acknowledged_creates_chaos", Value: float64(res.Acknowledged), Unit: "creates"})
	b.Add(bench.Figure{Name: "requests_chaos", Value: float64(res.Requests), Unit: "requests"})
	if out != "" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(root, out)
		}
		if err := res.write(out, b); err != nil {
			return err
		}
	}
	if res.Exact > maxSettle {
		return fmt.Errorf("chaos: totals exact %v after the outage, past docs/api.md's %v", res.Exact.Round(time.Second), maxSettle)
	}
	return nil
}

// run creates and deletes until stopAt, each write with a key of its own,
// retried with that key until it has an answer that is not "retry".
func (c *chaosClient) run(ctx context.Context, stopAt time.Time) {
	for n := 0; time.Now().Before(stopAt) && ctx.Err() == nil; n++ {
		if len(c.live) > 0 && c.rng.IntN(10) < 4 {
			id := c.live[0]
			status, _ := c.call(ctx, "DELETE", fmt.Sprintf("/api/v1/documents/%d", id), nil, fmt.Sprintf("c%02d-del-%d", c.id, id))
			c.mu.Lock()
			c.res.Deletes++
			switch status {
			case 200:
				c.live = c.live[1:]
				c.deleted[id] = true
				c.res.Deleted++
			case 404: // not ours to have deleted: the record is gone all the same
				c.live = c.live[1:]
			}
			c.mu.Unlock()
			continue
		}
		key := fmt.Sprintf("c%02d-%05d", c.id, n)
		status, id := c.call(ctx, "POST", "/api/v1/documents", url.Values{"name": {"chaos " + key}, "prompt": {"p"}}, key)
		c.mu.Lock()
		c.res.Creates++
		c.tried = append(c.tried, key)
		if status == 201 && id > 0 {
			c.created[key] = id
			c.live = append(c.live, id)
			c.res.Acknowledged++
		}
		c.mu.Unlock()
	}
}

// call sends one write with its Idempotency-Key as a careful client does:
// it retries lost connections, 5xx and 409 with the same key, after
// Retry-After when there is one, and gives up after chaosAttempts tries or
// past the grace period. It returns the final status and the record id.
func (c *chaosClient) call(ctx context.Context, method, path string, form url.Values, key string) (int, int64) {
	giveUp := time.Now().Add(chaosDuration + chaosGrace)
	for attempt := 0; attempt < chaosAttempts && time.Now().Before(giveUp); attempt++ {
		r := stack.APIRequest(ctx, method, c.api+path, c.key, form)
		r.Header.Set("Idempotency-Key", key)
		resp, err := c.hc.Do(r)
		c.mu.Lock()
		c.res.Requests++
		c.mu.Unlock()
		wait := 500 * time.Millisecond
		if err != nil {
			c.mu.Lock()
			c.res.TransportErrors++
			c.mu.Unlock()
			time.Sleep(wait)
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.mu.Lock()
		c.res.Status[resp.StatusCode]++
		// API Gateway's own 500: no JSON of ours, no request id of ours.
		if resp.StatusCode == 500 && !bytes.Contains(raw, []byte(`"status":500`)) {
			c.res.PlatformErrors++
		}
		c.mu.Unlock()
		if resp.StatusCode < 300 {
			c.success.Store(time.Now().UnixNano())
		}
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusConflict && resp.StatusCode != http.StatusTooManyRequests {
			var body struct{ Data struct{ ID int64 } }
			_ = json.Unmarshal(raw, &body)
			return resp.StatusCode, body.Data.ID
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			wait = time.Duration(s) * time.Second
		}
		time.Sleep(wait)
	}
	c.mu.Lock()
	c.res.GaveUp++
	c.mu.Unlock()
	return 0, 0
}

// waitExact returns once, with no write, the account's counter holds no
// intent, the tally has counted the last delete of the documents table's
// stream, and the list's total is the records stored: the totals are exact
// and nothing left open can change them.
func waitExact(ctx context.Context, db *dynamodb.Client, endpoint string, c *chaosClient) error {
	counted, err := tallied(ctx, db, endpoint)
	if err != nil {
		return err
	}
	for start := time.Now(); ; {
		open, err := openIntents(ctx, db)
		if err != nil {
			return err
		}
		done, err := counted()
		if err != nil {
			return err
		}
		if len(open) == 0 && done {
			total, err := listTotal(ctx, c)
			if err != nil {
				return err
			}
			_, stored, err := storedRecords(ctx, db)
			if err != nil {
				return err
			}
			if total == int64(stored) {
				return nil
			}
			logf("nothing open, yet total %d and %d records stored", total, stored)
		}
		if time.Since(start) > 2*maxSettle {
			return fmt.Errorf("chaos: totals not exact %v after the load, with %d intents open", time.Since(start).Round(time.Second), len(open))
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tallied returns a check that the tally has counted every delete the
// documents table's stream holds now: the counter's watermark of each
// shard is at its last delete.
func tallied(ctx context.Context, db *dynamodb.Client, endpoint string) (func() (bool, error), error) {
	tmpl, err := sam.LoadProject()
	if err != nil {
		return nil, err
	}
	all, err := tmpl.StreamMappings()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(m sam.StreamMapping) bool {
		return m.Function == app.TallyFunction && m.Table == "DocumentsTable"
	})
	if i < 0 {
		return nil, errors.New("chaos: the template has no tally mapping of the documents table")
	}
	filter, err := lambdalocal.ParseStreamFilter(all[i].Filters)
	if err != nil {
		return nil, err
	}
	last, err := lambdalocal.LastSequenceNumbers(ctx, db, endpoint, "DocumentsTable", func(rec events.DynamoDBEventRecord) bool {
		return filter.Match(rec) && rec.Change.Keys["account"].String() == chaosAccount
	})
	if err != nil {
		return nil, err
	}
	return func() (bool, error) {
		counter, err := chaosCounter(ctx, db)
		if err != nil {
			return false, err
		}
		for shard, seq := range last {
			if !store.Counted(counter, shard, seq) {
				return false, nil
			}
		}
		return true, nil
	}, nil
}

// chaosCounter is the soak account's counter item, read consistently.
func chaosCounter(ctx context.Context, db *dynamodb.Client) (store.Item, error) {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String("DocumentsTable"), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: chaosAccount}, "id": &types.AttributeValueMemberN{Value: "0"}},
	})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// openIntents names the counter's open count changes (store/counter.go).
func openIntents(ctx context.Context, db *dynamodb.Client) ([]string, error) {
	counter, err := chaosCounter(ctx, db)
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range counter {
		if strings.HasPrefix(name, "op_") {
			names = append(names, name)
		}
	}
	return names, nil
}

// storedRecords are the ids of the soak account's records by name, read
// from the table itself, and how many there are.
func storedRecords(ctx context.Context, db *dynamodb.Client) (map[string][]int64, int, error) {
	byName := map[string][]int64{}
	stored := 0
	p := dynamodb.NewQueryPaginator(db, &dynamodb.QueryInput{
		TableName:                 aws.String("DocumentsTable"),
		KeyConditionExpression:    aws.String("account = :a AND id > :zero"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberS{Value: chaosAccount}, ":zero": &types.AttributeValueMemberN{Value: "0"}},
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, 0, err
		}
		for _, item := range out.Items {
			if _, live := item["id_key"]; !live {
				continue // a tombstone
			}
			name, _ := item["name"].(*types.AttributeValueMemberS)
			id, _ := item["id"].(*types.AttributeValueMemberN)
			n, _ := strconv.ParseInt(id.Value, 10, 64)
			byName[name.Value] = append(byName[name.Value], n)
			stored++
		}
	}
	return byName, stored, nil
}

// listTotal is meta.total of the account's documents, as the API answers it.
func listTotal(ctx context.Context, c *chaosClient) (int64, error) {
	list, err := http.NewRequestWithContext(ctx, "GET", c.api+"/api/v1/documents", nil)
	if err != nil {
		return 0, err
	}
	list.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := c.hc.Do(list)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var page struct{ Meta struct{ Total int64 } }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return 0, errors.Join(errors.New("chaos: the list"), err)
	}
	return page.Meta.Total, nil
}

// check holds what the clients were told against what DynamoDB Local holds.
func (res *chaosResult) check(ctx context.Context, db *dynamodb.Client, clients []*chaosClient) error {
	byName, stored, err := storedRecords(ctx, db)
	if err != nil {
		return err
	}
	res.Stored = stored
	for _, c := range clients {
		for _, key := range c.tried {
			have := byName["chaos "+key]
			id, acknowledged := c.created[key]
			switch {
			case len(have) > 1:
				res.Duplicates += len(have) - 1
			case acknowledged && !c.deleted[id] && (len(have) == 0 || have[0] != id):
				res.Lost++
			case acknowledged && c.deleted[id] && len(have) > 0:
				res.Undeleted++
			}
		}
	}
	if res.Total, err = listTotal(ctx, clients[0]); err != nil {
		return err
	}
	res.TotalsAgree = res.Total == int64(res.Stored)
	logf("%d requests, statuses %v, %d stored, total %d, %d duplicates, %d lost, recovery %v",
		res.Requests, res.Status, res.Stored, res.Total, res.Duplicates, res.Lost, res.Recovery)
	return nil
}

// write puts the soak's section into the report at path, replacing the
// previous one.
func (res *chaosResult) write(path string, b *bench.Board) error {
	tmpl, err := template.New("chaos").Funcs(template.FuncMap{
		"val":   func(name string) string { return bench.FormatFigure(b.Get(name).Value) },
		"round": func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) },
	}).Parse(chaosTemplate)
	if err != nil {
		return err
	}
	var section bytes.Buffer
	if err := tmpl.Execute(&section, res); err != nil {
		return err
	}
	return bench.ChaosSection.WriteInto(path, section.Bytes())
}
