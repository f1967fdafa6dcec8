package ddblocal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/ddblocal"
)

// A write its condition refuses is billed as AWS bills it: the item as it
// stands, at least one unit, where DynamoDB Local reports nothing.
func TestRefusedConditionalWriteIsBilled(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	db, meter := env.Metered(t)
	table := aws.String(env.Tables["ImagesTable"])
	key := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"account": &types.AttributeValueMemberS{Value: "acme"}, "id": &types.AttributeValueMemberN{Value: id}}
	}
	big := key("2")
	big["description"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", 2500)}
	if _, err := env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: table, Item: big}); err != nil {
		t.Fatal(err)
	}
	refuse := func(id string) *dynamodb.UpdateItemInput {
		return &dynamodb.UpdateItemInput{
			TableName: table, Key: key(id),
			UpdateExpression:                    aws.String("SET #n = :n"),
			ConditionExpression:                 aws.String("attribute_not_exists(#n) AND #n = :n"),
			ExpressionAttributeNames:            map[string]string{"#n": "name"},
			ExpressionAttributeValues:           map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "x"}},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
	}
	calls := meter.Measure(func() {
		_, _ = db.UpdateItem(context.Background(), refuse("1")) // no item
		_, _ = db.UpdateItem(context.Background(), refuse("2")) // a 2.5 KB item
	})
	if len(calls) != 2 {
		t.Fatalf("%d calls recorded", len(calls))
	}
	for i, want := range []float64{1, 3} {
		if c := calls[i]; c.Err == nil || c.Units != want || c.Corrected == "" {
			t.Errorf("refused write %d: %s, want %g WRU", i, c, want)
		}
	}
}
