package bedrockstandin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	bedrocktypes "github.com/aws/aws-sdk-go-v2/service/bedrock/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/s3local"
)

// jobsRig is the stand-in serving jobs, the local S3 they read and write,
// EventBridge's bus with a rule for the jobs' state changes, and the
// control plane's real SDK client.
type jobsRig struct {
	standin *bedrockstandin.Server
	s3      *s3.Client
	client  *bedrock.Client
	bus     *lambdalocal.EventBus

	mu     sync.Mutex
	events []jobEvent // what the rule's function was given
}

type jobEvent struct {
	events.EventBridgeEvent
	Status, ARN, Name, Model, Message string
	// Outputs are the output objects there were when the function ran.
	Outputs []string
}

const bucket = "batch"

// everyStatus matches each state change; endStatuses a job's ends, as the
// service's rule will.
const (
	everyStatus = `{"source":["aws.bedrock"],"detail-type":["Batch Inference Job State Change"]}`
	endStatuses = `{"source":["aws.bedrock"],"detail-type":["Batch Inference Job State Change"],"detail":{"status":["Completed","PartiallyCompleted","Failed","Stopped","Expired"]}}`
)

func startJobs(t *testing.T, jobs bedrockstandin.Jobs, pattern string) *jobsRig {
	t.Helper()
	store, err := s3local.Start(s3local.Options{Bucket: bucket, Credentials: localCredentials})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r := &jobsRig{standin: startStandin(t), bus: lambdalocal.NewEventBus(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	r.s3 = s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(store.URL()), UsePathStyle: true, Credentials: localCredentials})
	r.client = bedrock.New(bedrock.Options{Region: "eu-west-1", Credentials: localCredentials, BaseEndpoint: aws.String(r.standin.URL())})
	if err := r.bus.Rule("BatchJobStateChange", pattern, time.Minute, r.handle); err != nil {
		t.Fatal(err)
	}
	jobs.S3, jobs.Events = r.s3, r.bus.Put
	r.standin.ServeJobs(jobs)
	return r
}

// handle is the rule's function: it keeps the event and what the job's
// output holds at that moment.
func (r *jobsRig) handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var ev jobEvent
	if err := json.Unmarshal(raw, &ev.EventBridgeEvent); err != nil {
		return nil, err
	}
	var d struct{ Status, BatchJobArn, BatchJobName, BatchModelId, FailureMessage string }
	if err := json.Unmarshal(ev.Detail, &d); err != nil {
		return nil, err
	}
	ev.Status, ev.ARN, ev.Name, ev.Model, ev.Message = d.Status, d.BatchJobArn, d.BatchJobName, d.BatchModelId, d.FailureMessage
	out, err := r.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("out/")})
	if err != nil {
		return nil, err
	}
	for _, o := range out.Contents {
		ev.Outputs = append(ev.Outputs, aws.ToString(o.Key))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil, nil
}

func (r *jobsRig) delivered() []jobEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// converseRecord is a record whose modelInput is a Converse request body.
func converseRecord(id, prompt string) string {
	b, _ := json.Marshal(map[string]any{"recordId": id, "modelInput": map[string]any{
		"system":          []any{map[string]string{"text": "You write product descriptions."}},
		"messages":        []any{map[string]any{"role": "user", "content": []any{map[string]string{"text": prompt}}}},
		"inferenceConfig": map[string]any{"maxTokens": 400, "temperature": 0.5},
	}})
	return string(b)
}

func (r *jobsRig) putInput(t *testing.T, key string, lines ...string) {
	t.Helper()
	_, err := r.s3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader(strings.Join(lines, "\n") + "\n")})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *jobsRig) create(t *testing.T, name, input string) string {
	t.Helper()
	out, err := r.client.CreateModelInvocationJob(context.Background(), createInput(name, input))
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.JobArn)
}

func createInput(name, input string) *bedrock.CreateModelInvocationJobInput {
	return &bedrock.CreateModelInvocationJobInput{
		JobName: aws.String(name), ModelId: aws.String(bedrockstandin.TextModel),
		RoleArn:             aws.String("arn:aws:iam::123456789012:role/BatchJobRole"),
		ModelInvocationType: bedrocktypes.ModelInvocationTypeConverse,
		InputDataConfig: &bedrocktypes.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{Value: bedrocktypes.ModelInvocationJobS3InputDataConfig{
			S3Uri: aws.String("s3://" + bucket + "/" + input), S3InputFormat: bedrocktypes.S3InputFormatJsonl}},
		OutputDataConfig: &bedrocktypes.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{Value: bedrocktypes.ModelInvocationJobS3OutputDataConfig{
			S3Uri: aws.String("s3://" + bucket + "/out/")}},
		TimeoutDurationInHours: aws.Int32(24),
	}
}

// ended waits for the job's end and for the functions its events went to.
func (r *jobsRig) ended(t *testing.T, arn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	status, err := r.standin.JobEnded(ctx, arn)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.bus.Drained(ctx); err != nil {
		t.Fatal(err)
	}
	return status
}

type outputLine struct {
	RecordID    string          `json:"recordId"`
	ModelInput  json.RawMessage `json:"modelInput"`
	ModelOutput *struct {
		Output struct {
			Message struct {
				Role    string
				Content []struct{ Text string }
			}
		}
		StopReason string
		Usage      struct{ InputTokens, OutputTokens, TotalTokens int }
	} `json:"modelOutput"`
	Error *struct {
		ErrorCode    int
		ErrorMessage string
	} `json:"error"`
}

type manifestOut struct {
	TotalRecordCount, ProcessedRecordCount, SuccessRecordCount, ErrorRecordCount, InputTokenCount, OutputTokenCount int
}

func (r *jobsRig) get(t *testing.T, key string) ([]byte, bool) {
	t.Helper()
	obj, err := r.s3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		if strings.Contains(err.Error(), "NoSuchKey") {
			return nil, false
		}
		t.Fatal(err)
	}
	defer obj.Body.Close()
	b, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

func (r *jobsRig) output(t *testing.T, arn, file string) ([]outputLine, manifestOut) {
	t.Helper()
	id := arn[strings.LastIndex(arn, "/")+1:]
	body, ok := r.get(t, "out/"+id+"/"+file+".out")
	if !ok {
		t.Fatalf("no output out/%s/%s.out", id, file)
	}
	var lines []outputLine
	scan := bufio.NewScanner(bytes.NewReader(body))
	for scan.Scan() {
		var l outputLine
		if err := json.Unmarshal(scan.Bytes(), &l); err != nil {
			t.Fatalf("output line %q: %v", scan.Text(), err)
		}
		lines = append(lines, l)
	}
	m, ok := r.get(t, "out/"+id+"/manifest.json.out")
	if !ok {
		t.Fatalf("no manifest out/%s/manifest.json.out", id)
	}
	var man manifestOut
	if err := json.Unmarshal(m, &man); err != nil {
		t.Fatal(err)
	}
	return lines, man
}

// A job reads its records from S3, answers each with the stand-in's model
// (no Converse or InvokeModel call is made), writes each answer, or the
// error in its place, to <input>.out beside manifest.json.out, and only
// then sends the state change that ends it, which the rule's function is
// given with the output already there. GetModelInvocationJob and
// ListModelInvocationJobs then show it Completed.
func TestJobAnswersEveryRecordThenSendsItsEnd(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{}, endStatuses)
	prompts := map[string]string{}
	var lines []string
	for i := range 5 {
		id := fmt.Sprintf("doc-%d", i+1)
		prompts[id] = fmt.Sprintf("An espresso machine, model %d.", i+1)
		if i == 3 {
			prompts[id] += " [standin:filter]"
		}
		lines = append(lines, converseRecord(id, prompts[id]))
	}
	r.putInput(t, "in/batch-1/records.jsonl", lines...)
	arn := r.create(t, "batch-1", "in/batch-1/records.jsonl")
	if !strings.HasPrefix(arn, "arn:aws:bedrock:eu-west-1:123456789012:model-invocation-job/") {
		t.Errorf("job ARN %s", arn)
	}
	if status := r.ended(t, arn); status != bedrockstandin.JobCompleted {
		t.Fatalf("the job ended %s", status)
	}

	out, man := r.output(t, arn, "records.jsonl")
	if len(out) != 5 {
		t.Fatalf("%d output lines, want 5", len(out))
	}
	seen, inputTokens, outputTokens := map[string]bool{}, 0, 0
	for _, l := range out {
		seen[l.RecordID] = true
		if !strings.Contains(string(l.ModelInput), prompts[l.RecordID]) {
			t.Errorf("%s: modelInput %s is not its record's", l.RecordID, l.ModelInput)
		}
		if strings.Contains(prompts[l.RecordID], "[standin:filter]") {
			if l.Error == nil || l.Error.ErrorCode != 400 || l.ModelOutput != nil {
				t.Errorf("%s: the filtered record's line has error %+v and output %v", l.RecordID, l.Error, l.ModelOutput)
			}
			continue
		}
		if l.Error != nil || l.ModelOutput == nil || len(l.ModelOutput.Output.Message.Content) != 1 ||
			l.ModelOutput.Output.Message.Content[0].Text == "" || l.ModelOutput.StopReason != "end_turn" || l.ModelOutput.Usage.OutputTokens == 0 {
			t.Errorf("%s: line %+v, output %+v", l.RecordID, l.Error, l.ModelOutput)
			continue
		}
		inputTokens += l.ModelOutput.Usage.InputTokens
		outputTokens += l.ModelOutput.Usage.OutputTokens
	}
	if len(seen) != 5 {
		t.Errorf("record ids %v, want each of the five once", seen)
	}
	if want := (manifestOut{5, 5, 4, 1, inputTokens, outputTokens}); man != want {
		t.Errorf("manifest %+v, want %+v", man, want)
	}

	if n := r.standin.CallsOf("CreateModelInvocationJob"); n != 1 {
		t.Errorf("%d CreateModelInvocationJob calls, want 1", n)
	}
	if c, i := r.standin.CallsOf("Converse"), r.standin.CallsOf("InvokeModel"); c != 0 || i != 0 || len(r.standin.Requests()) != 0 {
		t.Errorf("a job made %d Converse and %d InvokeModel calls, %d runtime requests; want none", c, i, len(r.standin.Requests()))
	}
	if asked := r.standin.JobRecords(); len(asked) != 5 || asked[0].Model != bedrockstandin.TextModel || asked[0].MaxTokens != 400 || asked[0].Temperature != 0.5 {
		t.Errorf("the job's records as the model read them: %+v", asked)
	}

	got := r.delivered()
	if len(got) != 1 {
		t.Fatalf("the rule's function was given %d events, want the job's end alone: %+v", len(got), got)
	}
	ev := got[0]
	if ev.Status != bedrockstandin.JobCompleted || ev.ARN != arn || ev.Name != "batch-1" || ev.Source != "aws.bedrock" ||
		ev.DetailType != "Batch Inference Job State Change" || ev.AccountID != "123456789012" || ev.Region != "eu-west-1" ||
		!slices.Equal(ev.Resources, []string{arn}) || ev.Model != "arn:aws:bedrock:eu-west-1::foundation-model/"+bedrockstandin.TextModel {
		t.Errorf("event %+v", ev)
	}
	if len(ev.Outputs) != 2 {
		t.Errorf("when the event came the output held %v, want the records' file and the manifest", ev.Outputs)
	}

	job, err := r.client.GetModelInvocationJob(context.Background(), &bedrock.GetModelInvocationJobInput{JobIdentifier: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := job.InputDataConfig.(*bedrocktypes.ModelInvocationJobInputDataConfigMemberS3InputDataConfig)
	if job.Status != bedrocktypes.ModelInvocationJobStatusCompleted || job.EndTime == nil || job.SubmitTime == nil ||
		aws.ToString(job.JobName) != "batch-1" || aws.ToInt32(job.TimeoutDurationInHours) != 24 ||
		job.JobExpirationTime == nil || !job.JobExpirationTime.Equal(job.SubmitTime.Add(24*time.Hour)) ||
		in == nil || aws.ToString(in.Value.S3Uri) != "s3://batch/in/batch-1/records.jsonl" {
		t.Errorf("GetModelInvocationJob: %+v", job)
	}
	byID, err := r.client.GetModelInvocationJob(context.Background(), &bedrock.GetModelInvocationJobInput{JobIdentifier: aws.String(arn[len(arn)-12:])})
	if err != nil || aws.ToString(byID.JobArn) != arn {
		t.Errorf("GetModelInvocationJob by the job's id: %+v, %v", byID, err)
	}
	list, err := r.client.ListModelInvocationJobs(context.Background(), &bedrock.ListModelInvocationJobsInput{StatusEquals: bedrocktypes.ModelInvocationJobStatusCompleted})
	if err != nil || len(list.InvocationJobSummaries) != 1 || aws.ToString(list.InvocationJobSummaries[0].JobArn) != arn {
		t.Errorf("ListModelInvocationJobs Completed: %+v, %v", list, err)
	}
}

// Every change of a job's status is sent, in order, for a rule that asks
// for them all.
func TestJobSendsEachStateChange(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{}, everyStatus)
	r.putInput(t, "in/one.jsonl", converseRecord("a", "A kettle."))
	arn := r.create(t, "one", "in/one.jsonl")
	r.ended(t, arn)
	var statuses []string
	for _, ev := range r.delivered() {
		statuses = append(statuses, ev.Status)
	}
	// The bus invokes asynchronously: the order they ran in is not the
	// order they were sent in; each is there once.
	slices.Sort(statuses)
	if want := []string{"Completed", "InProgress", "Scheduled", "Submitted", "Validating"}; !slices.Equal(statuses, want) {
		t.Errorf("statuses sent %v, want %v", statuses, want)
	}
}

// The markers end a job each way Bedrock may: Failed and Expired with no
// output, PartiallyCompleted with the records before the marker answered
// and the rest left out, as the manifest counts them.
func TestJobMarkersEndJobsAsBedrockMay(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{}, endStatuses)
	for _, c := range []struct {
		marker, status string
		answered       int
	}{
		{bedrockstandin.FailJobMarker, bedrockstandin.JobFailed, -1},
		{bedrockstandin.ExpireJobMarker, bedrockstandin.JobExpired, -1},
		{bedrockstandin.PartialJobMarker, bedrockstandin.JobPartiallyCompleted, 2},
	} {
		name := strings.Trim(strings.TrimPrefix(c.marker, "[standin:"), "]")
		input := "in/" + name + ".jsonl"
		r.putInput(t, input, converseRecord("a", "One."), converseRecord("b", "Two."), converseRecord("c", "Three "+c.marker), converseRecord("d", "Four."))
		arn := r.create(t, name, input)
		if status := r.ended(t, arn); status != c.status {
			t.Errorf("%s: the job ended %s, want %s", c.marker, status, c.status)
			continue
		}
		job, err := r.client.GetModelInvocationJob(context.Background(), &bedrock.GetModelInvocationJobInput{JobIdentifier: aws.String(arn)})
		if err != nil || string(job.Status) != c.status || aws.ToString(job.Message) == "" {
			t.Errorf("%s: GetModelInvocationJob %+v, %v; want %s with a message", c.marker, job, err, c.status)
		}
		id := arn[len(arn)-12:]
		if c.answered < 0 {
			if _, ok := r.get(t, "out/"+id+"/manifest.json.out"); ok {
				t.Errorf("%s: a job that ended %s wrote output", c.marker, c.status)
			}
			continue
		}
		out, man := r.output(t, arn, name+".jsonl")
		var ids []string
		for _, l := range out {
			ids = append(ids, l.RecordID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"a", "b"}) || man.TotalRecordCount != 4 || man.ProcessedRecordCount != 2 || man.SuccessRecordCount != 2 {
			t.Errorf("%s: answered %v, manifest %+v; want a and b of 4", c.marker, ids, man)
		}
	}
	var ends []string
	for _, ev := range r.delivered() {
		ends = append(ends, ev.Status)
		if ev.Status != bedrockstandin.JobPartiallyCompleted && ev.Message == "" {
			t.Errorf("the %s event has no failureMessage", ev.Status)
		}
	}
	slices.Sort(ends)
	if want := []string{"Expired", "Failed", "PartiallyCompleted"}; !slices.Equal(ends, want) {
		t.Errorf("ends sent %v, want %v", ends, want)
	}
}

// A held job stays in progress until StopModelInvocationJob: then it is
// Stopping, then Stopped, with the records before the hold answered. A
// stopped job cannot be stopped again.
func TestStopEndsAHeldJobStopped(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{}, everyStatus)
	r.putInput(t, "in/held.jsonl", converseRecord("a", "One."), converseRecord("b", "Two."),
		converseRecord("c", "Three "+bedrockstandin.HoldJobMarker), converseRecord("d", "Four."))
	arn := r.create(t, "held", "in/held.jsonl")
	ctx := context.Background()
	for {
		job, err := r.client.GetModelInvocationJob(ctx, &bedrock.GetModelInvocationJobInput{JobIdentifier: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if job.Status == bedrocktypes.ModelInvocationJobStatusInProgress && len(r.standin.JobRecords()) == 2 {
			break
		}
		if job.Status != bedrocktypes.ModelInvocationJobStatusSubmitted && job.Status != bedrocktypes.ModelInvocationJobStatusValidating &&
			job.Status != bedrocktypes.ModelInvocationJobStatusScheduled && job.Status != bedrocktypes.ModelInvocationJobStatusInProgress {
			t.Fatalf("the held job is %s", job.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := r.client.StopModelInvocationJob(ctx, &bedrock.StopModelInvocationJobInput{JobIdentifier: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	if status := r.ended(t, arn); status != bedrockstandin.JobStopped {
		t.Fatalf("the stopped job ended %s", status)
	}
	out, man := r.output(t, arn, "held.jsonl")
	if len(out) != 2 || man.TotalRecordCount != 4 || man.ProcessedRecordCount != 2 {
		t.Errorf("%d lines, manifest %+v; want the two records before the hold", len(out), man)
	}
	statuses := map[string]bool{}
	for _, ev := range r.delivered() {
		statuses[ev.Status] = true
	}
	if !statuses["Stopping"] || !statuses["Stopped"] {
		t.Errorf("statuses sent %v, want Stopping and Stopped among them", statuses)
	}
	_, err := r.client.StopModelInvocationJob(ctx, &bedrock.StopModelInvocationJobInput{JobIdentifier: aws.String(arn)})
	var conflict *bedrocktypes.ConflictException
	if !errors.As(err, &conflict) {
		t.Errorf("stopping a stopped job: %v (%T), want ConflictException", err, err)
	}
}

// An event EventBridge loses never reaches the function; the job is ended
// all the same, as GetModelInvocationJob shows to whoever looks.
func TestLostEventsAreNotDelivered(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{}, endStatuses)
	r.standin.LoseEvents(bedrockstandin.JobCompleted)
	r.putInput(t, "in/lost.jsonl", converseRecord("a", "A kettle."))
	arn := r.create(t, "lost", "in/lost.jsonl")
	if status := r.ended(t, arn); status != bedrockstandin.JobCompleted {
		t.Fatalf("the job ended %s", status)
	}
	if got := r.delivered(); len(got) != 0 {
		t.Errorf("lost events were delivered: %+v", got)
	}
	list, err := r.client.ListModelInvocationJobs(context.Background(), &bedrock.ListModelInvocationJobsInput{NameContains: aws.String("lost")})
	if err != nil || len(list.InvocationJobSummaries) != 1 || list.InvocationJobSummaries[0].Status != bedrocktypes.ModelInvocationJobStatusCompleted {
		t.Errorf("ListModelInvocationJobs: %+v, %v", list, err)
	}
}

// A job's records may come in Nova's InvokeModel shape (messages-v1, the
// default invocation type), and an input prefix takes every .jsonl file
// under it, each answered in its own .out file.
func TestJobReadsInvokeModelRecordsUnderAPrefix(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{}, endStatuses)
	nova := func(id, prompt string) string {
		b, _ := json.Marshal(map[string]any{"recordId": id, "modelInput": map[string]any{
			"schemaVersion": "messages-v1",
			"messages":      []any{map[string]any{"role": "user", "content": []any{map[string]string{"text": prompt}}}},
		}})
		return string(b)
	}
	r.putInput(t, "in/set/part-1.jsonl", nova("a", "A toaster."))
	r.putInput(t, "in/set/part-2.jsonl", nova("b", "A blender."), nova("c", "A grinder."))
	r.putInput(t, "in/set/notes.txt", "not a record")
	input := createInput("set", "in/set/")
	input.ModelInvocationType = ""
	created, err := r.client.CreateModelInvocationJob(context.Background(), input)
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(created.JobArn)
	if status := r.ended(t, arn); status != bedrockstandin.JobCompleted {
		t.Fatalf("the job ended %s", status)
	}
	one, _ := r.output(t, arn, "part-1.jsonl")
	two, man := r.output(t, arn, "part-2.jsonl")
	if len(one) != 1 || len(two) != 2 || man.TotalRecordCount != 3 || man.SuccessRecordCount != 3 {
		t.Fatalf("outputs of %d and %d lines, manifest %+v", len(one), len(two), man)
	}
	if l := one[0]; l.RecordID != "a" || l.ModelOutput == nil || l.ModelOutput.Output.Message.Content[0].Text == "" {
		t.Errorf("part-1's line %+v", l)
	}
}

// What Bedrock refuses when a job is created, the stand-in refuses with
// the same exceptions; a job with fewer records than the minimum fails its
// validation; a request repeated with its clientRequestToken is the same
// job; and more unfinished jobs than the quota are refused.
func TestCreateModelInvocationJobRefusesAsBedrockDoes(t *testing.T) {
	r := startJobs(t, bedrockstandin.Jobs{MinRecords: 2, MaxUnfinished: 2}, endStatuses)
	ctx := context.Background()
	for name, edit := range map[string]func(*bedrock.CreateModelInvocationJobInput){
		"a name with a space": func(in *bedrock.CreateModelInvocationJobInput) { in.JobName = aws.String("my job") },
		"no role":             func(in *bedrock.CreateModelInvocationJobInput) { in.RoleArn = aws.String("BatchJobRole") },
		"an image model":      func(in *bedrock.CreateModelInvocationJobInput) { in.ModelId = aws.String(bedrockstandin.ImageModel) },
		"a timeout of 2 hours": func(in *bedrock.CreateModelInvocationJobInput) {
			in.TimeoutDurationInHours = aws.Int32(2)
		},
		"an input that is no S3 URI": func(in *bedrock.CreateModelInvocationJobInput) {
			in.InputDataConfig = &bedrocktypes.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{Value: bedrocktypes.ModelInvocationJobS3InputDataConfig{S3Uri: aws.String("https://batch.example/in.jsonl")}}
		},
	} {
		in := createInput("refused", "in/x.jsonl")
		edit(in)
		_, err := r.client.CreateModelInvocationJob(ctx, in)
		var invalid *bedrocktypes.ValidationException
		if !errors.As(err, &invalid) {
			t.Errorf("%s: %v (%T), want ValidationException", name, err, err)
		}
	}

	r.putInput(t, "in/small.jsonl", converseRecord("a", "Only one."))
	small := r.create(t, "small", "in/small.jsonl")
	if status := r.ended(t, small); status != bedrockstandin.JobFailed {
		t.Errorf("a job under the minimum ended %s, want Failed", status)
	}
	job, _ := r.client.GetModelInvocationJob(ctx, &bedrock.GetModelInvocationJobInput{JobIdentifier: aws.String(small)})
	if job == nil || !strings.Contains(aws.ToString(job.Message), "minimum") {
		t.Errorf("the small job's message: %+v", job)
	}
	r.putInput(t, "in/missing-line.jsonl", converseRecord("a", "One."), `{"recordId":"b"}`)
	if status := r.ended(t, r.create(t, "malformed", "in/missing-line.jsonl")); status != bedrockstandin.JobFailed {
		t.Errorf("a job with a line that is no record ended %s, want Failed", status)
	}
	if status := r.ended(t, r.create(t, "nowhere", "in/no-such-file.jsonl")); status != bedrockstandin.JobFailed {
		t.Errorf("a job whose input is missing ended %s, want Failed", status)
	}

	r.putInput(t, "in/held.jsonl", converseRecord("a", "One "+bedrockstandin.HoldJobMarker), converseRecord("b", "Two."))
	in := createInput("held", "in/held.jsonl")
	in.ClientRequestToken = aws.String("batch-7-part-1")
	first, err := r.client.CreateModelInvocationJob(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.client.CreateModelInvocationJob(ctx, in)
	if err != nil || aws.ToString(again.JobArn) != aws.ToString(first.JobArn) {
		t.Errorf("the same clientRequestToken made %v (%v), want the first job %s", again, err, aws.ToString(first.JobArn))
	}
	r.create(t, "held-2", "in/held.jsonl")
	_, err = r.client.CreateModelInvocationJob(ctx, createInput("held-3", "in/held.jsonl"))
	var quota *bedrocktypes.ServiceQuotaExceededException
	if !errors.As(err, &quota) {
		t.Errorf("a third unfinished job: %v (%T), want ServiceQuotaExceededException", err, err)
	}
	_, err = r.client.GetModelInvocationJob(ctx, &bedrock.GetModelInvocationJobInput{JobIdentifier: aws.String("abcdefghijkl")})
	var notFound *bedrocktypes.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("an unknown job: %v (%T), want ResourceNotFoundException", err, err)
	}
}
