package ddblocal

// VectorStandIn stands in for DynamoDB's vector indexes, which DynamoDB
// Local predates: its CreateTable drops VectorIndexes without a word and it
// answers SearchVectors with UnknownOperation. The stand-in is an HTTP
// endpoint in front of DynamoDB Local that answers the vector parts of the
// API as DynamoDB does, on its wire protocol (JSON 1.0), so the real SDK
// client runs against it:
//
//   - CreateTable's VectorIndexes and UpdateTable's VectorIndexUpdates are
//     checked and kept by the stand-in; the rest of the table goes to
//     DynamoDB Local.
//   - DescribeTable (and CreateTable's and UpdateTable's answers) carry
//     the table's VectorIndexes. An index added to an existing table is
//     CREATING and backfilling for Options.BuildTime, then ACTIVE.
//   - SearchVectors reads the table's items from DynamoDB Local (a Scan
//     filtered by the request's SearchConditionExpression, which DynamoDB
//     Local evaluates) and ranks every vector it finds by the index's
//     distance. AWS's index is approximate and reads a small part of the
//     index; the stand-in compares every vector of the partition, so its
//     timings are a model, never AWS's.
//
// Every other call passes through to DynamoDB Local untouched. It is not
// DynamoDB: it keeps the indexes' definitions in memory, so a restart of
// make run on a kept database adds them again (CreateTables does, as a
// deploy would).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// VectorOptions configure StartVectorStandIn.
type VectorOptions struct {
	// Port to listen on; 0 picks a free one.
	Port int
	// Addrs are the IP addresses to listen on, as Options.Addrs: 127.0.0.1
	// when empty, never every interface; the first is the one URL names.
	Addrs []string
	// BuildTime is how long an index added to an existing table stays
	// CREATING and backfilling, refusing searches, as AWS's does while it
	// builds. Indexes created with their table are ACTIVE with it, as
	// DynamoDB Local's tables are.
	BuildTime time.Duration
}

// VectorStandIn is a running stand-in for DynamoDB's vector indexes in
// front of a DynamoDB Local.
type VectorStandIn struct {
	upstream  string
	proxy     *httputil.ReverseProxy
	client    *http.Client
	srv       *http.Server
	url       string
	buildTime time.Duration

	mu       sync.Mutex
	tables   map[string]*vectorTable // by table name
	searches []VectorSearch
}

// VectorSearch is a SearchVectors call as the stand-in read it: for a test
// to see what the service asks of the index.
type VectorSearch struct {
	Table, Index string
	// Condition is the SearchConditionExpression, with Names and Values
	// its substitutions as sent (values in DynamoDB's JSON).
	Condition string
	Names     map[string]string
	Values    map[string]json.RawMessage
	TopK      int
}

// Value is the JSON of the condition's value for the attribute attr when
// the condition holds attr = :placeholder (or its #alias), e.g. {"S":"acct"};
// "" when it does not.
func (s VectorSearch) Value(attr string) string {
	for _, term := range conjuncts(s.Condition) {
		l, r, ok := strings.Cut(term, "=")
		if !ok || strings.ContainsAny(l+r, "<>!") {
			continue
		}
		l, r = strings.TrimSpace(l), strings.TrimSpace(r)
		if strings.HasPrefix(l, ":") {
			l, r = r, l
		}
		if name := resolveName(l, s.Names); name == attr {
			return string(s.Values[r])
		}
	}
	return ""
}

type vectorTable struct {
	indexes []*vectorIndex
	// extraAttrs are attribute definitions that only the vector indexes'
	// search schemas use: DynamoDB Local refuses definitions no key uses,
	// so the stand-in keeps them and puts them back into DescribeTable.
	extraAttrs []attrDef
	keys       []string // the table's key attributes
}

type attrDef struct {
	AttributeName string
	AttributeType string
}

type projection struct {
	ProjectionType   string
	NonKeyAttributes []string `json:",omitempty"`
}

type searchSchemaElement struct {
	AttributeName           string
	SearchSchemaElementType string
}

// vectorIndex is a VectorIndex as CreateTable and UpdateTable send it.
type vectorIndex struct {
	IndexName       string
	VectorAttribute struct {
		AttributeName string
	}
	Dimensions       int64
	DistanceFunction string
	SearchSchema     []searchSchemaElement `json:",omitempty"`
	Projection       *projection

	activeAt time.Time // CREATING and backfilling until then
	// added is an index added by UpdateTable: only its description has
	// Backfilling, as AWS's does.
	added bool
}

func (x *vectorIndex) active(now time.Time) bool { return !now.Before(x.activeAt) }

func (x *vectorIndex) hashKey() string {
	for _, e := range x.SearchSchema {
		if e.SearchSchemaElementType == "HASH" {
			return e.AttributeName
		}
	}
	return ""
}

// StartVectorStandIn serves the stand-in in front of the DynamoDB Local at
// upstream (its endpoint URL) until Close.
func StartVectorStandIn(upstream string, opts VectorOptions) (*VectorStandIn, error) {
	target, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: vector stand-in upstream %q: %w", upstream, err)
	}
	if len(opts.Addrs) == 0 {
		opts.Addrs = []string{"127.0.0.1"}
	}
	var listeners []net.Listener
	for _, a := range opts.Addrs {
		if ip := net.ParseIP(a); ip == nil || ip.IsUnspecified() {
			return nil, fmt.Errorf("ddblocal: vector stand-in listen address %q: want one IP address of this machine, not every interface", a)
		}
		port := opts.Port
		if len(listeners) > 0 {
			port = listeners[0].Addr().(*net.TCPAddr).Port
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(port)))
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, fmt.Errorf("ddblocal: vector stand-in: %w", err)
		}
		listeners = append(listeners, ln)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
	s := &VectorStandIn{
		upstream: strings.TrimRight(upstream, "/"),
		proxy: &httputil.ReverseProxy{
			Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = r.In.Host },
			Transport: transport,
			// A client that gives up (a test's deadline, a stream poller
			// stopping) is no error of the stand-in's; one DynamoDB Local
			// does not answer is answered as a dead DynamoDB would be.
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				if r.Context().Err() == nil {
					sendAPIError(w, &apiError{http.StatusInternalServerError, "InternalServerError", "vector stand-in: DynamoDB Local did not answer"})
				}
			},
		},
		client:    &http.Client{Transport: transport},
		url:       "http://" + listeners[0].Addr().String(),
		buildTime: opts.BuildTime,
		tables:    map[string]*vectorTable{},
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	for _, ln := range listeners {
		go s.srv.Serve(ln)
	}
	return s, nil
}

// URL is the endpoint to give the SDK client (its BaseEndpoint) and the
// functions (DYNAMODB_ENDPOINT).
func (s *VectorStandIn) URL() string { return s.url }

// String is the stand-in as a startup banner names it.
func (s *VectorStandIn) String() string {
	return "DynamoDB vector index stand-in (local, compares every vector) at " + s.url + ", in front of DynamoDB Local at " + s.upstream
}

// Close stops the server.
func (s *VectorStandIn) Close() error { return s.srv.Close() }

// Searches are the SearchVectors calls the stand-in has read, in order
// (refused ones included).
func (s *VectorStandIn) Searches() []VectorSearch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.searches)
}

// Rebuild puts a table's vector index back to CREATING and backfilling
// for d, as if it had just been added: for a test of what a search does
// while an index builds.
func (s *VectorStandIn) Rebuild(table, index string, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tables[table]; t != nil {
		for _, x := range t.indexes {
			if x.IndexName == index {
				x.activeAt, x.added = time.Now().Add(d), true
				return nil
			}
		}
	}
	return fmt.Errorf("ddblocal: table %s has no vector index %s", table, index)
}

func (s *VectorStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	if !strings.HasPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.") {
		op = "" // DynamoDB Streams and the rest: straight through
	}
	switch op {
	case "CreateTable", "UpdateTable", "DescribeTable", "DeleteTable", "SearchVectors":
	default:
		s.proxy.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	switch op {
	case "CreateTable":
		s.createTable(w, r, body)
	case "UpdateTable":
		s.updateTable(w, r, body)
	case "DescribeTable":
		s.describeTable(w, r, body)
	case "DeleteTable":
		s.deleteTable(w, r, body)
	case "SearchVectors":
		s.search(w, r, body)
	}
}

// apiError is an error DynamoDB answers, as its JSON protocol sends it.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func validation(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ValidationException", fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ResourceNotFoundException", fmt.Sprintf(format, args...)}
}

func sendAPIError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{http.StatusInternalServerError, "InternalServerError", "vector stand-in: " + err.Error()}
	}
	body, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + e.code, "message": e.msg})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

// tableRequest is the part of CreateTable, UpdateTable and DescribeTable
// requests the stand-in reads.
type tableRequest struct {
	TableName              string
	AttributeDefinitions   []attrDef
	KeySchema              []struct{ AttributeName string }
	GlobalSecondaryIndexes []struct {
		KeySchema []struct{ AttributeName string }
	}
	LocalSecondaryIndexes []struct {
		KeySchema []struct{ AttributeName string }
	}
	GlobalSecondaryIndexUpdates []struct {
		Create *struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	VectorIndexes      []*vectorIndex
	VectorIndexUpdates []struct {
		Create *vectorIndex
		Delete *struct{ IndexName string }
	}
}

// decodeTableRequest reads a table call both as the stand-in reads it and
// as JSON members to forward; it answers a malformed one.
func decodeTableRequest(w http.ResponseWriter, body []byte) (tableRequest, map[string]json.RawMessage, bool) {
	var req tableRequest
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(body, &raw) != nil {
		sendAPIError(w, &apiError{http.StatusBadRequest, "SerializationException", "The request body is not valid JSON"})
		return req, nil, false
	}
	return req, raw, true
}

func (s *VectorStandIn) createTable(w http.ResponseWriter, r *http.Request, body []byte) {
	req, raw, ok := decodeTableRequest(w, body)
	if !ok {
		return
	}
	if len(req.VectorIndexes) == 0 {
		s.forwardTable(w, r, body, req.TableName)
		return
	}
	keyed := map[string]bool{}
	for _, k := range req.KeySchema {
		keyed[k.AttributeName] = true
	}
	for _, x := range req.GlobalSecondaryIndexes {
		for _, k := range x.KeySchema {
			keyed[k.AttributeName] = true
		}
	}
	for _, x := range req.LocalSecondaryIndexes {
		for _, k := range x.KeySchema {
			keyed[k.AttributeName] = true
		}
	}
	t := &vectorTable{}
	for _, k := range req.KeySchema {
		t.keys = append(t.keys, k.AttributeName)
	}
	var kept []attrDef
	for _, a := range req.AttributeDefinitions {
		if keyed[a.AttributeName] {
			kept = append(kept, a)
		} else {
			t.extraAttrs = append(t.extraAttrs, a)
		}
	}
	var billing struct{ BillingMode string }
	_ = json.Unmarshal(body, &billing)
	if billing.BillingMode != "PAY_PER_REQUEST" {
		sendAPIError(w, validation("One or more parameter values were invalid: Vector indexes are supported only on tables in on-demand (PAY_PER_REQUEST) billing mode"))
		return
	}
	for _, x := range req.VectorIndexes {
		if err := checkVectorIndex(x, req.AttributeDefinitions, t.indexes); err != nil {
			sendAPIError(w, err)
			return
		}
		t.indexes = append(t.indexes, x) // ACTIVE with the table
	}
	for _, a := range t.extraAttrs {
		if !t.searchSchemaUses(a.AttributeName) {
			sendAPIError(w, validation("One or more parameter values were invalid: Some AttributeDefinitions are not used. AttributeDefinitions: [%s], keys used: [%s]",
				attrNames(req.AttributeDefinitions), strings.Join(sortedKeys(keyed), ", ")))
			return
		}
	}
	// DynamoDB Local gets the table without what it cannot hold.
	delete(raw, "VectorIndexes")
	raw["AttributeDefinitions"], _ = json.Marshal(kept)
	forwarded, _ := json.Marshal(raw)
	status, answer, err := s.call(r, "CreateTable", forwarded)
	if err != nil {
		sendAPIError(w, err)
		return
	}
	if status == http.StatusOK {
		s.mu.Lock()
		s.tables[req.TableName] = t
		s.mu.Unlock()
	}
	s.answerTable(w, status, answer, "TableDescription", req.TableName)
}

func (t *vectorTable) searchSchemaUses(attr string) bool {
	for _, x := range t.indexes {
		for _, e := range x.SearchSchema {
			if e.AttributeName == attr {
				return true
			}
		}
	}
	return false
}

func checkVectorIndex(x *vectorIndex, defs []attrDef, have []*vectorIndex) error {
	switch {
	case x == nil || x.IndexName == "":
		return validation("1 validation error detected: Value null at 'vectorIndexes.member.indexName' failed to satisfy constraint: Member must not be null")
	case x.VectorAttribute.AttributeName == "":
		return validation("1 validation error detected: Value null at 'vectorIndexes.member.vectorAttribute.attributeName' failed to satisfy constraint: Member must not be null")
	case x.Dimensions < 1:
		return validation("1 validation error detected: Value '%d' at 'vectorIndexes.member.dimensions' failed to satisfy constraint: Member must have value greater than or equal to 1", x.Dimensions)
	case !slices.Contains([]string{"COSINE", "EUCLIDEAN", "DOT_PRODUCT"}, x.DistanceFunction):
		return validation("1 validation error detected: Value '%s' at 'vectorIndexes.member.distanceFunction' failed to satisfy constraint: Member must satisfy enum value set: [COSINE, EUCLIDEAN, DOT_PRODUCT]", x.DistanceFunction)
	case x.Projection == nil || !slices.Contains([]string{"ALL", "KEYS_ONLY", "INCLUDE"}, x.Projection.ProjectionType):
		return validation("1 validation error detected: Value null at 'vectorIndexes.member.projection' failed to satisfy constraint: Member must not be null")
	}
	hashes := 0
	for _, e := range x.SearchSchema {
		if !slices.ContainsFunc(defs, func(d attrDef) bool { return d.AttributeName == e.AttributeName }) {
			return validation("One or more parameter values were invalid: One element in SearchSchema is not defined in attribute definitions")
		}
		switch e.SearchSchemaElementType {
		case "HASH":
			hashes++
		case "INLINE_FILTER":
		default:
			return validation("1 validation error detected: Value '%s' at 'searchSchema.member.searchSchemaElementType' failed to satisfy constraint: Member must satisfy enum value set: [HASH, INLINE_FILTER]", e.SearchSchemaElementType)
		}
	}
	if hashes > 1 {
		return validation("One or more parameter values were invalid: SearchSchema can have at most one HASH element")
	}
	for _, h := range have {
		if h.IndexName == x.IndexName {
			return validation("One or more parameter values were invalid: Duplicate index name: %s", x.IndexName)
		}
		if h.VectorAttribute.AttributeName == x.VectorAttribute.AttributeName && h.Dimensions != x.Dimensions {
			return validation("One or more parameter values were invalid: Vector indexes on attribute %s must have the same number of dimensions", x.VectorAttribute.AttributeName)
		}
	}
	return nil
}

func (s *VectorStandIn) updateTable(w http.ResponseWriter, r *http.Request, body []byte) {
	req, raw, ok := decodeTableRequest(w, body)
	if !ok {
		return
	}
	if len(req.VectorIndexUpdates) == 0 {
		s.forwardTable(w, r, body, req.TableName)
		return
	}
	if len(req.VectorIndexUpdates) > 1 {
		sendAPIError(w, validation("One or more parameter values were invalid: You can add or remove only one vector index per UpdateTable operation"))
		return
	}
	// The table's keys and attributes, as DynamoDB Local has them.
	status, described, err := s.call(r, "DescribeTable", []byte(`{"TableName":`+strconv.Quote(req.TableName)+`}`))
	if err != nil || status != http.StatusOK {
		s.answerOrError(w, status, described, err)
		return
	}
	var d struct {
		Table struct {
			AttributeDefinitions []attrDef
			KeySchema            []struct{ AttributeName string }
		}
	}
	_ = json.Unmarshal(described, &d)

	s.mu.Lock()
	t := s.tables[req.TableName]
	if t == nil {
		t = &vectorTable{}
		for _, k := range d.Table.KeySchema {
			t.keys = append(t.keys, k.AttributeName)
		}
	}
	u := req.VectorIndexUpdates[0]
	switch {
	case u.Create != nil:
		defs := slices.Concat(d.Table.AttributeDefinitions, t.extraAttrs, req.AttributeDefinitions)
		if err := checkVectorIndex(u.Create, defs, t.indexes); err != nil {
			s.mu.Unlock()
			sendAPIError(w, err)
			return
		}
		u.Create.activeAt, u.Create.added = time.Now().Add(s.buildTime), true
		t.indexes = append(t.indexes, u.Create)
		for _, a := range req.AttributeDefinitions {
			known := slices.ContainsFunc(slices.Concat(d.Table.AttributeDefinitions, t.extraAttrs), func(h attrDef) bool { return h.AttributeName == a.AttributeName })
			if !known && t.searchSchemaUses(a.AttributeName) {
				t.extraAttrs = append(t.extraAttrs, a)
			}
		}
	case u.Delete != nil:
		i := slices.IndexFunc(t.indexes, func(x *vectorIndex) bool { return x.IndexName == u.Delete.IndexName })
		if i < 0 {
			s.mu.Unlock()
			sendAPIError(w, notFound("Requested resource not found: Vector index: %s not found", u.Delete.IndexName))
			return
		}
		t.indexes = slices.Delete(t.indexes, i, i+1)
	default:
		s.mu.Unlock()
		sendAPIError(w, validation("One or more parameter values were invalid: VectorIndexUpdate must have Create or Delete"))
		return
	}
	s.tables[req.TableName] = t
	s.mu.Unlock()

	// Anything else the call changes is DynamoDB Local's to apply.
	delete(raw, "VectorIndexUpdates")
	delete(raw, "AttributeDefinitions")
	if len(raw) > 1 {
		forwarded, _ := json.Marshal(raw)
		status, answer, err := s.call(r, "UpdateTable", forwarded)
		if err != nil {
			sendAPIError(w, err)
			return
		}
		s.answerTable(w, status, answer, "TableDescription", req.TableName)
		return
	}
	s.answerTable(w, http.StatusOK, []byte(`{"TableDescription":`+string(mustRaw(described, "Table"))+`}`), "TableDescription", req.TableName)
}

func mustRaw(doc []byte, member string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(doc, &m)
	return m[member]
}

func (s *VectorStandIn) describeTable(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct{ TableName string }
	_ = json.Unmarshal(body, &req)
	s.forwardTable(w, r, body, req.TableName)
}

func (s *VectorStandIn) deleteTable(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct{ TableName string }
	_ = json.Unmarshal(body, &req)
	status, answer, err := s.call(r, "DeleteTable", body)
	if err == nil && status == http.StatusOK {
		s.mu.Lock()
		delete(s.tables, req.TableName)
		s.mu.Unlock()
	}
	s.answerOrError(w, status, answer, err)
}

// forwardTable passes a table call through and adds the table's vector
// indexes to its answer.
func (s *VectorStandIn) forwardTable(w http.ResponseWriter, r *http.Request, body []byte, table string) {
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	status, answer, err := s.call(r, op, body)
	if err != nil {
		sendAPIError(w, err)
		return
	}
	member := "TableDescription"
	if op == "DescribeTable" {
		member = "Table"
	}
	s.answerTable(w, status, answer, member, table)
}

// answerTable answers a table call's answer from DynamoDB Local with the
// table's vector indexes and their attribute definitions added.
func (s *VectorStandIn) answerTable(w http.ResponseWriter, status int, answer []byte, member, table string) {
	s.mu.Lock()
	t := s.tables[table]
	var indexes []map[string]any
	var extra []attrDef
	if t != nil && status == http.StatusOK {
		now := time.Now()
		for _, x := range t.indexes {
			state, building := "ACTIVE", !x.active(now)
			if building {
				state = "CREATING"
			}
			d := map[string]any{
				"IndexName":        x.IndexName,
				"IndexArn":         "arn:aws:dynamodb:" + Region + ":000000000000:table/" + table + "/index/" + x.IndexName,
				"IndexStatus":      state,
				"VectorAttribute":  x.VectorAttribute,
				"Dimensions":       x.Dimensions,
				"DistanceFunction": x.DistanceFunction,
				"Projection":       x.Projection,
				"IndexSizeBytes":   0,
				"ItemCount":        0,
			}
			if len(x.SearchSchema) > 0 {
				d["SearchSchema"] = x.SearchSchema
			}
			if x.added {
				d["Backfilling"] = building
			}
			indexes = append(indexes, d)
		}
		extra = slices.Clone(t.extraAttrs)
	}
	s.mu.Unlock()
	if len(indexes) == 0 {
		s.answerOrError(w, status, answer, nil)
		return
	}
	var doc map[string]json.RawMessage
	var desc map[string]json.RawMessage
	if json.Unmarshal(answer, &doc) != nil || json.Unmarshal(doc[member], &desc) != nil {
		s.answerOrError(w, status, answer, nil)
		return
	}
	desc["VectorIndexes"], _ = json.Marshal(indexes)
	if len(extra) > 0 {
		var defs []attrDef
		_ = json.Unmarshal(desc["AttributeDefinitions"], &defs)
		desc["AttributeDefinitions"], _ = json.Marshal(append(defs, extra...))
	}
	doc[member], _ = json.Marshal(desc)
	out, _ := json.Marshal(doc)
	s.answerOrError(w, status, out, nil)
}

func (s *VectorStandIn) answerOrError(w http.ResponseWriter, status int, answer []byte, err error) {
	if err != nil {
		sendAPIError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

// call makes one DynamoDB call on DynamoDB Local, signed as the local
// clients sign (DynamoDB Local takes any credentials), in the context of
// the request being answered.
func (s *VectorStandIn) call(r *http.Request, op string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, s.upstream+"/", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local"}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, req, hex.EncodeToString(sum[:]), "dynamodb", Region, time.Now()); err != nil {
		return 0, nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// searchRequest is SearchVectors' input on the wire.
type searchRequest struct {
	TableName                 string
	IndexName                 string
	SearchVector              []struct{ N *string }
	TopK                      *int
	SearchConditionExpression string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]json.RawMessage
	ProjectionExpression      string
	ReturnConsumedCapacity    string
}

type searchResult struct {
	Item  map[string]json.RawMessage
	Score float64
}

func (s *VectorStandIn) search(w http.ResponseWriter, r *http.Request, body []byte) {
	var req searchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		sendAPIError(w, validation("Malformed SearchVectors request"))
		return
	}
	topK := 0
	if req.TopK != nil {
		topK = *req.TopK
	}
	s.mu.Lock()
	s.searches = append(s.searches, VectorSearch{
		Table: req.TableName, Index: req.IndexName, Condition: req.SearchConditionExpression,
		Names: req.ExpressionAttributeNames, Values: req.ExpressionAttributeValues, TopK: topK,
	})
	var index vectorIndex
	var keys []string
	t := s.tables[req.TableName]
	found := false
	if t != nil {
		keys = t.keys
		for _, x := range t.indexes {
			if x.IndexName == req.IndexName {
				index, found = *x, true
			}
		}
	}
	s.mu.Unlock()

	query, err := checkSearch(req, index, found)
	if err != nil {
		sendAPIError(w, err)
		return
	}
	results, compared, err := s.rank(r, req, index, query, topK)
	if err != nil {
		sendAPIError(w, err)
		return
	}
	answerBytes := 0
	for i := range results {
		results[i].Item, err = project(results[i].Item, index, keys, req.ProjectionExpression, req.ExpressionAttributeNames)
		if err != nil {
			sendAPIError(w, err)
			return
		}
		for k, v := range results[i].Item {
			answerBytes += len(k) + len(v)
		}
	}
	out := map[string]any{"SearchResults": results}
	if req.ReturnConsumedCapacity == "TOTAL" || req.ReturnConsumedCapacity == "INDEXES" {
		// The stand-in's model of VectorSearchRequestBytes: the vectors it
		// compared (4 bytes a dimension) and what it answers. AWS's index
		// examines a number of vectors that grows with the logarithm of the
		// partition's, so this is an upper bound.
		out["ConsumedCapacity"] = map[string]float64{"VectorSearchRequestBytes": float64(compared*int(index.Dimensions)*4 + answerBytes)}
	}
	doc, _ := json.Marshal(out)
	s.answerOrError(w, http.StatusOK, doc, nil)
}

// checkSearch refuses what DynamoDB refuses, in its words, and returns the
// search vector.
func checkSearch(req searchRequest, index vectorIndex, found bool) ([]float64, error) {
	switch {
	case req.TableName == "":
		return nil, validation("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null")
	case req.IndexName == "":
		return nil, validation("1 validation error detected: Value null at 'indexName' failed to satisfy constraint: Member must not be null")
	case req.TopK == nil || *req.TopK < 1 || *req.TopK > 100:
		return nil, validation("Provided TopK value is out of valid range")
	case !found:
		// The stand-in knows every table with a vector index; others may
		// still exist in DynamoDB Local, without one.
		return nil, validation("The table does not have the specified index: %s", req.IndexName)
	case !index.active(time.Now()):
		return nil, validation("Cannot search backfilling vector index: %s", req.IndexName)
	case int64(len(req.SearchVector)) != index.Dimensions:
		return nil, validation("The SearchVector has %d dimensions; the vector index %s has %d", len(req.SearchVector), req.IndexName, index.Dimensions)
	}
	query := make([]float64, len(req.SearchVector))
	for i, v := range req.SearchVector {
		if v.N == nil {
			return nil, validation("One or more parameter values were invalid: SearchVector element %d is not a number", i)
		}
		f, err := strconv.ParseFloat(*v.N, 32)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, validation("One or more parameter values were invalid: SearchVector element %d is not a 32-bit floating point number", i)
		}
		query[i] = f
	}
	if err := checkCondition(req, index); err != nil {
		return nil, err
	}
	return query, nil
}

// tokens of a condition expression: names, #aliases, :values, operators.
var condToken = regexp.MustCompile(`[#:]?[A-Za-z0-9_.\[\]-]+|<>|<=|>=|[=<>(),]`)

var condKeywords = map[string]bool{"AND": true, "OR": true, "NOT": true, "IN": true, "BETWEEN": true}

// checkCondition holds the SearchConditionExpression to DynamoDB's rules
// for vector indexes: only the search schema's top-level attributes, and
// the HASH attribute's value given by equality.
func checkCondition(req searchRequest, index vectorIndex) error {
	cond := strings.TrimSpace(req.SearchConditionExpression)
	hash := index.hashKey()
	if cond == "" {
		if hash != "" {
			return validation("SearchConditionExpression must be provided when SearchSchema has a HASH key")
		}
		return nil
	}
	if len(index.SearchSchema) == 0 {
		return validation("SearchConditionExpression cannot be used on a vector index without a SearchSchema")
	}
	for _, tok := range condToken.FindAllString(cond, -1) {
		switch {
		case strings.HasPrefix(tok, ":"):
			if _, ok := req.ExpressionAttributeValues[tok]; !ok {
				return validation("Invalid SearchConditionExpression: An expression attribute value used in expression is not defined; attribute value: %s", tok)
			}
		case condKeywords[strings.ToUpper(tok)], len(tok) <= 2 && strings.ContainsAny(tok, "=<>(),"):
			if tok != "=" && tok != "(" && tok != ")" && strings.ToUpper(tok) != "AND" {
				return validation("Invalid comparator used in SearchConditionExpression")
			}
		default:
			name := resolveName(tok, req.ExpressionAttributeNames)
			if name == "" {
				return validation("Invalid SearchConditionExpression: An expression attribute name used in the document path is not defined; attribute name: %s", tok)
			}
			if !slices.ContainsFunc(index.SearchSchema, func(e searchSchemaElement) bool { return e.AttributeName == name }) {
				return validation("Invalid SearchConditionExpression: attribute %s is not in the vector index's SearchSchema", name)
			}
		}
	}
	if hash != "" && (VectorSearch{Condition: cond, Names: req.ExpressionAttributeNames, Values: req.ExpressionAttributeValues}).Value(hash) == "" {
		return validation("SearchConditionExpression must be provided when SearchSchema has a HASH key")
	}
	return nil
}

// conjuncts splits a condition at its top-level ANDs.
func conjuncts(cond string) []string {
	var parts []string
	depth, start := 0, 0
	upper := strings.ToUpper(cond)
	for i := 0; i < len(cond); i++ {
		switch cond[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && strings.HasPrefix(upper[i:], " AND ") {
			parts = append(parts, strings.Trim(cond[start:i], " ()"))
			start = i + len(" AND ")
		}
	}
	return append(parts, strings.Trim(cond[start:], " ()"))
}

// resolveName is an attribute name, an #alias resolved; "" for an alias
// not defined.
func resolveName(tok string, names map[string]string) string {
	if strings.HasPrefix(tok, "#") {
		return names[tok]
	}
	return tok
}

// rank reads the index's items that the condition selects from DynamoDB
// Local and keeps the topK nearest. It reports how many vectors it
// compared.
func (s *VectorStandIn) rank(r *http.Request, req searchRequest, index vectorIndex, query []float64, topK int) ([]searchResult, int, error) {
	names := map[string]string{"#standin_vector": index.VectorAttribute.AttributeName}
	for k, v := range req.ExpressionAttributeNames {
		names[k] = v
	}
	filter := "attribute_exists(#standin_vector)"
	if hash := index.hashKey(); hash != "" {
		names["#standin_hash"] = hash
		filter += " AND attribute_exists(#standin_hash)"
	}
	if c := strings.TrimSpace(req.SearchConditionExpression); c != "" {
		filter = "(" + c + ") AND " + filter
	}
	scan := map[string]any{"TableName": req.TableName, "FilterExpression": filter, "ExpressionAttributeNames": names}
	if len(req.ExpressionAttributeValues) > 0 {
		scan["ExpressionAttributeValues"] = req.ExpressionAttributeValues
	}
	var results []searchResult
	compared := 0
	for {
		body, _ := json.Marshal(scan)
		status, answer, err := s.call(r, "Scan", body)
		if err != nil {
			return nil, 0, err
		}
		if status != http.StatusOK {
			return nil, 0, &apiError{status, "InternalServerError", "vector stand-in: DynamoDB Local's scan failed: " + string(answer)}
		}
		var page struct {
			Items            []map[string]json.RawMessage
			LastEvaluatedKey map[string]json.RawMessage
		}
		if err := json.Unmarshal(answer, &page); err != nil {
			return nil, 0, err
		}
		for _, item := range page.Items {
			v, ok := vectorOf(item[index.VectorAttribute.AttributeName], int(index.Dimensions))
			if !ok {
				continue // AWS refuses such a write; the stand-in leaves it out of the index
			}
			compared++
			results = append(results, searchResult{Item: item, Score: distance(index.DistanceFunction, query, v)})
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		scan["ExclusiveStartKey"] = page.LastEvaluatedKey
	}
	higherFirst := index.DistanceFunction == "DOT_PRODUCT"
	sort.SliceStable(results, func(i, j int) bool {
		if higherFirst {
			return results[i].Score > results[j].Score
		}
		return results[i].Score < results[j].Score
	})
	if len(results) > topK {
		results = results[:topK]
	}
	return results, compared, nil
}

// vectorOf reads a vector attribute: a list of dims numbers.
func vectorOf(attr json.RawMessage, dims int) ([]float64, bool) {
	var av struct{ L []struct{ N *string } }
	if len(attr) == 0 || json.Unmarshal(attr, &av) != nil || len(av.L) != dims {
		return nil, false
	}
	v := make([]float64, dims)
	for i, e := range av.L {
		if e.N == nil {
			return nil, false
		}
		f, err := strconv.ParseFloat(*e.N, 32)
		if err != nil {
			return nil, false
		}
		v[i] = f
	}
	return v, true
}

// distance is the index's score of v against the query, as SearchVectors
// reports it: COSINE from 0 (identical) to 2 (opposite), EUCLIDEAN the
// distance, DOT_PRODUCT the product (higher is nearer).
func distance(fn string, q, v []float64) float64 {
	var dot, qq, vv, sq float64
	for i := range q {
		dot += q[i] * v[i]
		qq += q[i] * q[i]
		vv += v[i] * v[i]
		d := q[i] - v[i]
		sq += d * d
	}
	switch fn {
	case "EUCLIDEAN":
		return math.Sqrt(sq)
	case "DOT_PRODUCT":
		return dot
	}
	if qq == 0 || vv == 0 {
		return 1
	}
	return 1 - dot/math.Sqrt(qq*vv)
}

// project keeps what the index projects (the table's keys, the vector and
// the search schema's attributes, and the projection's), narrowed by a
// ProjectionExpression.
func project(item map[string]json.RawMessage, index vectorIndex, keys []string, expr string, names map[string]string) (map[string]json.RawMessage, error) {
	projected := func(attr string) bool {
		if index.Projection.ProjectionType == "ALL" || slices.Contains(keys, attr) || attr == index.VectorAttribute.AttributeName {
			return true
		}
		if slices.ContainsFunc(index.SearchSchema, func(e searchSchemaElement) bool { return e.AttributeName == attr }) {
			return true
		}
		return index.Projection.ProjectionType == "INCLUDE" && slices.Contains(index.Projection.NonKeyAttributes, attr)
	}
	out := map[string]json.RawMessage{}
	if strings.TrimSpace(expr) == "" {
		for k, v := range item {
			if projected(k) {
				out[k] = v
			}
		}
		return out, nil
	}
	for _, part := range strings.Split(expr, ",") {
		name := resolveName(strings.TrimSpace(part), names)
		if name == "" || strings.ContainsAny(name, ".[") {
			return nil, validation("Invalid ProjectionExpression: %s", strings.TrimSpace(part))
		}
		if !projected(name) {
			return nil, validation("One or more parameter values were invalid: ProjectionExpression names %s, which the vector index does not project", name)
		}
		if v, ok := item[name]; ok {
			out[name] = v
		}
	}
	return out, nil
}

func attrNames(defs []attrDef) string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.AttributeName
	}
	return strings.Join(names, ", ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Fronted is DynamoDB Local behind its vector indexes' stand-in, as the
// tests, make run and the bench reach it: every call goes through the
// stand-in.
type Fronted struct {
	*Server
	Vectors *VectorStandIn
}

// StartFronted starts DynamoDB Local, then the stand-in in front of it.
func StartFronted(ctx context.Context, opts Options) (*Fronted, error) {
	srv, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	vectors, err := StartVectorStandIn(srv.Endpoint(), VectorOptions{})
	if err != nil {
		return nil, errors.Join(err, srv.Stop())
	}
	return &Fronted{Server: srv, Vectors: vectors}, nil
}

// Endpoint is the stand-in's URL, the one to give the SDK.
func (f *Fronted) Endpoint() string { return f.Vectors.URL() }

// Stop closes the stand-in, then stops DynamoDB Local.
func (f *Fronted) Stop() error { return errors.Join(f.Vectors.Close(), f.Server.Stop()) }
