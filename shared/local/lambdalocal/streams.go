// The DynamoDB mapping: StreamPoller is Lambda's DynamoDB event source mapping on this
// machine: it reads DynamoDB Local's table streams and delivers
// events.DynamoDBEvent batches to a function's entry point, filtered,
// batched and retried as the template's AWS::Lambda::EventSourceMapping
// says (sam.StreamMapping): batch size, filter criteria, partial batch
// failures retried from the first failed record, bisection of a batch the
// function failed, bounded retries, and then the on-failure destination,
// which here is a log line and a count. A mapping with a tumbling window
// delivers events.DynamoDBTimeWindowEvent batches instead, naming their
// shard and carrying the window's state from one call to the next.

package lambdalocal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"contentapi/shared/local/sam"
)

// StreamHandler is a stream function's entry point, as lambda.Start takes it.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// StreamWindowHandler is the entry point of a function whose mapping has a
// tumbling window.
type StreamWindowHandler func(context.Context, events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error)

// StreamMapping is one table's stream delivered to a handler.
type StreamMapping struct {
	// Table is the table's name.
	Table  string
	Filter *StreamFilter
	// Handler takes the batches, or WindowHandler when the mapping has a
	// tumbling Window.
	Handler       StreamHandler
	WindowHandler StreamWindowHandler
	Window        time.Duration
	// Batch is the most records per delivery; MaxRetries how often a
	// failed batch is delivered again before it goes to the on-failure
	// destination (negative: until the poller stops, as Lambda's -1 retries
	// until the record expires); Bisect splits a batch the function failed.
	Batch      int
	MaxRetries int
	Bisect     bool
	// FromStart reads the stream from its oldest record (TRIM_HORIZON)
	// rather than from now (LATEST).
	FromStart bool
}

// StreamFromTemplate is the mapping the template declares for a table (by
// logical ID), under the table's name here, delivered to handler or, for a
// mapping with a tumbling window, to windowed.
func StreamFromTemplate(m sam.StreamMapping, table string, handler StreamHandler, windowed StreamWindowHandler) (StreamMapping, error) {
	f, err := ParseStreamFilter(m.Filters)
	if err != nil {
		return StreamMapping{}, fmt.Errorf("%s: %w", m.LogicalID, err)
	}
	batch := m.BatchSize
	if batch == 0 {
		batch = 100 // Lambda's default for streams
	}
	out := StreamMapping{
		Table: table, Filter: f, Batch: batch, MaxRetries: m.MaximumRetryAttempts,
		Bisect: m.BisectBatchOnFunctionError, FromStart: m.StartingPosition == "TRIM_HORIZON",
		Window: time.Duration(m.TumblingWindowInSeconds) * time.Second,
	}
	if out.Window > 0 {
		out.WindowHandler = windowed
	} else {
		out.Handler = handler
	}
	if out.Handler == nil && out.WindowHandler == nil {
		return StreamMapping{}, fmt.Errorf("%s: no entry point of its kind (tumbling window: %v)", m.LogicalID, out.Window > 0)
	}
	return out, nil
}

// DeliverStreams runs the template's stream mappings of a function (by logical
// ID) over the tables (names by logical ID) until ctx ends: see Mappings.
func DeliverStreams(ctx context.Context, db *dynamodb.Client, endpoint string, tmpl *sam.Template, tables map[string]string,
	function string, handler StreamHandler, windowed StreamWindowHandler, logger *slog.Logger) (*StreamPoller, error) {
	mappings, err := StreamMappings(tmpl, tables, function, handler, windowed)
	if err != nil {
		return nil, err
	}
	p := NewStreamPoller(db, endpoint, logger)
	go func() {
		if err := p.Run(ctx, mappings...); err != nil {
			logger.Error("streams: delivery stopped", "function", function, "error", err.Error())
		}
	}()
	return p, nil
}

// StreamMappings are the template's stream mappings of a function (by logical
// ID) over the tables (names by logical ID), handing their batches to
// handler, or to windowed for mappings with a tumbling window.
func StreamMappings(tmpl *sam.Template, tables map[string]string, function string, handler StreamHandler, windowed StreamWindowHandler) ([]StreamMapping, error) {
	all, err := tmpl.StreamMappings()
	if err != nil {
		return nil, err
	}
	var mappings []StreamMapping
	for _, m := range all {
		if m.Function != function {
			continue
		}
		table, ok := tables[m.Table]
		if !ok {
			return nil, fmt.Errorf("streams: no local table for %s", m.Table)
		}
		mapping, err := StreamFromTemplate(m, table, handler, windowed)
		if err != nil {
			return nil, err
		}
		mappings = append(mappings, mapping)
	}
	return mappings, nil
}

// StreamPoller runs mappings until its context ends.
type StreamPoller struct {
	db      *dynamodb.Client
	streams *dynamodbstreams.Client
	logger  *slog.Logger
	// Interval is the pause after a read that found nothing (Lambda reads
	// a shard four times a second).
	Interval time.Duration

	delivered, failed atomic.Int64

	mu sync.Mutex
	// described is, by table, when the last look at its shards began
	// (a table's first shard appears with its first write); idle is, by
	// shard, when its last read that found nothing new began; wake, closed,
	// has the tables look at their shards now.
	described map[string]time.Time
	idle      map[string]time.Time
	tables    []string
	wake      chan struct{}
}

// NewStreamPoller polls the streams of the tables db holds.
func NewStreamPoller(db *dynamodb.Client, endpoint string, logger *slog.Logger) *StreamPoller {
	streams := dynamodbstreams.New(dynamodbstreams.Options{
		Region: db.Options().Region, Credentials: db.Options().Credentials,
		BaseEndpoint: aws.String(endpoint), HTTPClient: db.Options().HTTPClient,
	})
	return &StreamPoller{db: db, streams: streams, logger: logger, Interval: 250 * time.Millisecond,
		described: map[string]time.Time{}, idle: map[string]time.Time{}, wake: make(chan struct{})}
}

// Delivered is how many records the handlers have taken; Failed how many
// went to the on-failure destination after their retries.
func (p *StreamPoller) Delivered() int64 { return p.delivered.Load() }
func (p *StreamPoller) Failed() int64    { return p.failed.Load() }

// Drained returns once every record written to the mappings' tables before
// the call has been read and delivered (or has gone to the on-failure
// destination), or when ctx ends.
func (p *StreamPoller) Drained(ctx context.Context) error {
	since := time.Now()
	p.mu.Lock()
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
	for {
		if p.drainedSince(since) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// checkFunctions refuses a mapping whose function does not take what it delivers.
func checkFunctions(mappings []StreamMapping) error {
	for _, m := range mappings {
		if (m.Window > 0) != (m.WindowHandler != nil) || (m.Window == 0) != (m.Handler != nil) {
			return fmt.Errorf("streams: %s: a mapping with a tumbling window takes a StreamWindowHandler, any other a StreamHandler", m.Table)
		}
	}
	return nil
}

func (p *StreamPoller) drainedSince(since time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tables) == 0 {
		return false
	}
	for _, t := range p.tables {
		if !p.described[t].After(since) {
			return false
		}
	}
	for _, at := range p.idle {
		if !at.After(since) {
			return false
		}
	}
	return true
}

// Run polls every mapping until ctx ends.
func (p *StreamPoller) Run(ctx context.Context, mappings ...StreamMapping) error {
	if err := checkFunctions(mappings); err != nil {
		return err
	}
	p.mu.Lock()
	for _, m := range mappings {
		p.tables = append(p.tables, m.Table)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(mappings))
	for i, m := range mappings {
		wg.Go(func() { errs[i] = p.table(ctx, m) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(errs...)
}

// table follows one table's stream: its shards as they appear, each read
// after its parent is done, as Lambda reads them.
func (p *StreamPoller) table(ctx context.Context, m StreamMapping) error {
	d, err := p.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(m.Table)})
	if err != nil {
		return fmt.Errorf("streams: %s: %w", m.Table, err)
	}
	arn := aws.ToString(d.Table.LatestStreamArn)
	if arn == "" {
		return fmt.Errorf("streams: table %s has no stream", m.Table)
	}
	done := map[string]chan struct{}{}
	var wg sync.WaitGroup
	defer wg.Wait()
	first := true
	for {
		began := time.Now()
		out, err := p.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
		if err != nil && ctx.Err() == nil {
			p.logger.Warn("streams: describe stream", "table", m.Table, "error", err.Error())
		}
		if err == nil {
			for _, shard := range out.StreamDescription.Shards {
				id := aws.ToString(shard.ShardId)
				if _, known := done[id]; known {
					continue
				}
				finished := make(chan struct{})
				done[id] = finished
				p.idleSince(m, id, time.Time{})
				parent := done[aws.ToString(shard.ParentShardId)]
				// Shards there at the start are read from where the
				// mapping starts; shards that appear later, from their
				// beginning.
				fromStart := m.FromStart || !first
				wg.Go(func() {
					defer close(finished)
					if parent != nil {
						select {
						case <-parent:
						case <-ctx.Done():
							return
						}
					}
					p.shard(ctx, m, arn, id, fromStart)
				})
			}
			first = false
			p.mu.Lock()
			p.described[m.Table] = began
			p.mu.Unlock()
		}
		p.mu.Lock()
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-time.After(5 * time.Second):
		}
	}
}

// shard reads one shard and delivers what passes the filter. A mapping
// that starts from now (LATEST) reads the shard from its start too, and
// passes over what is there: DynamoDB Local's iterators fail after a while
// on a quiet shard, and a LATEST iterator taken again would skip what was
// written meanwhile, where one after the last record read, or from the
// start of a shard that was empty, does not.
func (p *StreamPoller) shard(ctx context.Context, m StreamMapping, arn, shard string, fromStart bool) {
	kind := types.ShardIteratorTypeTrimHorizon
	passOver := !fromStart
	var last string // the sequence number of the last record read
	at := &position{shard: shard, arn: arn}
	taken := time.Now()
	iterator, err := p.iterator(ctx, arn, shard, kind, last)
	for err == nil && iterator != nil && ctx.Err() == nil {
		began := time.Now()
		out, gerr := p.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iterator})
		var trimmed *types.TrimmedDataAccessException
		var expired *types.ExpiredIteratorException
		switch {
		case errors.As(gerr, &trimmed) || errors.As(gerr, &expired):
			// DynamoDB Local answers this for a trim-horizon iterator taken
			// while the shard was empty, and for iterators on a quiet
			// shard; take one again, after what was read.
			if last == "" {
				// Empty when the iterator was taken: nothing to pass over.
				passOver = false
				p.idleSince(m, shard, taken)
			}
			sleep(ctx, p.Interval)
			taken = time.Now()
			iterator, err = p.iterator(ctx, arn, shard, kind, last)
			continue
		case gerr != nil:
			if ctx.Err() == nil {
				p.logger.Warn("streams: get records", "table", m.Table, "shard", shard, "error", gerr.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		var batch []events.DynamoDBEventRecord
		for _, r := range out.Records {
			rec, cerr := eventRecord(r, arn)
			switch {
			case passOver:
			case cerr != nil:
				// Only an attribute type newer than this SDK gets here.
				p.logger.Error("streams: a record with an attribute type this SDK does not know, skipped",
					"table", m.Table, "sequence", aws.ToString(r.Dynamodb.SequenceNumber), "error", cerr.Error())
			case m.Filter.Match(rec):
				batch = append(batch, rec)
			}
			last = aws.ToString(r.Dynamodb.SequenceNumber)
		}
		for len(batch) > 0 {
			n := min(m.Batch, len(batch))
			p.deliver(ctx, m, at, batch[:n], 0)
			batch = batch[n:]
		}
		iterator = out.NextShardIterator
		if len(out.Records) == 0 {
			passOver = false
			p.idleSince(m, shard, began)
			sleep(ctx, p.Interval)
		}
	}
	if err == nil && iterator == nil {
		// A closed shard read to its end: nothing more will come.
		p.idleSince(m, shard, time.Now().Add(24*time.Hour))
	}
	if err != nil && ctx.Err() == nil {
		p.logger.Warn("streams: shard iterator", "table", m.Table, "shard", shard, "error", err.Error())
	}
}

// idleSince notes that a shard had nothing more to deliver at a time.
func (p *StreamPoller) idleSince(m StreamMapping, shard string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle[m.Table+"/"+shard] = at
}

// iterator starts reading a shard where kind says, or after the record
// last read.
func (p *StreamPoller) iterator(ctx context.Context, arn, shard string, kind types.ShardIteratorType, last string) (*string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shard), ShardIteratorType: kind}
	if last != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(last)
	}
	out, err := p.streams.GetShardIterator(ctx, in)
	if err != nil {
		return nil, err
	}
	return out.ShardIterator, nil
}

// position is where a shard's delivery is: the shard, and for a mapping
// with a tumbling window, the window and its state.
type position struct {
	shard, arn string
	window     events.Window
	state      map[string]string
}

// invoke calls the mapping's function with a batch and returns the
// records it reported failed.
func (p *StreamPoller) invoke(ctx context.Context, m StreamMapping, at *position, batch []events.DynamoDBEventRecord) ([]events.DynamoDBBatchItemFailure, error) {
	if m.WindowHandler == nil {
		resp, err := m.Handler(ctx, events.DynamoDBEvent{Records: batch})
		return resp.BatchItemFailures, err
	}
	if start := time.Now().UTC().Truncate(m.Window); !at.window.Start.Equal(start) {
		// A new window starts with a fresh state.
		at.window = events.Window{Start: events.RFC3339EpochTime{Time: start}, End: events.RFC3339EpochTime{Time: start.Add(m.Window)}}
		at.state = map[string]string{}
	}
	resp, err := m.WindowHandler(ctx, events.DynamoDBTimeWindowEvent{
		DynamoDBEvent: events.DynamoDBEvent{Records: batch},
		TimeWindowProperties: events.TimeWindowProperties{
			Window: at.window, State: at.state, ShardID: at.shard, EventSourceARN: at.arn,
		},
	})
	if err == nil && resp.State == nil {
		// Lambda refuses such an answer, and delivers the batch again.
		return nil, errors.New("streams: a tumbling window's function answered without a state")
	}
	if err == nil {
		at.state = resp.State
	}
	return resp.BatchItemFailures, err
}

// deliver hands a batch to the function until it succeeds, its retries are
// spent, or (bisecting) its halves are delivered on their own.
func (p *StreamPoller) deliver(ctx context.Context, m StreamMapping, at *position, batch []events.DynamoDBEventRecord, tries int) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		failures, err := p.invoke(ctx, m, at, batch)
		if err == nil && len(failures) == 0 {
			p.delivered.Add(int64(len(batch)))
			return
		}
		tries++
		if m.MaxRetries >= 0 && tries > m.MaxRetries {
			p.toDestination(m, batch, err)
			return
		}
		if err != nil && m.Bisect && len(batch) > 1 {
			half := len(batch) / 2
			p.deliver(ctx, m, at, batch[:half], tries)
			p.deliver(ctx, m, at, batch[half:], tries)
			return
		}
		if err == nil {
			// Lambda checkpoints before the first failed record and
			// delivers the rest of the batch again from there.
			first := len(batch)
			for _, f := range failures {
				if i := slices.IndexFunc(batch, func(r events.DynamoDBEventRecord) bool {
					return r.Change.SequenceNumber == f.ItemIdentifier
				}); i >= 0 && i < first {
					first = i
				}
			}
			if first == len(batch) {
				first = 0 // an identifier of no record: the whole batch failed
			}
			p.delivered.Add(int64(first))
			batch = batch[first:]
		}
		sleep(ctx, backoff)
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (p *StreamPoller) toDestination(m StreamMapping, batch []events.DynamoDBEventRecord, err error) {
	p.failed.Add(int64(len(batch)))
	msg := "the function reported them failed"
	if err != nil {
		msg = err.Error()
	}
	p.logger.Error("streams: records sent to the on-failure destination after their retries",
		"table", m.Table, "records", len(batch),
		"first_sequence", batch[0].Change.SequenceNumber, "last_sequence", batch[len(batch)-1].Change.SequenceNumber,
		"error", msg)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// eventRecord is a stream record as Lambda delivers it.
func eventRecord(r types.Record, streamARN string) (events.DynamoDBEventRecord, error) {
	rec := events.DynamoDBEventRecord{
		AWSRegion:      aws.ToString(r.AwsRegion),
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    aws.ToString(r.EventSource),
		EventVersion:   aws.ToString(r.EventVersion),
		EventSourceArn: streamARN,
	}
	if c := r.Dynamodb; c != nil {
		keys, kerr := image(c.Keys)
		newImage, nerr := image(c.NewImage)
		oldImage, oerr := image(c.OldImage)
		if err := errors.Join(kerr, nerr, oerr); err != nil {
			return rec, err
		}
		rec.Change = events.DynamoDBStreamRecord{
			Keys:           keys,
			NewImage:       newImage,
			OldImage:       oldImage,
			SequenceNumber: aws.ToString(c.SequenceNumber),
			SizeBytes:      aws.ToInt64(c.SizeBytes),
			StreamViewType: string(c.StreamViewType),
		}
		if t := c.ApproximateCreationDateTime; t != nil {
			rec.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *t}
		}
	}
	return rec, nil
}

// image is an item as the streams API returns it, as Lambda delivers it:
// the SDK converts the streams API's attribute values into the table
// API's, which Image turns into the event's.
func image(m map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	item, err := attributevalue.FromDynamoDBStreamsMap(m)
	return StreamImage(item), err
}

// LastSequenceNumbers is, by shard, the sequence number of the last record of a table's
// stream that keep keeps, read from every shard's start to its end now:
// what a mapping has delivered once it has caught up.
func LastSequenceNumbers(ctx context.Context, db *dynamodb.Client, endpoint, table string, keep func(events.DynamoDBEventRecord) bool) (map[string]string, error) {
	p := NewStreamPoller(db, endpoint, nil)
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return nil, err
	}
	arn := d.Table.LatestStreamArn
	out, err := p.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
	if err != nil {
		return nil, err
	}
	last := map[string]string{}
	for _, shard := range out.StreamDescription.Shards {
		id := aws.ToString(shard.ShardId)
		iterator, err := p.iterator(ctx, aws.ToString(arn), id, types.ShardIteratorTypeTrimHorizon, "")
		for err == nil && iterator != nil {
			var page *dynamodbstreams.GetRecordsOutput
			page, err = p.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iterator})
			var trimmed *types.TrimmedDataAccessException
			if errors.As(err, &trimmed) {
				err = nil // an empty shard, as DynamoDB Local says it
				break
			}
			if err != nil || len(page.Records) == 0 {
				break
			}
			for _, r := range page.Records {
				if rec, cerr := eventRecord(r, aws.ToString(arn)); cerr == nil && keep(rec) {
					last[id] = rec.Change.SequenceNumber
				}
			}
			iterator = page.NextShardIterator
		}
		if err != nil {
			return nil, err
		}
	}
	return last, nil
}
