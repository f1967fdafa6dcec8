package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/records"
)

// BatchWriter is the call Import needs besides DB; *dynamodb.Client has it.
type BatchWriter interface {
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// maxBatchWrite is BatchWriteItem's limit of requests per call.
const maxBatchWrite = 25

// importWorkers is how many BatchWriteItem calls Import keeps in flight.
const importWorkers = 2

// ErrNoBatchWrite: Import was called on a table whose DB cannot BatchWriteItem.
var ErrNoBatchWrite = errors.New("store: import needs a DB with BatchWriteItem")

// Import stores validated records (what ValidateCreate, and for later
// fields ValidateUpdate, produce) in bulk, exactly as Create stores each
// one, and returns the first id given: the records get consecutive ids in
// the order of vs. It is for seeding and migrations, not requests: one
// counter update reserves every id, BatchWriteItem writes 25 items per call
// with several calls in flight, and one more counter update adds the
// per-scope counts at the end. It is not atomic: on an error some records
// may be written and not counted. It counts no monthly usage: imported
// records were made before, or elsewhere.
func (t *Table) Import(ctx context.Context, account string, vs []records.Values) (int64, error) {
	bw, ok := t.db.(BatchWriter)
	if !ok {
		return 0, ErrNoBatchWrite
	}
	if len(vs) == 0 {
		return 0, nil
	}
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       key(account, counterID),
		UpdateExpression:          ptr("ADD #next :n"),
		ExpressionAttributeNames:  map[string]string{"#next": attrNextID},
		ExpressionAttributeValues: Item{":n": num(int64(len(vs)))},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, err
	}
	last, ok := IntAttr(out.Attributes, attrNextID)
	first := last - int64(len(vs)) + 1
	if !ok || first <= 0 || last >= scopeStride {
		return 0, fmt.Errorf("counter of %s returned no usable ids", t.name)
	}

	counts := map[int64]int64{}
	batches := make(chan []types.WriteRequest)
	errs := make(chan error, importWorkers)
	var wg sync.WaitGroup
	for range importWorkers {
		wg.Go(func() {
			for batch := range batches {
				if err := t.batchWrite(ctx, bw, batch); err != nil {
					errs <- err
					for range batches { // drain so the producer stops
					}
					return
				}
			}
		})
	}
	var batch []types.WriteRequest
	for i, v := range vs {
		counts[t.scopeOf(v)]++
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: t.newItem(account, first+int64(i), v, "", nil)}})
		if len(batch) == maxBatchWrite || i == len(vs)-1 {
			batches <- batch
			batch = nil
		}
	}
	close(batches)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}

	names := map[string]string{}
	values := Item{}
	var adds []string
	for _, scope := range slices.Sorted(maps.Keys(counts)) {
		n := fmt.Sprintf("#c%d", len(adds))
		names[n] = countAttr(scope)
		values[":"+n[1:]] = num(counts[scope])
		adds = append(adds, n+" :"+n[1:])
	}
	_, err = t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       key(account, counterID),
		UpdateExpression:          ptr("ADD " + strings.Join(adds, ", ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return 0, err
	}
	return first, nil
}

// batchWrite writes one batch, retrying what DynamoDB leaves unprocessed.
func (t *Table) batchWrite(ctx context.Context, bw BatchWriter, batch []types.WriteRequest) error {
	pending := map[string][]types.WriteRequest{t.name: batch}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > maxUnprocessedRetries {
			return fmt.Errorf("batch write on %s: items still unprocessed", t.name)
		}
		out, err := bw.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return err
		}
		pending = out.UnprocessedItems
	}
	return nil
}
