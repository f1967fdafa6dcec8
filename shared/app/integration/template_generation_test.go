package integration_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/bedrock"
	"contentapi/shared/crud"
	"contentapi/shared/generation"
	"contentapi/shared/httpapi"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	localstack "contentapi/shared/local/stack"
	"contentapi/shared/picturebucket"
	"contentapi/shared/store"
	"contentapi/shared/webhook"
)

// generationOn is the template's condition for everything generation
// adds: off, the stack has none of it.
const generationOn = "GenerationOn"

// The template's parameters say what the code defaults to.
func TestTemplateGenerationParameters(t *testing.T) {
	tmpl := loadTemplate(t)
	p := tmpl.Parameters
	// Its allowed values are app.GenerationValues (make generate).
	if g := p["Generation"]; g.Default != "on" {
		t.Errorf("Generation = %+v", g)
	}
	for _, m := range []struct{ model, profile, want string }{
		{"TextModel", "TextModelProfile", bedrock.DefaultTextModel},
		{"ImageModel", "ImageModelProfile", bedrock.DefaultImageModel},
	} {
		called := p[m.model].Default.(string)
		if prefix, _ := p[m.profile].Default.(string); prefix != "" {
			called = prefix + "." + called
		}
		if called != m.want {
			t.Errorf("%s and %s call %s by default, the code %s", m.model, m.profile, called, m.want)
		}
	}
	// GenerationWaitSeconds' default and maximum are written from the
	// code by make generate (cmd/listgen).
	if _, ok := p["GeneratorReservedConcurrency"]; !ok {
		t.Error("no GeneratorReservedConcurrency parameter")
	}
}

// The API functions wait up to the longest wait, then write back or hand
// over, within their timeout and the HTTP API's 30 s; their generation
// settings are the stack's parameters (which variables: app.DeployedEnv).
func TestTemplateAPIFunctionsWaitForGeneration(t *testing.T) {
	tmpl := loadTemplate(t)
	for _, res := range app.Resources {
		if res.Def.Content == nil {
			continue // nothing to wait for (voices): the Globals' timeout
		}
		f, err := tmpl.Function(res.Function())
		if err != nil {
			t.Fatal(err)
		}
		if to := f.Timeout(); to < httpapi.MaxWait+crud.WriteBudget+time.Second || to >= 30*time.Second {
			t.Errorf("%s timeout %v: a request may wait %v and write back for %v, within the HTTP API's 30 s",
				f.LogicalID, to, httpapi.MaxWait, crud.WriteBudget)
		}
		env := f.Env()
		if !reflect.DeepEqual(env[app.EnvGeneration], map[string]any{"Ref": "Generation"}) ||
			!reflect.DeepEqual(env[app.EnvGenerationWait], map[string]any{"Ref": "GenerationWaitSeconds"}) ||
			!reflect.DeepEqual(env[app.EnvBedrockRegion], map[string]any{"Ref": "BedrockRegion"}) {
			t.Errorf("%s: %s = %v, %s = %v", f.LogicalID, app.EnvGeneration, env[app.EnvGeneration], app.EnvGenerationWait, env[app.EnvGenerationWait])
		}
		for _, name := range []string{app.EnvTextModel, app.EnvImageModel} {
			if fn, _, _ := sam.Intrinsic(env[name]); fn != "Fn::If" {
				t.Errorf("%s: %s = %v", f.LogicalID, name, env[name])
			}
		}
	}
}

// grants is what a function's statements allow, as "action on resource"
// lines, of the statements under one condition ("" for unconditional).
func grants(t *testing.T, f sam.Function, condition string) []string {
	t.Helper()
	statements, err := f.Statements()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range statements {
		if st.Condition != condition {
			continue
		}
		if st.Effect != "Allow" {
			t.Errorf("%s has a %s statement", f.LogicalID, st.Effect)
		}
		for _, a := range st.Actions {
			if strings.Contains(a, "*") {
				t.Errorf("%s: wildcard action %s", f.LogicalID, a)
			}
			for _, r := range st.Resources {
				line := a + " on " + r.String()
				if r.Condition != "" {
					line += " if " + r.Condition
				}
				for _, w := range st.When {
					line += fmt.Sprintf(" when %s %s %v", w.Operator, w.Key, w.Value)
				}
				out = append(out, line)
			}
		}
	}
	sort.Strings(out)
	return out
}

func models(model string) []string {
	profile := model + "Profile"
	return []string{
		"bedrock:InvokeModel on arn:${AWS::Partition}:bedrock:${BedrockRegion}:${AWS::AccountId}:inference-profile/${" + profile + "}.${" + model + "} if " + model + "ViaProfile",
		"bedrock:InvokeModel on arn:${AWS::Partition}:bedrock:*::foundation-model/${" + model + "}",
	}
}

// subscription is what a caller of Bedrock needs for the account's
// automatic subscription to a Marketplace model on its first invocation:
// Subscribe to the configured models' products only, and the two actions
// AWS lists with it, which take no product condition. The product id is a
// multivalued key: a bare StringEquals on it is not how AWS's policies
// test it (they use ForAnyValue:StringEquals), and IAM asks for a set
// operator on such a key.
func subscription() []string {
	return []string{
		"aws-marketplace:Subscribe on * when ForAnyValue:StringEquals aws-marketplace:ProductId map[Ref:MarketplaceProductIds]",
		"aws-marketplace:Unsubscribe on *",
		"aws-marketplace:ViewSubscriptions on *",
	}
}

func on(resource string, actions ...string) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a+" on "+resource)
	}
	return out
}

func sorted(parts ...[]string) []string {
	out := slices.Concat(parts...)
	sort.Strings(out)
	return out
}

// Least privilege: each function may invoke only the model it calls (a
// profile's foundation model in any of its regions, and the profile itself
// when the model is called through one), subscribe the account only to
// the configured models' Marketplace products, and touch only the
// bucket's objects, only while generation is on.
func TestTemplateGenerationPolicies(t *testing.T) {
	tmpl := loadTemplate(t)
	images, _ := tmpl.Function("ImagesFunction")
	documents, _ := tmpl.Function("DocumentsFunction")
	generator, err := tmpl.Function(app.GeneratorFunction)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := tmpl.Function(app.SenderFunction)
	if err != nil {
		t.Fatal(err)
	}
	bucket := "PicturesBucket.Arn/*"
	// The generator claims and writes back the records it generates, read
	// from their tables' streams.
	var tables []string
	var generating []app.Resource
	for _, r := range app.Resources {
		if r.Def.Content != nil {
			generating = append(generating, r)
			tables = append(tables, on(r.Table()+".Arn", "dynamodb:UpdateItem")...)
			tables = append(tables, on(r.Table()+".StreamArn", "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams")...)
		}
	}
	// It reads, and only reads, the records those name (a document's
	// voice) when a generation starts.
	for _, name := range app.NamedBy(generating...) {
		tables = append(tables, on(upperFirst(name)+"Table.Arn", "dynamodb:GetItem")...)
	}
	testCases := []struct {
		fn        sam.Function
		condition string
		want      []string
	}{
		{images, generationOn, sorted(models("ImageModel"), subscription(),
			on(bucket, "s3:DeleteObject", "s3:GetObject", "s3:PutObject", "s3:PutObjectTagging"))},
		{documents, generationOn, sorted(models("TextModel"), subscription())},
		{generator, "", sorted(models("TextModel"), models("ImageModel"), subscription(),
			on(bucket, "s3:DeleteObject", "s3:DeleteObjectTagging", "s3:PutObject", "s3:PutObjectTagging"),
			tables, on("GenerationFailures.Arn", "sqs:SendMessage"),
			on("WebhooksTable.Arn", "dynamodb:PutItem", "dynamodb:Query"),
			on("WebhookDeliveries.Arn", "sqs:SendMessage"), on("WebhookSlowLane.Arn", "sqs:SendMessage"))},
		// The webhook sender: a delivery read, claimed and recorded, its
		// message hidden until the next attempt or moved to the slow lane
		// (or put back in its own), and an image event's url presigned (so
		// readable by this role) while there are pictures.
		{sender, "", sorted(on("WebhooksTable.Arn", "dynamodb:GetItem", "dynamodb:UpdateItem"),
			on("WebhookDeliveries.Arn", "sqs:ChangeMessageVisibility", "sqs:SendMessage"),
			on("WebhookSlowLane.Arn", "sqs:ChangeMessageVisibility", "sqs:SendMessage"))},
		{sender, generationOn, on(bucket, "s3:GetObject")},
	}
	for _, tc := range testCases {
		if got := grants(t, tc.fn, tc.condition); !slices.Equal(got, tc.want) {
			t.Errorf("%s grants\n  %s\nwant\n  %s", tc.fn.LogicalID, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
		}
	}
}

// Every function that calls Bedrock may also let Bedrock subscribe the
// account to a Marketplace model on its first call, under the same
// condition as the call: without it a fresh account's first picture ends
// failed (AccessDeniedException). The products default to Stable Image
// Core's, the default image model's.
func TestTemplateBedrockCallersMaySubscribe(t *testing.T) {
	tmpl := loadTemplate(t)
	if p := tmpl.Parameters["MarketplaceProductIds"]; p.Type != "CommaDelimitedList" || p.Default != "prod-eacdrmv7zfc5e" ||
		tmpl.Parameters["ImageModel"].Default != "stability.stable-image-core-v1:1" {
		t.Errorf("MarketplaceProductIds = %+v for the image model %v", p, tmpl.Parameters["ImageModel"].Default)
	}
	callers := 0
	for _, f := range tmpl.Functions() {
		statements, err := f.Statements()
		if err != nil {
			t.Fatal(err)
		}
		invokes := map[string]bool{} // the template conditions it calls Bedrock under
		for _, st := range statements {
			if slices.Contains(st.Actions, "bedrock:InvokeModel") {
				invokes[st.Condition] = true
			}
		}
		for condition := range invokes {
			callers++
			got := grants(t, f, condition)
			for _, want := range subscription() {
				if !slices.Contains(got, want) {
					t.Errorf("%s calls Bedrock (condition %q) without %s", f.LogicalID, condition, want)
				}
			}
		}
	}
	if callers != 3 {
		t.Errorf("%d functions call Bedrock, want the two API functions and the generator", callers)
	}
}

// The generator function exists only while generation is on, is built
// like the others, and serves every resource's table.
func TestTemplateGeneratorFunction(t *testing.T) {
	tmpl := loadTemplate(t)
	f, err := tmpl.Function(app.GeneratorFunction)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Resources[app.GeneratorFunction].Condition != generationOn || f.Metadata["BuildMethod"] != "makefile" {
		t.Errorf("GeneratorFunction: condition %q, build %v", tmpl.Resources[app.GeneratorFunction].Condition, f.Metadata["BuildMethod"])
	}
	path, _ := sam.Find()
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "functions", "generator", "main.go")); err != nil {
		t.Error(err)
	}
	// Room for a picture and for backing off a throttled model.
	if to := f.Timeout(); to < time.Minute || to > 15*time.Minute {
		t.Errorf("GeneratorFunction timeout %v", to)
	}
	env := f.Env()
	for _, res := range app.Resources {
		if !reflect.DeepEqual(env[res.TableEnv()], map[string]any{"Ref": res.Table()}) {
			t.Errorf("GeneratorFunction: %s = %v", res.TableEnv(), env[res.TableEnv()])
		}
	}
	if !reflect.DeepEqual(env[app.EnvPicturesBucket], map[string]any{"Ref": "PicturesBucket"}) {
		t.Errorf("GeneratorFunction: %s = %v", app.EnvPicturesBucket, env[app.EnvPicturesBucket])
	}
	if reserved := fmt.Sprint(f.Properties["ReservedConcurrentExecutions"]); !strings.Contains(reserved, "GeneratorReservedConcurrency") {
		t.Errorf("GeneratorFunction reserves %v", reserved)
	}
}

// The streams: every record table has one, with old and new images, and
// the table of each resource that generates has one mapping to the
// generator, which retries a bounded number of times, reports partial
// failures, splits failed batches and ends with the failures queue; a
// resource without generation (no Content) has none.
func TestTemplateStreamMappings(t *testing.T) {
	tmpl := loadTemplate(t)
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	mappings, err := tmpl.StreamMappings()
	if err != nil {
		t.Fatal(err)
	}
	byTable := map[string]sam.StreamMapping{}
	for _, m := range mappings {
		if m.Function != app.GeneratorFunction {
			continue // the tally's: TestTemplateTally
		}
		if _, dup := byTable[m.Table]; dup {
			t.Errorf("two mappings read %s", m.Table)
		}
		byTable[m.Table] = m
	}
	for _, res := range app.Resources {
		for _, tbl := range tables {
			if tbl.LogicalID == res.Table() {
				if s := tbl.Input.StreamSpecification; s == nil || s.StreamViewType != types.StreamViewTypeNewAndOldImages {
					t.Errorf("%s stream %+v, want NEW_AND_OLD_IMAGES", tbl.LogicalID, s)
				}
			}
		}
		m, ok := byTable[res.Table()]
		if res.Def.Content == nil {
			if ok {
				t.Errorf("%s reads %s, whose records are not generated", m.LogicalID, res.Table())
			}
			continue
		}
		if !ok {
			t.Errorf("no mapping reads %s", res.Table())
			continue
		}
		if m.Function != app.GeneratorFunction || m.Condition != generationOn || m.OnFailure != "GenerationFailures" ||
			!m.BisectBatchOnFunctionError || !slices.Equal(m.FunctionResponseTypes, []string{"ReportBatchItemFailures"}) ||
			m.MaximumRetryAttempts < 1 || m.MaximumRetryAttempts > 10 || m.BatchSize < 1 || m.StartingPosition != "TRIM_HORIZON" ||
			m.MaximumRecordAgeInSeconds < int(generation.MaxDuration/time.Second) {
			t.Errorf("%s: %+v", m.LogicalID, m)
		}
	}
	for _, id := range []string{"GenerationFailures", "PicturesBucket", "PicturesBucketPolicy", "GeneratorLogGroup"} {
		if c := tmpl.Resources[id].Condition; c != generationOn {
			t.Errorf("%s has condition %q, want %s", id, c, generationOn)
		}
	}
}

// streamImage is a stored record as its stream shows it.
func streamImage(_ *testing.T, item store.Item) map[string]events.DynamoDBAttributeValue {
	return lambdalocal.StreamImage(item)
}

// record is a stored record with a generation state, and maybe a result.
func record(t *testing.T, s *generation.State, result string) store.Item {
	t.Helper()
	item := store.Item{
		store.AttrAccount: &types.AttributeValueMemberS{Value: "acme"},
		store.AttrID:      &types.AttributeValueMemberN{Value: "7"},
	}
	if s != nil {
		av, err := attributevalue.Marshal(*s)
		if err != nil {
			t.Fatal(err)
		}
		item[store.AttrGeneration] = av
	}
	if result != "" {
		item["result"] = &types.AttributeValueMemberS{Value: result}
	}
	return item
}

// The filters pass exactly what the generator acts on, as the template
// writes them and as Lambda and the local stack apply them: a record left
// waiting (pending) on demand, a generation's end (done or failed: its
// webhooks' event, and for pictures the write-back's picture kept, a
// batch's write-backs included) and a deleted record's picture; not the
// steps the generator takes itself (claims, hand-overs aside), nor users'
// edits, nor a record waiting for a batch inference job (mode batch); and a
// usage threshold's crossing marked in an item's outbox
// (store.AttrThreshold), not the outbox cleared nor the item's writes
// without one.
func TestTemplateStreamFilters(t *testing.T) {
	tmpl := loadTemplate(t)
	mappings, err := tmpl.StreamMappings()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	pending := generation.Request("m", now)
	running := pending.Start(now)
	done := running.Finish("m", generation.Usage{}, now)
	failed := running.Fail(generation.NewError(generation.Throttled), now)
	handedOver := running.Requeue(false)
	batched := generation.Request("m", now)
	batched.Mode = generation.Batch
	batchDone := batched.Finish("m", generation.Usage{}, now)
	batchFailed := batched.Fail(generation.NewError(generation.Timeout), now)
	picture := generation.PictureName("acme", "images", 7, running.Attempt)
	old := generation.PictureName("acme", "images", 7, "an earlier attempt")
	counter := store.Item{"account": &types.AttributeValueMemberS{Value: "acme"}, "id": &types.AttributeValueMemberN{Value: "0"},
		"used_images_2026_11": &types.AttributeValueMemberN{Value: "8"}}
	outbox := maps.Clone(counter)
	outbox[store.AttrThreshold] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"mark": &types.AttributeValueMemberS{Value: "th80_images_2026_11"}, "kind": &types.AttributeValueMemberS{Value: "images"},
	}}

	testCases := []struct {
		name     string
		event    string
		old, new store.Item
		pictures bool // passes for a resource with pictures
		text     bool // passes for one without
	}{
		{"a create that leaves it pending", "INSERT", nil, record(t, &pending, ""), true, true},
		{"a create that generates in the request", "INSERT", nil, record(t, &running, ""), false, false},
		{"a record of a stack without generation", "INSERT", nil, record(t, nil, ""), false, false},
		{"a hand-over to the queue", "MODIFY", record(t, &running, ""), record(t, &handedOver, ""), true, true},
		{"a regenerate that leaves it pending", "MODIFY", record(t, &done, old), record(t, &pending, old), true, true},
		{"a claim", "MODIFY", record(t, &pending, ""), record(t, &running, ""), false, false},
		{"a write-back", "MODIFY", record(t, &running, old), record(t, &done, picture), true, true},
		{"a failure", "MODIFY", record(t, &running, old), record(t, &failed, old), true, true},
		{"a pending record failed", "MODIFY", record(t, &pending, ""), record(t, &failed, ""), true, true},
		{"a batch's record created pending", "INSERT", nil, record(t, &batched, ""), false, false},
		{"a batch's record edited while pending", "MODIFY", record(t, &batched, ""), record(t, &batched, ""), false, false},
		{"a batch's write-back", "MODIFY", record(t, &batched, ""), record(t, &batchDone, ""), true, true},
		{"a batch's record failed", "MODIFY", record(t, &batched, ""), record(t, &batchFailed, ""), true, true},
		{"a user's edit", "MODIFY", record(t, &done, picture), record(t, &done, picture), false, false},
		{"a delete with a picture", "REMOVE", record(t, &done, picture), nil, true, false},
		{"a delete without one", "REMOVE", record(t, &failed, ""), nil, false, false},
		{"a crossing marked", "MODIFY", counter, outbox, true, true},
		{"a counter write", "MODIFY", counter, counter, false, false},
		{"the outbox cleared", "MODIFY", outbox, counter, false, false},
		// Passes until the generator clears the outbox, which it then
		// tells apart (store.ThresholdOf: the same mark as before).
		{"a counter write before the outbox is cleared", "MODIFY", outbox, outbox, true, true},
	}
	for _, m := range mappings {
		if m.Function != app.GeneratorFunction {
			continue
		}
		f, err := lambdalocal.ParseStreamFilter(m.Filters)
		if err != nil {
			t.Fatal(err)
		}
		res := resourceOfTable(t, m.Table)
		for _, tc := range testCases {
			rec := events.DynamoDBEventRecord{EventName: tc.event, Change: events.DynamoDBStreamRecord{
				OldImage: imageOrNil(t, tc.old), NewImage: imageOrNil(t, tc.new),
			}}
			want := tc.text
			if res.Def.Content.Picture {
				want = tc.pictures
			}
			if got := f.Match(rec); got != want {
				t.Errorf("%s, %s: passes %v, want %v", m.LogicalID, tc.name, got, want)
			}
		}
	}
}

func imageOrNil(t *testing.T, item store.Item) map[string]events.DynamoDBAttributeValue {
	if item == nil {
		return nil
	}
	return streamImage(t, item)
}

func resourceOfTable(t *testing.T, table string) app.Resource {
	for _, r := range app.Resources {
		if r.Table() == table {
			return r
		}
	}
	t.Fatalf("no resource has the table %s", table)
	return app.Resource{}
}

// The bucket is private, encrypted and TLS only, and expires the pictures
// no record claimed.
func TestTemplatePicturesBucket(t *testing.T) {
	tmpl := loadTemplate(t)
	b := tmpl.Resources["PicturesBucket"]
	if b.Type != "AWS::S3::Bucket" || b.DeletionPolicy != "Retain" {
		t.Fatalf("PicturesBucket = %+v", b)
	}
	block, _ := b.Properties["PublicAccessBlockConfiguration"].(map[string]any)
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if block[k] != true {
			t.Errorf("PublicAccessBlockConfiguration.%s = %v", k, block[k])
		}
	}
	if b.Properties["BucketEncryption"] == nil {
		t.Error("no BucketEncryption")
	}
	key, value, _ := strings.Cut(picturebucket.UnclaimedTag, "=")
	rules, _ := b.Properties["LifecycleConfiguration"].(map[string]any)["Rules"].([]any)
	expires := false
	for _, r := range rules {
		rule := r.(map[string]any)
		tags, _ := rule["TagFilters"].([]any)
		if rule["Status"] == "Enabled" && len(tags) == 1 && reflect.DeepEqual(tags[0], map[string]any{"Key": key, "Value": value}) {
			days, _ := rule["ExpirationInDays"].(int)
			expires = days > 0
		}
	}
	if !expires {
		t.Errorf("no enabled rule expires objects tagged %s: %v", picturebucket.UnclaimedTag, rules)
	}
	policy := tmpl.Resources["PicturesBucketPolicy"]
	statements, _ := policy.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any)
	tlsOnly := false
	for _, s := range statements {
		st := s.(map[string]any)
		cond, _ := st["Condition"].(map[string]any)["Bool"].(map[string]any)
		resources, _ := st["Resource"].([]any)
		if st["Effect"] == "Deny" && st["Principal"] == "*" && st["Action"] == "s3:*" && cond["aws:SecureTransport"] == "false" &&
			len(resources) == 2 {
			tlsOnly = true
		}
	}
	if !tlsOnly || !reflect.DeepEqual(policy.Properties["Bucket"], map[string]any{"Ref": "PicturesBucket"}) {
		t.Errorf("PicturesBucketPolicy does not deny plain HTTP on the bucket and its objects: %v", policy.Properties)
	}
}

// The webhooks' delivery runs on AWS's queueing, in two lanes: the sender
// takes each lane's queue through a mapping of its own with
// ReportBatchItemFailures (a retry waits in the slow lane's queue), each
// mapping capped in concurrency; each queue hides a message for at least
// six times the sender's timeout (AWS's advice for a mapping), a message the
// sender cannot process goes to the dead-letter queue only after more
// receives than the schedule's attempts, and that queue has an alarm; the
// sender's reserved concurrency is a parameter, none by default, which a
// rule holds to 0 or room for both lanes. The local stack's queues take the
// same settings (localstack.WebhookQueueSettingsFrom).
func TestTemplateWebhookQueue(t *testing.T) {
	tmpl := loadTemplate(t)
	sender, err := tmpl.Function(app.SenderFunction)
	if err != nil {
		t.Fatal(err)
	}
	s, err := localstack.WebhookQueueSettingsFrom(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Lanes) != 2 {
		t.Fatalf("lanes %+v, want the fast and the slow one", s.Lanes)
	}
	both := 0
	for _, l := range s.Lanes {
		if limit := 6 * sender.Timeout(); time.Duration(l.Visibility)*time.Second < limit || sender.Timeout() <= webhook.DefaultTimeout {
			t.Errorf("%s: visibility %d s, the sender's timeout %v: want ≥ %v, and the timeout above an attempt's %v", l.Queue, l.Visibility, sender.Timeout(), limit, webhook.DefaultTimeout)
		}
		if attempts := len(webhook.DefaultSchedule) + 1; l.MaxReceives <= attempts {
			t.Errorf("%s: a message goes to the dead-letter queue after %d receives, not more than the %d attempts", l.Queue, l.MaxReceives, attempts)
		}
		// Lambda's bounds of a mapping's MaximumConcurrency.
		if l.MaximumConcurrency < 2 || l.MaximumConcurrency > 1000 || l.BatchSize > 10 {
			t.Errorf("%s: the mapping's concurrency %d, batch %d", l.Queue, l.MaximumConcurrency, l.BatchSize)
		}
		both += l.MaximumConcurrency
		q := tmpl.Resources[l.Queue].Properties
		if dlq := fmt.Sprint(q["RedrivePolicy"].(map[string]any)["deadLetterTargetArn"]); dlq != fmt.Sprint(map[string]any{"Fn::GetAtt": []any{localstack.WebhookDeliveriesDLQ, "Arn"}}) {
			t.Errorf("%s: redrive to %s", l.Queue, dlq)
		}
	}
	for _, ev := range sender.Properties["Events"].(map[string]any) {
		if e := ev.(map[string]any); e["Type"] == "SQS" && !slices.Contains(e["Properties"].(map[string]any)["FunctionResponseTypes"].([]any), any("ReportBatchItemFailures")) {
			t.Errorf("the sender's mapping: %v", e)
		}
	}
	if id, _, _ := alarmOn(t, tmpl, "AWS/SQS", "ApproximateNumberOfMessagesVisible", localstack.WebhookDeliveriesDLQ); id == "" {
		t.Error("no alarm on the dead-letter queue's messages")
	}
	if p := tmpl.Parameters["WebhookSenderReservedConcurrency"]; p.Type != "Number" || fmt.Sprint(p.Default) != "0" ||
		!strings.Contains(fmt.Sprint(sender.Properties["ReservedConcurrentExecutions"]), "WebhookSenderReservedConcurrency") {
		t.Errorf("the sender's reserved concurrency: %+v, %v", p, sender.Properties["ReservedConcurrentExecutions"])
	}
	// The rule refuses a reserved concurrency from 1 to below both lanes'.
	var refused []string
	for n := 1; n < both; n++ {
		refused = append(refused, strconv.Itoa(n))
	}
	if rule := fmt.Sprint(tmpl.Rules["WebhookSenderConcurrencyFitsTheLanes"]); !strings.Contains(rule, fmt.Sprint(refused)) {
		t.Errorf("the rule %s does not refuse exactly %v", rule, refused)
	}
}
