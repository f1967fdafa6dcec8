package ddblocal_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"contentapi/shared/local/ddblocal"
)

// vectorTable creates a table keyed like the resource tables (account,
// id) with a 3-dimension cosine index searched by account and filtered by
// kind, through the TestEnv's endpoint (the stand-in), and returns its name.
func vectorTable(t *testing.T, env *ddblocal.TestEnv) string {
	t.Helper()
	name := "Vectors-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err := env.Client.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("account"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String("kind"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("account"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("id"), KeyType: types.KeyTypeRange},
		},
		VectorIndexes: []types.VectorIndex{{
			IndexName:        aws.String("by_meaning"),
			VectorAttribute:  &types.VectorAttributeDefinition{AttributeName: aws.String("vec")},
			Dimensions:       aws.Int64(3),
			DistanceFunction: types.VectorDistanceFunctionCosine,
			SearchSchema: []types.SearchSchemaElement{
				{AttributeName: aws.String("account"), SearchSchemaElementType: types.SearchSchemaElementTypeHash},
				{AttributeName: aws.String("kind"), SearchSchemaElementType: types.SearchSchemaElementTypeInlineFilter},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"title"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

func putVector(t *testing.T, c *dynamodb.Client, table, account string, id int, kind string, vec ...float64) {
	t.Helper()
	item := map[string]types.AttributeValue{
		"account": &types.AttributeValueMemberS{Value: account},
		"id":      &types.AttributeValueMemberN{Value: strconv.Itoa(id)},
		"title":   &types.AttributeValueMemberS{Value: "item " + strconv.Itoa(id)},
		"secret":  &types.AttributeValueMemberS{Value: "not projected"},
	}
	if kind != "" {
		item["kind"] = &types.AttributeValueMemberS{Value: kind}
	}
	if vec != nil {
		item["vec"] = numbers(vec...)
	}
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func numbers(v ...float64) *types.AttributeValueMemberL {
	l := &types.AttributeValueMemberL{}
	for _, f := range v {
		l.Value = append(l.Value, &types.AttributeValueMemberN{Value: strconv.FormatFloat(f, 'g', -1, 32)})
	}
	return l
}

func search(c *dynamodb.Client, table, cond string, values map[string]types.AttributeValue, topK int32, vec ...float64) (*dynamodb.SearchVectorsOutput, error) {
	in := &dynamodb.SearchVectorsInput{
		TableName: aws.String(table), IndexName: aws.String("by_meaning"),
		SearchVector: numbers(vec...).Value, TopK: aws.Int32(topK),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
	if cond != "" {
		in.SearchConditionExpression = aws.String(cond)
		in.ExpressionAttributeNames = map[string]string{"#a": "account"}
		in.ExpressionAttributeValues = values
	}
	return c.SearchVectors(context.Background(), in)
}

func ids(out *dynamodb.SearchVectorsOutput) []string {
	var got []string
	for _, r := range out.SearchResults {
		got = append(got, r.Item["id"].(*types.AttributeValueMemberN).Value)
	}
	return got
}

func s(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

// The stand-in keeps what DynamoDB Local drops: the table's vector index
// is in DescribeTable, ACTIVE with its table, its search schema's filter
// attribute among the attribute definitions.
func TestVectorIndexIsDescribed(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	table := vectorTable(t, env)
	d, err := env.Client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.VectorIndexes) != 1 {
		t.Fatalf("VectorIndexes = %+v, want by_meaning", d.Table.VectorIndexes)
	}
	x := d.Table.VectorIndexes[0]
	if aws.ToString(x.IndexName) != "by_meaning" || x.IndexStatus != types.IndexStatusActive || aws.ToBool(x.Backfilling) ||
		aws.ToInt64(x.Dimensions) != 3 || x.DistanceFunction != types.VectorDistanceFunctionCosine ||
		aws.ToString(x.VectorAttribute.AttributeName) != "vec" || len(x.SearchSchema) != 2 ||
		x.SearchSchema[0].SearchSchemaElementType != types.SearchSchemaElementTypeHash {
		t.Errorf("index = %+v", x)
	}
	var defs []string
	for _, a := range d.Table.AttributeDefinitions {
		defs = append(defs, aws.ToString(a.AttributeName))
	}
	if !strings.Contains(strings.Join(defs, ","), "kind") {
		t.Errorf("AttributeDefinitions = %v, want kind among them", defs)
	}
}

// SearchVectors ranks the account's items by cosine distance, nearest
// first, filters by the inline filter, leaves out other accounts' items
// and items without a vector, and answers only what the index projects.
func TestSearchVectorsRanksTheAccountsItems(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	table := vectorTable(t, env)
	c := env.Client
	putVector(t, c, table, "a", 1, "doc", 1, 0, 0)
	putVector(t, c, table, "a", 2, "doc", 0.9, 0.1, 0)
	putVector(t, c, table, "a", 3, "img", 0, 1, 0)
	putVector(t, c, table, "a", 4, "doc", 0, 0, -1)
	putVector(t, c, table, "a", 5, "doc") // no vector: not in the index
	putVector(t, c, table, "b", 6, "doc", 1, 0, 0)

	out, err := search(c, table, "#a = :a", map[string]types.AttributeValue{":a": s("a")}, 10, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(out), ","); got != "1,2,3,4" {
		t.Errorf("ids = %s, want 1,2,3,4 (nearest first, account a's only)", got)
	}
	if sc := out.SearchResults[0].Score; sc > 1e-6 {
		t.Errorf("score of the identical vector = %v, want 0", sc)
	}
	if sc := out.SearchResults[2].Score; sc < 0.999 || sc > 1.001 {
		t.Errorf("score of the orthogonal vector = %v, want 1", sc)
	}
	item := out.SearchResults[0].Item
	for _, attr := range []string{"account", "id", "vec", "kind", "title"} {
		if _, ok := item[attr]; !ok {
			t.Errorf("result lacks %s, which the index projects: %v", attr, item)
		}
	}
	if _, ok := item["secret"]; ok {
		t.Errorf("result has secret, which the index does not project")
	}
	if out.ConsumedCapacity == nil || aws.ToFloat64(out.ConsumedCapacity.VectorSearchRequestBytes) <= 0 {
		t.Errorf("ConsumedCapacity = %+v, want vector search bytes", out.ConsumedCapacity)
	}

	out, err = search(c, table, "#a = :a AND kind = :k", map[string]types.AttributeValue{":a": s("a"), ":k": s("doc")}, 2, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(out), ","); got != "4,1" && got != "4,2" {
		t.Errorf("ids = %s, want 4 then a doc (TopK 2, kind doc only)", got)
	}
	for _, r := range out.SearchResults {
		if r.Item["kind"].(*types.AttributeValueMemberS).Value != "doc" {
			t.Errorf("kind filter let %v through", r.Item)
		}
	}

	searches := env.Vectors.Searches()
	last := searches[len(searches)-1]
	if last.Value("account") != `{"S":"a"}` || last.Value("kind") != `{"S":"doc"}` || last.TopK != 2 {
		t.Errorf("recorded search = %+v", last)
	}
}

// What DynamoDB refuses, the stand-in refuses in its words, and the SDK
// decodes it as DynamoDB's.
func TestSearchVectorsRefuses(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	table := vectorTable(t, env)
	a := map[string]types.AttributeValue{":a": s("a")}
	testCases := []struct {
		name, cond string
		topK       int32
		vec        []float64
		want       string
	}{
		{"no account", "", 5, []float64{1, 0, 0}, "SearchConditionExpression must be provided when SearchSchema has a HASH key"},
		{"account by another comparator", "#a > :a", 5, []float64{1, 0, 0}, "Invalid comparator"},
		{"attribute outside the schema", "#a = :a AND title = :a", 5, []float64{1, 0, 0}, "SearchSchema"},
		{"TopK 0", "#a = :a", 0, []float64{1, 0, 0}, "TopK value is out of valid range"},
		{"TopK 101", "#a = :a", 101, []float64{1, 0, 0}, "TopK value is out of valid range"},
		{"wrong dimensions", "#a = :a", 5, []float64{1, 0}, "dimensions"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := search(env.Client, table, tc.cond, a, tc.topK, tc.vec...)
			var api smithy.APIError
			if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" || !strings.Contains(api.ErrorMessage(), tc.want) {
				t.Errorf("err = %v, want ValidationException naming %q", err, tc.want)
			}
		})
	}
}

// An index added to an existing table builds first: CREATING and
// backfilling, searches refused, then ACTIVE. Deleting it takes it away.
func TestVectorIndexAddedBuildsFirst(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	table := vectorTable(t, env)
	ctx := context.Background()
	_, err := env.Client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(table),
		VectorIndexUpdates: []types.VectorIndexUpdate{{Create: &types.CreateVectorIndexAction{
			IndexName:        aws.String("by_meaning_too"),
			VectorAttribute:  &types.VectorAttributeDefinition{AttributeName: aws.String("vec")},
			Dimensions:       aws.Int64(3),
			DistanceFunction: types.VectorDistanceFunctionEuclidean,
			SearchSchema:     []types.SearchSchemaElement{{AttributeName: aws.String("account"), SearchSchemaElementType: types.SearchSchemaElementTypeHash}},
			Projection:       &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Vectors.Rebuild(table, "by_meaning_too", time.Hour); err != nil {
		t.Fatal(err)
	}
	d, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Table.VectorIndexes); n != 2 || d.Table.VectorIndexes[1].IndexStatus != types.IndexStatusCreating || !aws.ToBool(d.Table.VectorIndexes[1].Backfilling) {
		t.Fatalf("VectorIndexes = %+v, want by_meaning_too CREATING and backfilling", d.Table.VectorIndexes)
	}
	_, err = env.Client.SearchVectors(ctx, &dynamodb.SearchVectorsInput{
		TableName: aws.String(table), IndexName: aws.String("by_meaning_too"), SearchVector: numbers(1, 0, 0).Value, TopK: aws.Int32(3),
		SearchConditionExpression: aws.String("account = :a"), ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a")},
	})
	var api smithy.APIError
	if !errors.As(err, &api) || !strings.Contains(api.ErrorMessage(), "Cannot search backfilling vector index: by_meaning_too") {
		t.Errorf("search while building: %v, want it refused", err)
	}
	if err := env.Vectors.Rebuild(table, "by_meaning_too", 0); err != nil {
		t.Fatal(err)
	}
	putVector(t, env.Client, table, "a", 1, "", 3, 4, 0)
	out, err := env.Client.SearchVectors(ctx, &dynamodb.SearchVectorsInput{
		TableName: aws.String(table), IndexName: aws.String("by_meaning_too"), SearchVector: numbers(0, 0, 0).Value, TopK: aws.Int32(3),
		SearchConditionExpression: aws.String("account = :a"), ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.SearchResults) != 1 || out.SearchResults[0].Score < 4.999 || out.SearchResults[0].Score > 5.001 {
		t.Errorf("results = %+v, want item 1 at euclidean distance 5", out.SearchResults)
	}
	if _, ok := out.SearchResults[0].Item["title"]; ok {
		t.Errorf("KEYS_ONLY index answered title")
	}

	_, err = env.Client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:          aws.String(table),
		VectorIndexUpdates: []types.VectorIndexUpdate{{Delete: &types.DeleteVectorIndexAction{IndexName: aws.String("by_meaning_too")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err = env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.VectorIndexes) != 1 {
		t.Errorf("after delete: VectorIndexes = %+v, want by_meaning alone", d.Table.VectorIndexes)
	}
}
