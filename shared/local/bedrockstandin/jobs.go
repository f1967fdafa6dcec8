package bedrockstandin

// The batch inference jobs: Bedrock's control plane answers
// CreateModelInvocationJob, GetModelInvocationJob, StopModelInvocationJob
// and ListModelInvocationJobs, and runs each job as Bedrock does, out of
// the caller's sight: it reads the job's JSONL input from S3, answers each
// record with the stand-in's model, writes <input>.out and
// manifest.json.out under <output>/<job id>/, and sends a "Batch Inference
// Job State Change" event at each change of the job's status. A stand-in
// for the feature DynamoDB Local and the local S3 know nothing of; the real
// SDK client (service/bedrock) talks to it.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A job's statuses, Bedrock's own (ModelInvocationJobStatus).
const (
	JobSubmitted          = "Submitted"
	JobValidating         = "Validating"
	JobScheduled          = "Scheduled"
	JobInProgress         = "InProgress"
	JobCompleted          = "Completed"
	JobPartiallyCompleted = "PartiallyCompleted"
	JobFailed             = "Failed"
	JobStopping           = "Stopping"
	JobStopped            = "Stopped"
	JobExpired            = "Expired"
)

// JobStateChange is the event's detail-type, and JobEventSource its
// source, as Bedrock sends them to EventBridge's default bus.
const (
	JobStateChange = "Batch Inference Job State Change"
	JobEventSource = "aws.bedrock"
)

// Markers in any record's modelInput that steer the whole job, so that a
// test or a person under make run can see each way a job ends.
const (
	// FailJobMarker makes the job fail in validation: Failed, with a
	// message and no output.
	FailJobMarker = "[standin:job-fail]"
	// ExpireJobMarker makes the job expire before it starts: Expired, as a
	// job that waited in Bedrock's queue past its TimeoutDurationInHours,
	// with no output.
	ExpireJobMarker = "[standin:job-expire]"
	// PartialJobMarker ends the job PartiallyCompleted at its record: that
	// record and those after it in the file are left unanswered, as a job
	// that ran out of time leaves them.
	PartialJobMarker = "[standin:job-partial]"
	// HoldJobMarker holds the job InProgress at its record until it is
	// stopped (StopModelInvocationJob): Stopped, with the records before it
	// answered.
	HoldJobMarker = "[standin:job-hold]"
)

// Jobs configure the stand-in's batch inference jobs (ServeJobs).
type Jobs struct {
	// S3 is the client a job reads its input and writes its output with,
	// as Bedrock does with the job's service role.
	S3 *s3.Client
	// Events is EventBridge's default bus: it is given each job state
	// change as Bedrock sends it. Nil sends none.
	Events func(context.Context, events.EventBridgeEvent)
	// Account is the AWS account in the jobs' ARNs and events; default
	// 123456789012.
	Account string
	// MinRecords is the fewest records a job takes: fewer fail its
	// validation, as Bedrock's minimum per job (100 for most models) does.
	// Zero takes any number.
	MinRecords int
	// MaxRecords is the most records a job takes; zero, Bedrock's 50,000.
	MaxRecords int
	// MaxUnfinished is the jobs that may be submitted or in progress at
	// once; one more is ServiceQuotaExceededException, as Bedrock's quota
	// per account and model answers. Zero, 20.
	MaxUnfinished int
}

// ServeJobs makes the stand-in serve batch inference jobs; before it,
// CreateModelInvocationJob is refused.
func (s *Server) ServeJobs(j Jobs) {
	if j.Account == "" {
		j.Account = "123456789012"
	}
	if j.MaxRecords == 0 {
		j.MaxRecords = 50_000
	}
	if j.MaxUnfinished == 0 {
		j.MaxUnfinished = 20
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs = &j
}

// LoseEvents makes the stand-in send no event for these statuses, as
// EventBridge's best-effort delivery may lose one.
func (s *Server) LoseEvents(statuses ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = append(s.lost, statuses...)
}

// job is one batch inference job.
type job struct {
	ID, ARN, Name, Model, Role, Token, InvocationType string
	Input, Output                                     string // s3:// URIs
	Hours                                             int32
	Region                                            string
	Submitted                                         time.Time

	// Guarded by Server.mu.
	status, message string
	modified, ended time.Time
	stop            chan struct{} // closed by StopModelInvocationJob
	done            chan struct{} // closed when the job ended and its last event was sent
}

// JobRecords are the records the stand-in's jobs have answered, as
// Requests are its runtime calls'.
func (s *Server) JobRecords() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jobAsked)
}

// JobEnded waits until the job (its ARN or id) has ended and its last
// event was given to Events, and reports its status.
func (s *Server) JobEnded(ctx context.Context, id string) (string, error) {
	s.mu.Lock()
	j := s.findJob(id)
	s.mu.Unlock()
	if j == nil {
		return "", fmt.Errorf("bedrockstandin: no job %s", id)
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-j.done:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return j.status, nil
}

// findJob is the job an identifier names, its ARN or its id; nil if none.
// The caller holds s.mu.
func (s *Server) findJob(id string) *job {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	for _, j := range s.jobList {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// serveJobs answers the four operations on /model-invocation-job(s); it
// reports false for any other path.
func (s *Server) serveJobs(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.EscapedPath()
	switch {
	case p == "/model-invocation-job" && r.Method == http.MethodPost:
		s.count("CreateModelInvocationJob")
		s.createJob(w, r)
	case p == "/model-invocation-jobs" && r.Method == http.MethodGet:
		s.count("ListModelInvocationJobs")
		s.listJobs(w, r)
	case strings.HasPrefix(p, "/model-invocation-job/"):
		rest := strings.TrimPrefix(p, "/model-invocation-job/")
		escaped, stop := strings.CutSuffix(rest, "/stop")
		id, err := url.PathUnescape(escaped)
		switch {
		case err != nil || id == "":
			return false
		case stop && r.Method == http.MethodPost:
			s.count("StopModelInvocationJob")
			s.stopJob(w, id)
		case !stop && r.Method == http.MethodGet:
			s.count("GetModelInvocationJob")
			s.getJob(w, id)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

type createJobRequest struct {
	JobName             string `json:"jobName"`
	RoleArn             string `json:"roleArn"`
	ClientRequestToken  string `json:"clientRequestToken"`
	ModelID             string `json:"modelId"`
	ModelInvocationType string `json:"modelInvocationType"`
	InputDataConfig     struct {
		S3InputDataConfig *struct {
			S3URI         string `json:"s3Uri"`
			S3InputFormat string `json:"s3InputFormat"`
		} `json:"s3InputDataConfig"`
	} `json:"inputDataConfig"`
	OutputDataConfig struct {
		S3OutputDataConfig *struct {
			S3URI string `json:"s3Uri"`
		} `json:"s3OutputDataConfig"`
	} `json:"outputDataConfig"`
	TimeoutDurationInHours *int32 `json:"timeoutDurationInHours"`
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request) {
	var req createJobRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "The request body could not be read: "+err.Error())
		return
	}
	in, out := req.InputDataConfig.S3InputDataConfig, req.OutputDataConfig.S3OutputDataConfig
	hours := int32(168)
	if req.TimeoutDurationInHours != nil {
		hours = *req.TimeoutDurationInHours
	}
	var bad string
	switch {
	case !jobName.MatchString(req.JobName):
		bad = "jobName must be 1 to 63 letters, digits, hyphens, plus signs and dots, starting with a letter or digit."
	case !strings.HasPrefix(req.RoleArn, "arn:aws:iam::"):
		bad = "roleArn must be the ARN of an IAM role."
	case req.ModelID == "":
		bad = "modelId is required."
	case req.ModelID == ImageModel:
		bad = "The model " + req.ModelID + " does not support batch inference."
	case in == nil || !isS3URI(in.S3URI) || (in.S3InputFormat != "" && in.S3InputFormat != "JSONL"):
		bad = "inputDataConfig.s3InputDataConfig must give an s3:// URI of JSONL input."
	case out == nil || !isS3URI(out.S3URI):
		bad = "outputDataConfig.s3OutputDataConfig must give an s3:// URI."
	case hours < 24 || hours > 168:
		bad = "timeoutDurationInHours must be between 24 and 168."
	case req.ModelInvocationType != "" && req.ModelInvocationType != "InvokeModel" && req.ModelInvocationType != "Converse":
		bad = "modelInvocationType must be InvokeModel or Converse."
	}
	if bad != "" {
		sendError(w, http.StatusBadRequest, "ValidationException", bad)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.jobs
	if cfg == nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "This stand-in was started without batch inference jobs (ServeJobs).")
		return
	}
	if req.ClientRequestToken != "" {
		// The same token is the same request: its job, not a second one.
		for _, j := range s.jobList {
			if j.Token == req.ClientRequestToken {
				sendJSON(w, map[string]string{"jobArn": j.ARN})
				return
			}
		}
	}
	unfinished := 0
	for _, j := range s.jobList {
		if !ended(j.status) {
			unfinished++
		}
	}
	if unfinished >= cfg.MaxUnfinished {
		sendError(w, http.StatusBadRequest, "ServiceQuotaExceededException",
			fmt.Sprintf("You have reached the quota of %d batch inference jobs submitted or in progress.", cfg.MaxUnfinished))
		return
	}
	region := signedRegionOf(r)
	id := strings.ToLower(rand.Text()[:12])
	now := time.Now().UTC()
	j := &job{
		ID: id, ARN: fmt.Sprintf("arn:aws:bedrock:%s:%s:model-invocation-job/%s", region, cfg.Account, id),
		Name: req.JobName, Model: req.ModelID, Role: req.RoleArn, Token: req.ClientRequestToken,
		InvocationType: req.ModelInvocationType, Input: in.S3URI, Output: out.S3URI, Hours: hours,
		Region: region, Submitted: now,
		status: JobSubmitted, modified: now, stop: make(chan struct{}), done: make(chan struct{}),
	}
	s.jobList = append(s.jobList, j)
	go s.run(*cfg, j)
	sendJSON(w, map[string]string{"jobArn": j.ARN})
}

// jobName is Bedrock's pattern for a job's name.
var jobName = regexp.MustCompile(`^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63}$`)

func isS3URI(u string) bool {
	bucket, _, ok := splitS3URI(u)
	return ok && bucket != ""
}

func splitS3URI(u string) (bucket, key string, ok bool) {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, true
}

func ended(status string) bool {
	switch status {
	case JobCompleted, JobPartiallyCompleted, JobFailed, JobStopped, JobExpired:
		return true
	}
	return false
}

func (s *Server) getJob(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.findJob(id)
	if j == nil {
		sendError(w, http.StatusNotFound, "ResourceNotFoundException", "The batch inference job "+id+" was not found.")
		return
	}
	sendJSON(w, j.describe())
}

// describe is the job as GetModelInvocationJob and a list's summary give
// it. The caller holds s.mu.
func (j *job) describe() map[string]any {
	d := map[string]any{
		"jobArn": j.ARN, "jobName": j.Name, "modelId": j.Model, "roleArn": j.Role,
		"status": j.status, "submitTime": j.Submitted.Format(time.RFC3339Nano),
		"lastModifiedTime":       j.modified.Format(time.RFC3339Nano),
		"timeoutDurationInHours": j.Hours,
		"jobExpirationTime":      j.Submitted.Add(time.Duration(j.Hours) * time.Hour).Format(time.RFC3339Nano),
		"inputDataConfig":        map[string]any{"s3InputDataConfig": map[string]string{"s3Uri": j.Input, "s3InputFormat": "JSONL"}},
		"outputDataConfig":       map[string]any{"s3OutputDataConfig": map[string]string{"s3Uri": j.Output}},
	}
	if j.Token != "" {
		d["clientRequestToken"] = j.Token
	}
	if j.InvocationType != "" {
		d["modelInvocationType"] = j.InvocationType
	}
	if j.message != "" {
		d["message"] = j.message
	}
	if !j.ended.IsZero() {
		d["endTime"] = j.ended.Format(time.RFC3339Nano)
	}
	return d
}

func (s *Server) stopJob(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.findJob(id)
	switch {
	case j == nil:
		sendError(w, http.StatusNotFound, "ResourceNotFoundException", "The batch inference job "+id+" was not found.")
	case ended(j.status):
		sendError(w, http.StatusBadRequest, "ConflictException", "The batch inference job is "+j.status+" and cannot be stopped.")
	default:
		select {
		case <-j.stop:
		default:
			close(j.stop)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after, before time.Time
	for name, t := range map[string]*time.Time{"submitTimeAfter": &after, "submitTimeBefore": &before} {
		if v := q.Get(name); v != "" {
			parsed, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				sendError(w, http.StatusBadRequest, "ValidationException", name+" must be a date-time.")
				return
			}
			*t = parsed
		}
	}
	maxResults, start := 1000, 0
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			sendError(w, http.StatusBadRequest, "ValidationException", "maxResults must be between 1 and 1000.")
			return
		}
		maxResults = n
	}
	if v := q.Get("nextToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			sendError(w, http.StatusBadRequest, "ValidationException", "nextToken is not one this stand-in gave.")
			return
		}
		start = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var matched []*job
	for _, j := range s.jobList {
		if (q.Get("statusEquals") == "" || j.status == q.Get("statusEquals")) &&
			strings.Contains(j.Name, q.Get("nameContains")) &&
			(after.IsZero() || j.Submitted.After(after)) && (before.IsZero() || j.Submitted.Before(before)) {
			matched = append(matched, j)
		}
	}
	if q.Get("sortOrder") != "Ascending" {
		// Bedrock lists the newest first unless asked otherwise.
		slices.Reverse(matched)
	}
	summaries := []any{}
	for _, j := range matched[min(start, len(matched)):min(start+maxResults, len(matched))] {
		summaries = append(summaries, j.describe())
	}
	answer := map[string]any{"invocationJobSummaries": summaries}
	if start+maxResults < len(matched) {
		answer["nextToken"] = strconv.Itoa(start + maxResults)
	}
	sendJSON(w, answer)
}

// failure is why a job failed, as its message says it: a sentence, as
// Bedrock's messages are.
type jobFailure string

func (f jobFailure) Error() string { return string(f) }

func failure(format string, args ...any) error {
	return jobFailure(fmt.Sprintf(format, args...))
}

// record is one line of a job's input.
type record struct {
	RecordID   string          `json:"recordId"`
	ModelInput json.RawMessage `json:"modelInput"`
}

// inputFile is one JSONL file of a job's input, as read.
type inputFile struct {
	bucket, key string
	records     []record
}

// run takes the job through its statuses to its end, as Bedrock does.
func (s *Server) run(cfg Jobs, j *job) {
	defer close(j.done)
	ctx := context.Background()
	s.setStatus(ctx, cfg, j, JobSubmitted, "")
	s.setStatus(ctx, cfg, j, JobValidating, "")
	files, err := readInput(ctx, cfg, j)
	if err != nil {
		s.setStatus(ctx, cfg, j, JobFailed, err.Error())
		return
	}
	if anyRecordHas(files, FailJobMarker) {
		s.setStatus(ctx, cfg, j, JobFailed, "The stand-in failed the job, as a record asked ("+FailJobMarker+").")
		return
	}
	s.setStatus(ctx, cfg, j, JobScheduled, "")
	if anyRecordHas(files, ExpireJobMarker) {
		s.setStatus(ctx, cfg, j, JobExpired, "The job did not start within its timeoutDurationInHours.")
		return
	}
	s.setStatus(ctx, cfg, j, JobInProgress, "")
	end, message := JobCompleted, ""
	var answered [][]answer
	var totals manifest
	for _, f := range files {
		var lines []answer
		for _, rec := range f.records {
			totals.TotalRecordCount++
			if end != JobCompleted {
				continue
			}
			if bytes.Contains(rec.ModelInput, []byte(PartialJobMarker)) {
				end, message = JobPartiallyCompleted, "Not all records could be processed within the job's time."
				continue
			}
			if bytes.Contains(rec.ModelInput, []byte(HoldJobMarker)) {
				s.hold(j)
			}
			select {
			case <-j.stop:
				end, message = JobStopped, "The job was stopped."
				continue
			default:
			}
			a := s.answerRecord(j, rec)
			totals.count(a)
			lines = append(lines, a)
		}
		answered = append(answered, lines)
	}
	if end == JobStopped {
		s.setStatus(ctx, cfg, j, JobStopping, message)
	}
	if err := writeOutput(ctx, cfg, j, files, answered, totals); err != nil {
		end, message = JobFailed, err.Error()
	}
	s.setStatus(ctx, cfg, j, end, message)
}

// hold waits until the job is stopped or the stand-in closes.
func (s *Server) hold(j *job) {
	select {
	case <-j.stop:
	case <-s.closed:
	}
}

func anyRecordHas(files []inputFile, marker string) bool {
	for _, f := range files {
		for _, r := range f.records {
			if bytes.Contains(r.ModelInput, []byte(marker)) {
				return true
			}
		}
	}
	return false
}

// readInput reads the job's input: the one object its URI names, or every
// .jsonl object under it when it ends in a slash. An error is the job's
// failure message.
func readInput(ctx context.Context, cfg Jobs, j *job) ([]inputFile, error) {
	bucket, key, _ := splitS3URI(j.Input)
	keys := []string{key}
	if key == "" || strings.HasSuffix(key, "/") {
		keys = nil
		pages := s3.NewListObjectsV2Paginator(cfg.S3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, failure("The input location %s could not be listed: %v", j.Input, err)
			}
			for _, o := range page.Contents {
				if strings.HasSuffix(aws.ToString(o.Key), ".jsonl") {
					keys = append(keys, aws.ToString(o.Key))
				}
			}
		}
		if len(keys) == 0 {
			return nil, failure("No .jsonl file was found under %s.", j.Input)
		}
	}
	var files []inputFile
	total := 0
	for _, k := range keys {
		obj, err := cfg.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if err != nil {
			return nil, failure("The input file s3://%s/%s could not be read: %v", bucket, k, err)
		}
		f := inputFile{bucket: bucket, key: k}
		lines := bufio.NewScanner(obj.Body)
		lines.Buffer(nil, 10<<20)
		for n := 1; lines.Scan(); n++ {
			if len(bytes.TrimSpace(lines.Bytes())) == 0 {
				continue
			}
			var rec record
			if err := json.Unmarshal(lines.Bytes(), &rec); err != nil || rec.RecordID == "" || len(rec.ModelInput) == 0 || rec.ModelInput[0] != '{' {
				obj.Body.Close()
				return nil, failure("Line %d of s3://%s/%s is not a record: a JSON object with a recordId and a modelInput object.", n, bucket, k)
			}
			f.records = append(f.records, rec)
		}
		obj.Body.Close()
		if err := lines.Err(); err != nil {
			return nil, failure("The input file s3://%s/%s could not be read: %v", bucket, k, err)
		}
		total += len(f.records)
		files = append(files, f)
	}
	switch {
	case total < cfg.MinRecords:
		return nil, failure("The job has %d records, fewer than the minimum of %d records per batch inference job.", total, cfg.MinRecords)
	case total > cfg.MaxRecords:
		return nil, failure("The job has %d records, more than the maximum of %d records per batch inference job.", total, cfg.MaxRecords)
	}
	return files, nil
}

// answer is one line of a job's output: its record's answer, or the error
// that replaces it.
type answer struct {
	RecordID    string          `json:"recordId"`
	ModelInput  json.RawMessage `json:"modelInput"`
	ModelOutput map[string]any  `json:"modelOutput,omitempty"`
	Error       *recordError    `json:"error,omitempty"`
}

type recordError struct {
	ErrorCode    int    `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
}

// answerRecord runs the stand-in's model over one record. Its faults are
// those a prompt's markers and InjectWhere's rules ask for; the queued
// faults of Inject are the runtime calls'.
func (s *Server) answerRecord(j *job, rec record) answer {
	a := answer{RecordID: rec.RecordID, ModelInput: rec.ModelInput}
	c, bad := readConversation(rec.ModelInput)
	if bad != nil {
		a.Error = &recordError{bad.status, bad.message}
		return a
	}
	r := c.request(j.Model)
	s.mu.Lock()
	s.jobAsked = append(s.jobAsked, r)
	f := s.ruleOrMarker(r)
	s.mu.Unlock()
	if e := f.answer(); e != nil {
		a.Error = &recordError{e.status, e.message}
		return a
	}
	a.ModelOutput = c.reply(f == BlockedOutput)
	return a
}

// manifest is manifest.json.out, the job's summary.
type manifest struct {
	TotalRecordCount     int `json:"totalRecordCount"`
	ProcessedRecordCount int `json:"processedRecordCount"`
	SuccessRecordCount   int `json:"successRecordCount"`
	ErrorRecordCount     int `json:"errorRecordCount"`
	InputTokenCount      int `json:"inputTokenCount"`
	OutputTokenCount     int `json:"outputTokenCount"`
}

func (m *manifest) count(a answer) {
	m.ProcessedRecordCount++
	if a.Error != nil {
		m.ErrorRecordCount++
		return
	}
	m.SuccessRecordCount++
	if usage, ok := a.ModelOutput["usage"].(map[string]int); ok {
		m.InputTokenCount += usage["inputTokens"]
		m.OutputTokenCount += usage["outputTokens"]
	}
}

// writeOutput writes each input file's answers to <output>/<job id>/<file
// name>.out, in an order of its own (Bedrock does not keep the input's:
// the stand-in writes them last first, so that no reader comes to rely on
// it), and the manifest beside them.
func writeOutput(ctx context.Context, cfg Jobs, j *job, files []inputFile, answered [][]answer, totals manifest) error {
	bucket, prefix, _ := splitS3URI(j.Output)
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	prefix += j.ID + "/"
	put := func(key string, body []byte) error {
		_, err := cfg.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			return failure("The output could not be written to s3://%s/%s: %v", bucket, key, err)
		}
		return nil
	}
	for i, f := range files {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		for _, a := range slices.Backward(answered[i]) {
			if err := enc.Encode(a); err != nil {
				return err
			}
		}
		if err := put(prefix+path.Base(f.key)+".out", out.Bytes()); err != nil {
			return err
		}
	}
	m, err := json.Marshal(totals)
	if err != nil {
		return err
	}
	return put(prefix+"manifest.json.out", m)
}

// setStatus moves the job to a status and sends its event, unless the
// status is one whose events are lost.
func (s *Server) setStatus(ctx context.Context, cfg Jobs, j *job, status, message string) {
	s.mu.Lock()
	now := time.Now().UTC()
	j.status, j.message, j.modified = status, message, now
	if ended(status) {
		j.ended = now
	}
	lost := slices.Contains(s.lost, status)
	s.mu.Unlock()
	if cfg.Events == nil || lost {
		return
	}
	cfg.Events(ctx, j.event(cfg.Account, status, message, now))
}

// event is the job's state change as Bedrock sends it to EventBridge.
func (j *job) event(account, status, message string, at time.Time) events.EventBridgeEvent {
	model := j.Model
	if !strings.HasPrefix(model, "arn:") {
		model = "arn:aws:bedrock:" + j.Region + "::foundation-model/" + model
	}
	detail, _ := json.Marshal(map[string]string{
		"version": "0.0", "accountId": account,
		"batchJobName": j.Name, "batchJobArn": j.ARN, "batchModelId": model,
		"status": status, "failureMessage": message,
		"creationTime": j.Submitted.Format("Jan 2, 2006, 3:04:05 PM"),
	})
	return events.EventBridgeEvent{
		Version: "0", ID: rand.Text(), DetailType: JobStateChange, Source: JobEventSource,
		AccountID: account, Time: at, Region: j.Region, Resources: []string{j.ARN}, Detail: detail,
	}
}

// signedRegionOf is the region the request was signed for.
func signedRegionOf(r *http.Request) string {
	if m := signedRegion.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		return m[1]
	}
	return "us-east-1"
}
