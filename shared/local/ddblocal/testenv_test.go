package ddblocal_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
)

func TestNewCreatesTheTemplateTables(t *testing.T) {
	t.Parallel()
	env := ddblocal.NewTestEnv(t)
	ctx := context.Background()
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Tables) != len(tables) {
		t.Fatalf("Tables = %v, want one per template table", env.Tables)
	}
	for _, tbl := range tables {
		name := env.Tables[tbl.LogicalID]
		if !strings.HasPrefix(name, tbl.LogicalID+"-") {
			t.Errorf("%s is named %q", tbl.LogicalID, name)
		}
		d, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(d.Table.LocalSecondaryIndexes), len(tbl.Input.LocalSecondaryIndexes); got != want {
			t.Errorf("%s has %d LSIs, want %d", name, got, want)
		}
		if got, want := len(d.Table.GlobalSecondaryIndexes), len(tbl.Input.GlobalSecondaryIndexes); got != want {
			t.Errorf("%s has %d GSIs, want %d", name, got, want)
		}
		ttl, err := env.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		enabled := ttl.TimeToLiveDescription.TimeToLiveStatus == types.TimeToLiveStatusEnabled
		if enabled != (tbl.TTLAttribute != "") {
			t.Errorf("%s TTL status %s, template TTL attribute %q", name, ttl.TimeToLiveDescription.TimeToLiveStatus, tbl.TTLAttribute)
		}
	}
	// The lists' global index answers a query (eventually consistent: a
	// global index takes no other).
	_, err = env.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(env.Tables["ImagesTable"]),
		IndexName:                 aws.String("by_name"),
		KeyConditionExpression:    aws.String("account = :a"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberS{Value: "x"}},
	})
	if err != nil {
		t.Errorf("query on by_name: %v", err)
	}
}

// Each call gets tables of its own, and they are gone when its test ends.
func TestNewIsolatesTests(t *testing.T) {
	t.Parallel()
	a, b := ddblocal.NewTestEnv(t), ddblocal.NewTestEnv(t)
	for id, name := range a.Tables {
		if b.Tables[id] == name {
			t.Fatalf("two calls share table %s", name)
		}
	}
	ctx := context.Background()
	var inner string
	t.Run("inner", func(t *testing.T) {
		inner = ddblocal.NewTestEnv(t).Tables["ApiKeysTable"]
	})
	_, err := a.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(inner)})
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		t.Errorf("table %s survived its test: %v", inner, err)
	}
}
