package ddblocal

import (
	"context"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Calls counts the operations a client made, by name: "GetItem", "Scan".
// Tests use it to hold code to what it may cost, against the real DynamoDB
// Local rather than a fake.
type Calls struct {
	mu sync.Mutex
	n  map[string]int
}

// Counting returns a client like c that counts each operation it starts in
// the returned Calls: once per operation, whatever its retries.
func Counting(c *dynamodb.Client) (*dynamodb.Client, *Calls) {
	calls := &Calls{n: map[string]int{}}
	counted := dynamodb.New(c.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountCalls",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					calls.add(awsmiddleware.GetOperationName(ctx))
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
		})
	})
	return counted, calls
}

func (c *Calls) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[op]++
}

// Count is how many op operations were made.
func (c *Calls) Count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// Total is how many operations were made, of any kind.
func (c *Calls) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, n := range c.n {
		total += n
	}
	return total
}

// Reset forgets the counts so far.
func (c *Calls) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.n)
}
