package stack

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"contentapi/shared/app"
	"contentapi/shared/app/queue"
	"contentapi/shared/hooksender"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/sqslocal"
)

// The queues take the template's names: the deliveries' two lanes and
// their dead-letter queue.
const (
	WebhookDeliveriesQueue = "WebhookDeliveries"
	WebhookSlowLaneQueue   = "WebhookSlowLane"
	WebhookDeliveriesDLQ   = "WebhookDeliveriesDLQ"
)

// WebhookQueue is the running deliveries' queues: the fast lane's (URL)
// and the slow lane's (SlowURL).
type WebhookQueue struct {
	Server       *sqslocal.Server
	Client       *sqs.Client
	URL, SlowURL string
	// Settings are the template's, which Run feeds the sender by.
	Settings WebhookQueueSettings
}

// WebhookLane is one lane's queue and the sender's mapping on it, as
// template.yaml sets them.
type WebhookLane struct {
	// Queue is the queue's logical ID.
	Queue string
	// Visibility is the queue's visibility timeout, in seconds;
	// MaxReceives the receives after which a message goes to the
	// dead-letter queue.
	Visibility, MaxReceives int
	// BatchSize is the most messages the mapping hands the sender at once;
	// MaximumConcurrency the most batches it hands at once (its
	// ScalingConfig).
	BatchSize, MaximumConcurrency int
}

// WebhookQueueSettings are the lanes' and the sender's, as template.yaml
// sets them.
type WebhookQueueSettings struct {
	// Lanes are the fast lane's, then the slow lane's.
	Lanes []WebhookLane
	// Reserved is the sender's reserved concurrency as the template
	// deploys it by default, which caps both lanes' invocations together;
	// 0 when it reserves none.
	Reserved int
}

// Lane is the settings of the lane whose queue is queue.
func (s WebhookQueueSettings) Lane(queue string) (WebhookLane, bool) {
	for _, l := range s.Lanes {
		if l.Queue == queue {
			return l, true
		}
	}
	return WebhookLane{}, false
}

// WebhookQueueSettingsFrom reads the settings of the lanes' queues and of
// the sender's mappings on them from the template.
func WebhookQueueSettingsFrom(tmpl *sam.Template) (WebhookQueueSettings, error) {
	sender, err := tmpl.Function(app.SenderFunction)
	if err != nil {
		return WebhookQueueSettings{}, err
	}
	var s WebhookQueueSettings
	for _, name := range []string{WebhookDeliveriesQueue, WebhookSlowLaneQueue} {
		lane, err := webhookLane(tmpl, sender, name)
		if err != nil {
			return WebhookQueueSettings{}, err
		}
		s.Lanes = append(s.Lanes, lane)
	}
	// ReservedConcurrentExecutions: !If [Reserves, !Ref Parameter, !Ref AWS::NoValue]
	if _, arg, ok := sam.Intrinsic(sender.Properties["ReservedConcurrentExecutions"]); ok {
		if branches, _ := arg.([]any); len(branches) == 3 {
			if n, err := strconv.Atoi(fmt.Sprint(tmpl.ResolveParameters(branches[1]))); err == nil {
				s.Reserved = n
			}
		}
	}
	return s, nil
}

// webhookLane reads the queue name's settings and those of the sender's
// SQS mapping on it.
func webhookLane(tmpl *sam.Template, sender sam.Function, name string) (WebhookLane, error) {
	q, ok := tmpl.Resources[name]
	if !ok {
		return WebhookLane{}, fmt.Errorf("stack: the template has no %s", name)
	}
	redrive, _ := q.Properties["RedrivePolicy"].(map[string]any)
	var mapping map[string]any
	for _, ev := range sender.Properties["Events"].(map[string]any) {
		e, _ := ev.(map[string]any)
		props, _ := e["Properties"].(map[string]any)
		if e["Type"] == "SQS" && fmt.Sprint(props["Queue"]) == fmt.Sprint(map[string]any{"Fn::GetAtt": []any{name, "Arn"}}) {
			mapping = props
		}
	}
	if mapping == nil {
		return WebhookLane{}, fmt.Errorf("stack: %s has no SQS event on %s", app.SenderFunction, name)
	}
	scaling, _ := mapping["ScalingConfig"].(map[string]any)
	l := WebhookLane{Queue: name}
	for _, v := range []struct {
		into  *int
		value any
		name  string
	}{{&l.Visibility, q.Properties["VisibilityTimeout"], name + "'s VisibilityTimeout"},
		{&l.MaxReceives, redrive["maxReceiveCount"], name + "'s RedrivePolicy.maxReceiveCount"},
		{&l.BatchSize, mapping["BatchSize"], app.SenderFunction + "'s BatchSize on " + name},
		{&l.MaximumConcurrency, scaling["MaximumConcurrency"], app.SenderFunction + "'s ScalingConfig.MaximumConcurrency on " + name}} {
		n, err := strconv.Atoi(fmt.Sprint(v.value))
		if err != nil || n <= 0 {
			return WebhookLane{}, fmt.Errorf("stack: %s in the template is %v, not a positive number", v.name, v.value)
		}
		*v.into = n
	}
	return l, nil
}

// WebhookQueueOptions are what a test may change of the queues: the clock
// their visibility timeouts and delays run on (nil: time.Now).
type WebhookQueueOptions struct {
	Now func() time.Time
}

// StartWebhookQueue serves the queues on addr ("" for a free port on
// 127.0.0.1), set up with the template's settings: each lane's visibility
// timeout and its redrive to the dead-letter queue.
func StartWebhookQueue(ctx context.Context, addr string, s WebhookQueueSettings, opts ...WebhookQueueOptions) (*WebhookQueue, error) {
	var o WebhookQueueOptions
	for _, opt := range opts {
		o = opt
	}
	srv, err := sqslocal.Start(sqslocal.Options{Addr: addr, Now: o.Now})
	if err != nil {
		return nil, err
	}
	c := sqs.New(sqs.Options{Region: sqslocal.Region, BaseEndpoint: aws.String(srv.URL()),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(WebhookDeliveriesDLQ)}); err != nil {
		srv.Close()
		return nil, err
	}
	urls := map[string]string{}
	for _, l := range s.Lanes {
		q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(l.Queue), Attributes: map[string]string{
			"VisibilityTimeout": strconv.Itoa(l.Visibility),
			"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, sqslocal.ARN(WebhookDeliveriesDLQ), l.MaxReceives),
		}})
		if err != nil {
			srv.Close()
			return nil, err
		}
		urls[l.Queue] = *q.QueueUrl
	}
	return &WebhookQueue{Server: srv, Client: c, URL: urls[WebhookDeliveriesQueue], SlowURL: urls[WebhookSlowLaneQueue], Settings: s}, nil
}

// Close stops the server.
func (q *WebhookQueue) Close() error { return q.Server.Close() }

// Lanes are the queues as a publisher or the sender takes them.
func (q *WebhookQueue) Lanes() hooksender.Lanes {
	return hooksender.Lanes{Queue: queue.SQS{Client: q.Client}, Fast: q.URL, Slow: q.SlowURL}
}

// Vars are the functions' settings that point at the queues.
func (q *WebhookQueue) Vars() map[string]string {
	return map[string]string{app.EnvWebhookQueue: q.URL, app.EnvWebhookSlowQueue: q.SlowURL, app.EnvSQSEndpoint: q.Server.URL()}
}

// Run feeds send from both lanes, as the template's mappings do in AWS
// (each lane's batch size and concurrency, within the sender's reserved
// concurrency), until ctx ends, looking again after idle when a queue was
// empty. It returns when every invocation has returned.
func (q *WebhookQueue) Run(ctx context.Context, send app.SenderEntry, idle time.Duration, onError func(error)) {
	var reserved chan struct{}
	if q.Settings.Reserved > 0 {
		reserved = make(chan struct{}, q.Settings.Reserved)
	}
	var lanes sync.WaitGroup
	for _, l := range q.Settings.Lanes {
		url := q.URL
		if l.Queue == WebhookSlowLaneQueue {
			url = q.SlowURL
		}
		m := &lambdalocal.SQSMapping{Queue: q.Client, QueueURL: url, QueueARN: sqslocal.ARN(l.Queue), BatchSize: int32(l.BatchSize),
			MaximumConcurrency: l.MaximumConcurrency, Reserved: reserved, Handler: lambdalocal.SQSHandler(send)}
		lanes.Go(func() { m.Run(ctx, idle, onError) })
	}
	lanes.Wait()
}
