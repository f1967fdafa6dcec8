package hookstore_test

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func getInput(table, account, sk string) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
		"account": &types.AttributeValueMemberS{Value: account}, "sk": &types.AttributeValueMemberS{Value: sk},
	}}
}
