// Package idempotency makes writes safe to retry: the first answer to an
// Idempotency-Key is kept for 24 hours per account, and a retry with the
// same key and request gets that answer again (with Idempotent-Replayed:
// true) instead of a second write. The same key with another request is a
// 422; a retry while the first request is still running is a 409 whose
// Retry-After is when its lease ends. POST, PUT, PATCH and DELETE take keys.
//
// At most once, whatever fails in between: a key is never released. A
// request that could not finish gives up its lease only; the next request
// with the key takes the claim over under the same operation token
// (store.Attempt), so storage recognises whatever the earlier one wrote (the
// record a create made, the update or the delete it applied) instead of
// doing it again. A create binds its record id to the key before writing the
// record, so the retry writes that same id.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/httpapi"
	"contentapi/shared/store"
)

// Header is the request header carrying the client's key.
const Header = "Idempotency-Key"

// ReplayedHeader marks an answer that is a stored one.
const ReplayedHeader = "Idempotent-Replayed"

const (
	// Retention is how long a key's answer is kept.
	Retention = 24 * time.Hour
	// DefaultReserve is the part of a request's deadline kept back for
	// storing its answer.
	DefaultReserve = time.Second
	// leaseMargin is added to a request's deadline to make its lease: no
	// other request takes the key over while it may still be writing.
	leaseMargin = time.Second
	// afterwardsBudget bounds storing an answer already made, so a stalled
	// database delays the client's answer by this much at most.
	afterwardsBudget = 2 * time.Second
	// defaultLease is the lease of a request without a deadline.
	defaultLease = 30 * time.Second
	maxKeyLen    = 255
)

// storedHeaders are the response headers a replay repeats.
var storedHeaders = []string{"Content-Type", "Location", "ETag"}

// methods are those whose requests a key makes safe to retry.
var methods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Item attributes.
const (
	attrKey         = "idempotency_key"
	attrFingerprint = "fingerprint"
	attrState       = "state"
	attrOp          = "op"
	attrOwner       = "owner"
	attrLease       = "lease_until" // Unix milliseconds
	attrExpires     = "expires_at"  // Unix seconds
	// AttrTTL is when DynamoDB's TTL may drop a record (Unix seconds).
	AttrTTL      = "ttl"
	attrRecordID = "record_id"
	attrStatus   = "status"
	attrBody     = "body"
	attrHeaders  = "headers"

	stateRunning = "running"
	stateDone    = "done"
)

// Schema is the records' table as DynamoDB makes it, but for its name and
// its settings (TTL on AttrTTL): a record by its key. template.yaml's
// IdempotencyTable says the same: make generate writes it from here
// (cmd/listgen).
func Schema() dynamodb.CreateTableInput {
	return dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(attrKey), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(attrKey), KeyType: types.KeyTypeHash}},
	}
}

// DB is the part of the DynamoDB client the store uses.
type DB interface {
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Store keeps answers in a DynamoDB table keyed by account and key.
type Store struct {
	db    DB
	table string
	// Now is the clock; tests may set it.
	Now func() time.Time
	// Classify turns DynamoDB errors into client answers.
	Classify func(error) error
	// Reserve is kept back from the handler's deadline to store the answer.
	Reserve time.Duration
}

// New keeps answers in table.
func New(db DB, table string, classify func(error) error) *Store {
	return &Store{db: db, table: table, Now: time.Now, Classify: classify, Reserve: DefaultReserve}
}

// Wrap serves write requests that carry an Idempotency-Key through the
// store; every other request goes straight to next. It must run after
// authentication: keys are per account.
func (s *Store) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, given := requestKey(r)
		if !given {
			next.ServeHTTP(w, r)
			return
		}
		if err := s.serve(w, r, key, next); err != nil {
			httpapi.WriteError(w, r, s.Classify(err))
		}
	})
}

// requestKey is the Idempotency-Key of a write request, given when the
// header is there and not empty.
func requestKey(r *http.Request) (string, bool) {
	// The whole header: API Gateway joins a repeated header with commas
	// and the adapter splits it there again, so taking the first value
	// would make order-77,part-1 and order-77,part-2 one key. Joined, the
	// comma makes it invalid.
	key := strings.Join(r.Header.Values(Header), ",")
	return key, key != "" && slices.Contains(methods, r.Method)
}

// errBadKey is the answer to a malformed Idempotency-Key.
var errBadKey = httpapi.BadRequest("The Idempotency-Key header must be given once, as 1 to 255 visible ASCII characters other than a comma.")

// CheckOnly serves a path that does not honour an Idempotency-Key (it
// keeps no answer) but refuses a malformed one as Wrap does, so that a
// client's bug shows on every path alike.
func CheckOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key, given := requestKey(r); given && !ValidKey(key) {
			httpapi.WriteError(w, r, errBadKey)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Store) serve(w http.ResponseWriter, r *http.Request, key string, next http.Handler) error {
	if !ValidKey(key) {
		return errBadKey
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, httpapi.MaxBodyBytes))
	if err != nil {
		return httpapi.TooLarge()
	}
	p, _ := httpapi.PrincipalFrom(r.Context())
	k := p.Account + "#" + key
	ctx := r.Context()
	exec := store.NewToken(s.Now())
	c, err := s.claim(ctx, k, Fingerprint(r, body), exec, s.lease(ctx))
	if err != nil {
		return err
	}
	switch c.outcome {
	case mismatch:
		return httpapi.InvalidField(Header, "The Idempotency-Key has already been used with a different request.")
	case busy:
		e := httpapi.Conflict("A request with this Idempotency-Key is still in progress.")
		e.Header = http.Header{"Retry-After": {strconv.Itoa(c.retryAfter)}}
		return e
	case replay:
		replayAnswer(w, c.item)
		return nil
	}

	att := store.Attempt{Op: c.op, ID: c.recordID}
	if r.Method == http.MethodPost {
		att.Bind = func(ctx context.Context, id int64) error { return s.bind(ctx, k, exec, id) }
	}
	hctx, cancel := s.handlerContext(ctx)
	defer cancel()
	rec := &recorder{header: http.Header{}}
	r.Body = io.NopCloser(bytes.NewReader(body))
	next.ServeHTTP(rec, r.WithContext(store.WithAttempt(hctx, att)))
	// The answer is known: storing it may not hold it up for long.
	after, cancelAfter := context.WithTimeout(ctx, afterwardsBudget)
	defer cancelAfter()
	if rec.status >= 500 || rec.status == http.StatusTooManyRequests {
		// The client should retry: end the lease so it may at once. The
		// key stays bound to this operation, and the retry carries on
		// from whatever this request did.
		if err := s.yield(after, k, exec); err != nil {
			httpapi.Logger(ctx).Warn("idempotency: end lease", "error", err.Error())
		}
	} else if err := s.complete(after, k, exec, rec); err != nil {
		// The answer stands. A retry takes the claim over once its lease
		// ends and finds what this request wrote.
		httpapi.Logger(ctx).Warn("idempotency: store answer", "error", err.Error())
	}
	rec.copyTo(w)
	return nil
}

// lease is when a request's claim ends: its deadline plus a margin.
func (s *Store) lease(ctx context.Context) time.Time {
	if deadline, ok := ctx.Deadline(); ok {
		return deadline.Add(leaseMargin)
	}
	return s.Now().Add(defaultLease)
}

// handlerContext keeps Reserve of the request's deadline back for storing
// the answer.
func (s *Store) handlerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) > 2*s.Reserve {
		return context.WithDeadline(ctx, deadline.Add(-s.Reserve))
	}
	return context.WithCancel(ctx)
}

// ValidKey is what Stripe allows, visible ASCII, 1 to 255 characters, but
// a comma: HTTP lists a header's values with commas, so a key holding one
// cannot be told from a repeated header.
func ValidKey(key string) bool {
	if key == "" || len(key) > maxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e || key[i] == ',' {
			return false
		}
	}
	return true
}

// Fingerprint identifies "the same request": method, path, its conditions
// (If-Match, If-None-Match) and the fields the body holds, however they
// were encoded. A retry that sends the same fields is the same request even
// if its bytes differ (a new multipart boundary, JSON spacing or key
// order); a body that does not parse is compared byte for byte.
func Fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	io.WriteString(h, r.Method+"\n"+r.URL.Path+"\n"+r.Header.Get("If-Match")+"\n")
	// What decides a write's precondition beyond If-Match's first line, only
	// where it is there, so that the fingerprints of requests without it
	// stay those earlier releases stored.
	for _, name := range []string{"If-Match", "If-None-Match"} {
		if values := r.Header.Values(name); len(values) > 1 || len(values) == 1 && (name != "If-Match" || values[0] == "") {
			io.WriteString(h, name+": "+strconv.Quote(strings.Join(values, "\n"))+"\n")
		}
	}
	parse := r.Clone(r.Context())
	parse.Body = io.NopCloser(bytes.NewReader(body))
	in, err := httpapi.ParseBody(parse)
	if err != nil {
		io.WriteString(h, "raw\n"+r.Header.Get("Content-Type")+"\n")
		h.Write(body)
		return hex.EncodeToString(h.Sum(nil))
	}
	names := slices.Sorted(slices.Values(in.Names))
	for _, name := range names {
		v := in.Values[name]
		io.WriteString(h, strconv.Quote(name)+"="+strconv.Itoa(int(v.Type))+":"+strconv.Quote(v.Text)+"\n")
	}
	for _, name := range slices.Sorted(slices.Values(in.Repeated)) {
		io.WriteString(h, "repeated "+strconv.Quote(name)+"\n")
	}
	return hex.EncodeToString(h.Sum(nil))
}

type outcome int

const (
	owned outcome = iota
	replay
	busy
	mismatch
)

type claimed struct {
	outcome    outcome
	op         string
	recordID   int64
	retryAfter int // seconds, for busy
	item       map[string]types.AttributeValue
}

// claim takes the key for this execution, or says who has it: a new or
// expired key is claimed afresh; a running claim whose lease has ended is
// taken over, keeping its operation and bound record id; a claim this very
// execution made (its write landed and the SDK retried it) is ours.
func (s *Store) claim(ctx context.Context, k, fp, exec string, lease time.Time) (claimed, error) {
	now := s.Now()
	expires := num(now.Add(Retention).Unix())
	u := map[string]types.AttributeValue{
		":fp": str(fp), ":running": str(stateRunning), ":exec": str(exec),
		":lease": num(lease.UnixMilli()), ":expires": expires, ":now": num(now.Unix()),
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table,
		Key:       map[string]types.AttributeValue{attrKey: str(k)},
		UpdateExpression: ptr("SET #fp = :fp, #state = :running, #op = :exec, #owner = :exec, #lease = :lease, " +
			"#expires = :expires, #ttl = :expires REMOVE #record, #status, #body, #headers"),
		ConditionExpression: ptr("attribute_not_exists(#key) OR #expires < :now"),
		ExpressionAttributeNames: map[string]string{
			"#key": attrKey, "#fp": attrFingerprint, "#state": attrState, "#op": attrOp, "#owner": attrOwner,
			"#lease": attrLease, "#expires": attrExpires, "#ttl": AttrTTL, "#record": attrRecordID,
			"#status": attrStatus, "#body": attrBody, "#headers": attrHeaders,
		},
		ExpressionAttributeValues:           u,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return claimed{outcome: owned, op: exec}, nil
	}
	old, failed := conditionFailed(err)
	if !failed {
		return claimed{}, err
	}
	// One takeover race at most: after losing it, the winner holds a live
	// lease and the answer is 409.
	for range 2 {
		c := s.judge(old, fp, exec)
		if c.outcome != owned || strAttr(old, attrOwner) == exec {
			return c, nil
		}
		err = s.takeOver(ctx, k, old, exec, lease)
		if err == nil {
			return c, nil
		}
		if old, failed = conditionFailed(err); !failed {
			return claimed{}, err
		}
	}
	return s.judge(old, fp, exec), nil
}

// judge says what an existing claim means for a request: owned means it
// may be taken over (or is this execution's own).
func (s *Store) judge(old map[string]types.AttributeValue, fp, exec string) claimed {
	c := claimed{op: strAttr(old, attrOp), item: old}
	c.recordID, _ = intAttr(old, attrRecordID)
	switch {
	case strAttr(old, attrOwner) == exec:
		c.outcome = owned
	case strAttr(old, attrFingerprint) != fp:
		c.outcome = mismatch
	case strAttr(old, attrState) == stateDone:
		c.outcome = replay
	default:
		lease, _ := intAttr(old, attrLease)
		left := time.UnixMilli(lease).Sub(s.Now())
		if left > 0 {
			c.outcome = busy
			c.retryAfter = int((left + time.Second - 1) / time.Second)
		} else {
			c.outcome = owned
		}
	}
	return c
}

// takeOver claims a running key whose lease has ended, if no one else did
// first.
func (s *Store) takeOver(ctx context.Context, k string, old map[string]types.AttributeValue, exec string, lease time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           &s.table,
		Key:                 map[string]types.AttributeValue{attrKey: str(k)},
		UpdateExpression:    ptr("SET #owner = :exec, #lease = :lease"),
		ConditionExpression: ptr("#state = :running AND (#owner = :previous OR #owner = :exec)"),
		ExpressionAttributeNames: map[string]string{
			"#owner": attrOwner, "#lease": attrLease, "#state": attrState,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":exec": str(exec), ":lease": num(lease.UnixMilli()), ":running": str(stateRunning),
			":previous": str(strAttr(old, attrOwner)),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// bind records the id a create is about to write, while this execution
// still holds the key.
func (s *Store) bind(ctx context.Context, k, exec string, id int64) error {
	return s.update(ctx, k, exec, "SET #record = :id", map[string]string{"#record": attrRecordID},
		map[string]types.AttributeValue{":id": num(id)})
}

// complete stores the answer for replays.
func (s *Store) complete(ctx context.Context, k, exec string, rec *recorder) error {
	headers := map[string]types.AttributeValue{}
	for _, h := range storedHeaders {
		if v := rec.header.Get(h); v != "" {
			headers[h] = str(v)
		}
	}
	return s.update(ctx, k, exec, "SET #state = :done, #status = :status, #body = :body, #headers = :headers REMOVE #lease",
		map[string]string{"#state": attrState, "#status": attrStatus, "#body": attrBody, "#headers": attrHeaders, "#lease": attrLease},
		map[string]types.AttributeValue{
			":done": str(stateDone), ":status": num(int64(rec.status)),
			":body": str(rec.body.String()), ":headers": &types.AttributeValueMemberM{Value: headers},
		})
}

// yield ends this execution's lease, so a retry may take over at once.
func (s *Store) yield(ctx context.Context, k, exec string) error {
	return s.update(ctx, k, exec, "SET #lease = :now", map[string]string{"#lease": attrLease},
		map[string]types.AttributeValue{":now": num(s.Now().UnixMilli())})
}

// errLostClaim: another request took the key over; this one must not write
// on its behalf.
var errLostClaim = errors.New("idempotency: the claim was taken over")

// update changes the claim if this execution still owns it. A retried write
// whose first attempt landed changes it again, harmlessly.
func (s *Store) update(ctx context.Context, k, exec, expr string, names map[string]string, values map[string]types.AttributeValue) error {
	names["#owner"] = attrOwner
	values[":exec"] = str(exec)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       map[string]types.AttributeValue{attrKey: str(k)},
		UpdateExpression:          &expr,
		ConditionExpression:       ptr("#owner = :exec"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if _, failed := conditionFailed(err); failed {
		return errLostClaim
	}
	return err
}

// replayAnswer writes a stored answer.
func replayAnswer(w http.ResponseWriter, item map[string]types.AttributeValue) {
	status, _ := intAttr(item, attrStatus)
	if headers, ok := item[attrHeaders].(*types.AttributeValueMemberM); ok {
		for k, v := range headers.Value {
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				w.Header().Set(k, s.Value)
			}
		}
	}
	w.Header().Set(ReplayedHeader, "true")
	w.WriteHeader(int(status))
	_, _ = io.WriteString(w, strAttr(item, attrBody))
}

// recorder holds an answer until it is stored.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}

func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, false
	}
	return ccf.Item, true
}

func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func strAttr(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func intAttr(item map[string]types.AttributeValue, name string) (int64, bool) {
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}

func ptr[T any](v T) *T { return &v }
