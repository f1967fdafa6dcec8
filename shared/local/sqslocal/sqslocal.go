// Package sqslocal is an SQS server for the local stack and tests, in
// process, on 127.0.0.1, in memory. It speaks SQS's AWS JSON 1.0 protocol
// to the SDK's own sqs client, which is all today's client speaks: goaws
// v0.4.5, the newest the module proxy serves, answers only the query
// protocol the client dropped in v1.27 (2023), and an older client does
// not run on the current SDK core. So this serves the part of SQS the
// webhook queue uses, with its semantics: a received message is hidden for
// its visibility timeout under a fresh receipt handle, counted in
// ApproximateReceiveCount, and moved to the dead-letter queue of its
// RedrivePolicy once received maxReceiveCount times without being deleted.
package sqslocal

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Account and Region name the queues' URLs and ARNs.
const (
	Account = "000000000000"
	Region  = "us-east-1"
)

// Options configure a server.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0 (a free port).
	Addr string
	// Now is the clock visibility timeouts and delays run on; time.Now
	// when nil. Tests move it forward instead of sleeping.
	Now func() time.Time
}

// Clock is a time a test moves by hand, for Options.Now (and whatever
// else in the test must share the queue's time): visibility timeouts and
// delays pass without waiting.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// Server is a running local SQS.
type Server struct {
	url string
	srv *http.Server
	now func() time.Time

	mu     sync.Mutex
	queues map[string]*queue // by name
}

type queue struct {
	name       string
	visibility time.Duration
	dlq        string // the dead-letter queue's name; "" for none
	maxReceive int
	messages   []*message
}

type message struct {
	id, body, handle string
	sent, visibleAt  time.Time
	receives         int
}

// Start serves until Close.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("sqslocal: %w", err)
	}
	s := &Server{url: "http://" + ln.Addr().String(), now: opts.Now, queues: map[string]*queue{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the endpoint for an SQS client (its BaseEndpoint).
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// QueueURL is the URL of the queue name, as CreateQueue answers it.
func (s *Server) QueueURL(name string) string { return QueueURL(s.url, name) }

// QueueURL is the URL of the queue name on the server at endpoint.
func QueueURL(endpoint, name string) string { return endpoint + "/" + Account + "/" + name }

// ARN is the ARN of the queue name, as a RedrivePolicy names it.
func ARN(name string) string { return "arn:aws:sqs:" + Region + ":" + Account + ":" + name }

// apiError is an SQS error as the JSON protocol carries it.
type apiError struct {
	status     int
	code, msg  string
	queryError string // x-amzn-query-error, which the SDK maps back to the old codes
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func invalid(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf(format, args...), "InvalidParameterValue;Sender"}
}

var errNoQueue = &apiError{http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.", "AWS.SimpleQueueService.NonExistentQueue;Sender"}

var errHandle = &apiError{http.StatusBadRequest, "ReceiptHandleIsInvalid", "The receipt handle is not valid.", "ReceiptHandleIsInvalid;Sender"}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	action, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	if r.Method != http.MethodPost || !ok {
		writeErr(w, &apiError{http.StatusBadRequest, "InvalidAction", "only AWS JSON 1.0 requests are served", "InvalidAction;Sender"})
		return
	}
	var in request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
		writeErr(w, invalid("body: %v", err))
		return
	}
	s.mu.Lock()
	var out any
	var err error
	switch action {
	case "CreateQueue":
		out, err = s.createQueue(in)
	case "GetQueueUrl":
		out, err = s.getQueueURL(in)
	case "GetQueueAttributes":
		out, err = s.getQueueAttributes(in)
	case "SendMessage":
		out, err = s.sendMessage(in)
	case "SendMessageBatch":
		out, err = s.sendMessageBatch(in)
	case "ReceiveMessage":
		out, err = s.receive(in)
	case "DeleteMessage":
		out, err = s.deleteMessage(in)
	case "DeleteMessageBatch":
		out, err = s.deleteMessageBatch(in)
	case "ChangeMessageVisibility":
		out, err = s.changeVisibility(in)
	default:
		err = &apiError{http.StatusBadRequest, "InvalidAction", "sqslocal does not serve " + action, "InvalidAction;Sender"}
	}
	s.mu.Unlock()
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{http.StatusInternalServerError, "InternalError", err.Error(), "InternalError;Receiver"}
		}
		writeErr(w, ae)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(out)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-query-error", e.queryError)
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + e.code, "message": e.msg})
}

// request holds the members of every action served.
type request struct {
	QueueName           string
	QueueURL            string `json:"QueueUrl"`
	Attributes          map[string]string
	MessageBody         string
	MessageAttributes   map[string]any
	DelaySeconds        int
	Entries             []entry
	MaxNumberOfMessages int
	VisibilityTimeout   *int
	WaitTimeSeconds     int
	ReceiptHandle       string
}

type entry struct {
	ID            string `json:"Id"`
	MessageBody   string
	DelaySeconds  int
	ReceiptHandle string
}

func (s *Server) createQueue(in request) (any, error) {
	if in.QueueName == "" {
		return nil, invalid("QueueName is required")
	}
	if q := s.queues[in.QueueName]; q != nil {
		return map[string]string{"QueueUrl": s.QueueURL(q.name)}, nil
	}
	q := &queue{name: in.QueueName, visibility: 30 * time.Second}
	if v, ok := in.Attributes["VisibilityTimeout"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 43200 {
			return nil, invalid("VisibilityTimeout %q", v)
		}
		q.visibility = time.Duration(n) * time.Second
	}
	if v, ok := in.Attributes["RedrivePolicy"]; ok {
		var p struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
			MaxReceiveCount     any    `json:"maxReceiveCount"` // SQS takes "5" and 5
		}
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return nil, invalid("RedrivePolicy: %v", err)
		}
		name, ok := strings.CutPrefix(p.DeadLetterTargetArn, ARN(""))
		if !ok || s.queues[name] == nil {
			return nil, invalid("RedrivePolicy: no dead-letter queue %q", p.DeadLetterTargetArn)
		}
		n, err := strconv.Atoi(strings.Trim(fmt.Sprint(p.MaxReceiveCount), `"`))
		if err != nil || n < 1 || n > 1000 {
			return nil, invalid("RedrivePolicy: maxReceiveCount %v", p.MaxReceiveCount)
		}
		q.dlq, q.maxReceive = name, n
	}
	s.queues[q.name] = q
	return map[string]string{"QueueUrl": s.QueueURL(q.name)}, nil
}

func (s *Server) queue(url string) (*queue, error) {
	name, ok := strings.CutPrefix(url, s.url+"/"+Account+"/")
	if q := s.queues[name]; ok && q != nil {
		return q, nil
	}
	return nil, errNoQueue
}

func (s *Server) getQueueURL(in request) (any, error) {
	if s.queues[in.QueueName] == nil {
		return nil, errNoQueue
	}
	return map[string]string{"QueueUrl": s.QueueURL(in.QueueName)}, nil
}

func (s *Server) getQueueAttributes(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	now := s.now()
	visible, hidden := 0, 0
	for _, m := range q.messages {
		if m.visibleAt.After(now) {
			hidden++
		} else {
			visible++
		}
	}
	return map[string]map[string]string{"Attributes": {
		"QueueArn":                              ARN(q.name),
		"VisibilityTimeout":                     strconv.Itoa(int(q.visibility / time.Second)),
		"ApproximateNumberOfMessages":           strconv.Itoa(visible),
		"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(hidden),
	}}, nil
}

type sent struct {
	ID               string `json:"Id,omitempty"`
	MessageID        string `json:"MessageId"`
	MD5OfMessageBody string
}

func (s *Server) send(q *queue, body string, delay int) (sent, error) {
	if body == "" || len(body) > 256<<10 {
		return sent{}, invalid("MessageBody must be 1 byte to 256 KiB")
	}
	if delay < 0 || delay > 900 {
		return sent{}, invalid("DelaySeconds %d", delay)
	}
	now := s.now()
	m := &message{id: token(), body: body, sent: now, visibleAt: now.Add(time.Duration(delay) * time.Second)}
	q.messages = append(q.messages, m)
	return sent{MessageID: m.id, MD5OfMessageBody: digest(body)}, nil
}

func (s *Server) sendMessage(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if len(in.MessageAttributes) > 0 {
		return nil, invalid("sqslocal does not keep MessageAttributes")
	}
	return s.send(q, in.MessageBody, in.DelaySeconds)
}

type batchFailure struct {
	ID          string `json:"Id"`
	Code        string
	Message     string
	SenderFault bool
}

func (s *Server) sendMessageBatch(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if len(in.Entries) == 0 || len(in.Entries) > 10 {
		return nil, invalid("a batch holds 1 to 10 entries")
	}
	out := struct {
		Successful []sent
		Failed     []batchFailure
	}{Successful: []sent{}, Failed: []batchFailure{}}
	for _, e := range in.Entries {
		r, err := s.send(q, e.MessageBody, e.DelaySeconds)
		if err != nil {
			out.Failed = append(out.Failed, batchFailure{e.ID, "InvalidParameterValue", err.Error(), true})
			continue
		}
		r.ID = e.ID
		out.Successful = append(out.Successful, r)
	}
	return out, nil
}

type received struct {
	MessageID     string `json:"MessageId"`
	ReceiptHandle string
	MD5OfBody     string
	Body          string
	Attributes    map[string]string
}

// receive returns up to MaxNumberOfMessages visible messages, moving to
// the dead-letter queue those already received maxReceiveCount times. It
// answers at once: long polling (WaitTimeSeconds) is refused rather than
// ignored, and the local stack's poller polls.
func (s *Server) receive(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	limit := in.MaxNumberOfMessages
	if limit == 0 {
		limit = 1
	}
	if limit < 1 || limit > 10 {
		return nil, invalid("MaxNumberOfMessages %d", limit)
	}
	vis := q.visibility
	if in.VisibilityTimeout != nil {
		if *in.VisibilityTimeout < 0 || *in.VisibilityTimeout > 43200 {
			return nil, invalid("VisibilityTimeout %d", *in.VisibilityTimeout)
		}
		vis = time.Duration(*in.VisibilityTimeout) * time.Second
	}
	if in.WaitTimeSeconds != 0 {
		return nil, invalid("sqslocal does not long-poll: WaitTimeSeconds must be 0")
	}
	return map[string][]received{"Messages": s.take(q, limit, vis)}, nil
}

func (s *Server) take(q *queue, limit int, vis time.Duration) []received {
	now := s.now()
	out := []received{}
	kept := q.messages[:0]
	for _, m := range q.messages {
		switch {
		case len(out) == limit || m.visibleAt.After(now):
			kept = append(kept, m)
		case q.dlq != "" && m.receives >= q.maxReceive:
			// Redrive: SQS moves a message on the receive past its limit,
			// keeping its id, body, sent time and count.
			m.visibleAt = now
			s.queues[q.dlq].messages = append(s.queues[q.dlq].messages, m)
		default:
			m.receives++
			m.handle = token()
			m.visibleAt = now.Add(vis)
			out = append(out, received{
				MessageID: m.id, ReceiptHandle: m.handle, MD5OfBody: digest(m.body), Body: m.body,
				Attributes: map[string]string{
					"ApproximateReceiveCount": strconv.Itoa(m.receives),
					"SentTimestamp":           strconv.FormatInt(m.sent.UnixMilli(), 10),
				},
			})
			kept = append(kept, m)
		}
	}
	q.messages = kept
	return out
}

// message returns the message a receipt handle is current for: a handle
// is valid until its message is received again or deleted.
func (q *queue) message(handle string) (int, error) {
	for i, m := range q.messages {
		if handle != "" && m.handle == handle {
			return i, nil
		}
	}
	return 0, errHandle
}

func (s *Server) deleteMessage(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	return struct{}{}, q.delete(in.ReceiptHandle)
}

func (q *queue) delete(handle string) error {
	i, err := q.message(handle)
	if err != nil {
		return err
	}
	q.messages = append(q.messages[:i], q.messages[i+1:]...)
	return nil
}

func (s *Server) deleteMessageBatch(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if len(in.Entries) == 0 || len(in.Entries) > 10 {
		return nil, invalid("a batch holds 1 to 10 entries")
	}
	type ok struct {
		ID string `json:"Id"`
	}
	out := struct {
		Successful []ok
		Failed     []batchFailure
	}{Successful: []ok{}, Failed: []batchFailure{}}
	for _, e := range in.Entries {
		if err := q.delete(e.ReceiptHandle); err != nil {
			out.Failed = append(out.Failed, batchFailure{e.ID, errHandle.code, errHandle.msg, true})
			continue
		}
		out.Successful = append(out.Successful, ok{e.ID})
	}
	return out, nil
}

// changeVisibility hides a received message for VisibilityTimeout seconds
// from now (0 shows it at once), as a sender's backoff does.
func (s *Server) changeVisibility(in request) (any, error) {
	q, err := s.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if in.VisibilityTimeout == nil || *in.VisibilityTimeout < 0 || *in.VisibilityTimeout > 43200 {
		return nil, invalid("VisibilityTimeout must be 0 to 43200")
	}
	i, err := q.message(in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	q.messages[i].visibleAt = s.now().Add(time.Duration(*in.VisibilityTimeout) * time.Second)
	return struct{}{}, nil
}

func token() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// digest is the MD5 the SDK checks each message body against.
func digest(body string) string {
	sum := md5.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}
