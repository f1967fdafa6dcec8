// Package idempotency makes POST requests safe to retry: the first answer
// to an Idempotency-Key is kept for 24 hours per account, and a retry with
// the same key and body gets that answer again instead of a second create
// (Stripe's semantics). The same key with another body is a 422; a retry
// while the first request is still running is a 409.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/httpapi"
)

// Header is the request header carrying the client's key.
const Header = "Idempotency-Key"

// ReplayedHeader marks an answer that is a stored one.
const ReplayedHeader = "Idempotent-Replayed"

const (
	// Retention is how long a key's answer is kept.
	Retention = 24 * time.Hour
	// claimLease is how long a running request holds its key. It outlasts
	// the function's timeout, so a crashed request frees its key for a
	// retry instead of blocking it for a day.
	claimLease = 30 * time.Second
	maxKeyLen  = 255
)

// storedHeaders are the response headers a replay repeats.
var storedHeaders = []string{"Content-Type", "Location", "ETag"}

// DB is the part of the DynamoDB client the store uses.
type DB interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Store keeps answers in a DynamoDB table keyed by account and key.
type Store struct {
	db    DB
	table string
	// Now is the clock; tests may set it.
	Now func() time.Time
	// Classify turns DynamoDB errors into client answers.
	Classify func(error) error
}

// New keeps answers in table.
func New(db DB, table string, classify func(error) error) *Store {
	return &Store{db: db, table: table, Now: time.Now, Classify: classify}
}

// Wrap serves POST requests that carry an Idempotency-Key through the
// store; every other request goes straight to next. It must run after
// authentication: keys are per account.
func (s *Store) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(Header)
		if r.Method != http.MethodPost || key == "" {
			next.ServeHTTP(w, r)
			return
		}
		if err := s.serve(w, r, key, next); err != nil {
			httpapi.WriteError(w, r, s.Classify(err))
		}
	})
}

func (s *Store) serve(w http.ResponseWriter, r *http.Request, key string, next http.Handler) error {
	if !validKey(key) {
		return httpapi.BadRequest("The Idempotency-Key header must be 1 to 255 visible ASCII characters.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, httpapi.MaxBodyBytes))
	if err != nil {
		return httpapi.TooLarge()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p, _ := httpapi.PrincipalFrom(r.Context())
	id := p.Account + "#" + key
	fp := fingerprint(r, body)

	old, err := s.claim(r.Context(), id, fp)
	if err != nil {
		return err
	}
	if old != nil {
		return s.answerFrom(w, old, fp)
	}
	rec := &recorder{header: http.Header{}}
	next.ServeHTTP(rec, r)
	if rec.status >= 500 || rec.status == http.StatusTooManyRequests {
		// A failure the client should retry: free the key for it.
		s.release(r.Context(), id)
	} else if err := s.complete(r.Context(), id, rec); err != nil {
		httpapi.Logger(r.Context()).Error("idempotency: store answer", "error", err.Error())
		s.release(r.Context(), id)
	}
	rec.copyTo(w)
	return nil
}

// validKey: what Stripe allows, visible ASCII up to 255 characters.
func validKey(key string) bool {
	if len(key) > maxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// fingerprint identifies "the same request": endpoint, body type and body.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	io.WriteString(h, r.Method+" "+r.URL.Path+"\n"+r.Header.Get("Content-Type")+"\n")
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// claim records that a request with this key is running. It returns the
// existing record instead when the key is taken: answered, or still
// running under a live lease.
func (s *Store) claim(ctx context.Context, id, fp string) (map[string]types.AttributeValue, error) {
	now := s.Now()
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table,
		Item: map[string]types.AttributeValue{
			"idempotency_key": str(id),
			"fingerprint":     str(fp),
			"state":           str("running"),
			"lease_until":     num(now.Add(claimLease).Unix()),
			"expires_at":      num(now.Add(Retention).Unix()),
			"ttl":             num(now.Add(Retention).Unix()),
		},
		// Free when new, expired (TTL may lag by days), or left running by
		// a request that died, for the same request only.
		ConditionExpression: ptr("attribute_not_exists(idempotency_key) OR expires_at < :now OR " +
			"(#state = :running AND lease_until < :now AND fingerprint = :fp)"),
		ExpressionAttributeNames: map[string]string{"#state": "state"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": num(now.Unix()), ":running": str("running"), ":fp": str(fp),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, nil
	}
	return nil, err
}

// answerFrom answers a request whose key is taken.
func (s *Store) answerFrom(w http.ResponseWriter, old map[string]types.AttributeValue, fp string) error {
	if strAttr(old["fingerprint"]) != fp {
		return httpapi.InvalidField(Header, "The Idempotency-Key has already been used with a different request.")
	}
	if strAttr(old["state"]) != "done" {
		e := httpapi.Conflict("A request with this Idempotency-Key is still in progress.")
		e.Header = http.Header{"Retry-After": {"1"}}
		return e
	}
	status, _ := strconv.Atoi(numAttr(old["status"]))
	if headers, ok := old["headers"].(*types.AttributeValueMemberM); ok {
		for k, v := range headers.Value {
			w.Header().Set(k, strAttr(v))
		}
	}
	w.Header().Set(ReplayedHeader, "true")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, strAttr(old["body"]))
	return nil
}

func (s *Store) complete(ctx context.Context, id string, rec *recorder) error {
	headers := map[string]types.AttributeValue{}
	for _, h := range storedHeaders {
		if v := rec.header.Get(h); v != "" {
			headers[h] = str(v)
		}
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        &s.table,
		Key:              map[string]types.AttributeValue{"idempotency_key": str(id)},
		UpdateExpression: ptr("SET #state = :done, #status = :status, body = :body, headers = :headers REMOVE lease_until"),
		ExpressionAttributeNames: map[string]string{
			"#state": "state", "#status": "status",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":done": str("done"), ":status": num(int64(rec.status)),
			":body": str(rec.body.String()), ":headers": &types.AttributeValueMemberM{Value: headers},
		},
	})
	return err
}

// release forgets a claim so that a retry runs the request again. A failure
// here only delays that retry until the claim's lease ends.
func (s *Store) release(ctx context.Context, id string) {
	_, err := s.db.DeleteItem(context.WithoutCancel(ctx), &dynamodb.DeleteItemInput{
		TableName: &s.table,
		Key:       map[string]types.AttributeValue{"idempotency_key": str(id)},
	})
	if err != nil {
		httpapi.Logger(ctx).Error("idempotency: release", "error", err.Error())
	}
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

func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func strAttr(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func numAttr(av types.AttributeValue) string {
	if n, ok := av.(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
