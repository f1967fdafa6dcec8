// The worst case (SeedWorstCase, MeasureWorstCase) is the largest records
// the validation accepts, in numbers that would take every list path past
// its bounds if nothing bounded it:
//
//   - Every name is 128 characters of U+FDFA, whose folded form is 33
//     bytes: the largest index entries (~5 KB; about 0.53 RRU each as
//     DynamoDB Local bills a Query). Every other text field is at its
//     longest, in 4-byte characters interleaved with U+2028, which JSON
//     writes as six bytes: near the most an item can hold, and more than
//     any other text in an answer.
//   - WorstCaseSize.Images images and WorstCaseSize.Documents Freestyle
//     documents, favorites rare and names matching no search: a filter, a
//     name search, a name order through another template or a deep page
//     walks an index of thousands of such entries, about 3,200 RRU for
//     FullWorstCase (WorstCaseAccount.IndexReads measures it).
//   - The newest WorstCaseSize.Results documents carry a result at its
//     longest (~85 KB stored, ~21 RRU each, ~113 KB in JSON): a search by
//     result fetches each one it tests, and a page of 100 of them reads
//     ~2,100 RRU and answers ~11 MB, unbounded.
//
// The records are validated by each resource's own rules, then written as
// store.Table.Import writes them (BatchWriteItem; the counter item counts
// them), not through the API: the seeding of FullWorstCase stays well
// under a minute.

package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/images"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// WorstCaseSize is how many records the account holds.
type WorstCaseSize struct {
	// Images and Documents are the records of each table; Documents are
	// Freestyle (the default list's template), besides OtherTemplate.
	Images, Documents int
	// Results is how many of the newest documents carry a result.
	Results int
}

// FullWorstCase is the bench's account: a walk of either index would read
// about 3,200 RRU, and fetching its 300 results 6,300 RRU, against a budget
// of 2,000.
var FullWorstCase = WorstCaseSize{Images: 6000, Documents: 6000, Results: 300}

// WorstCaseOtherTemplate holds a few documents (the oldest), so that a list
// of that template in name order walks every document's name entry to fill a
// page.
const (
	WorstCaseOtherTemplate = 2
	otherTemplateDocs      = 3
)

// favoriteEvery makes one record in so many a favorite: a favorites filter
// matches too few to fill a page, so it counts through the whole index.
const favoriteEvery = 997

// Largest values of the enumerations, for the largest index entries.
const (
	resolution = "1024x1024"
	style      = "illustration"
	medium     = "spray_paint"
	filter     = "grayscale"
)

// WorstCaseAccount is what Seed wrote.
type WorstCaseAccount struct {
	Name string
	Key  string // read and write
	WorstCaseSize
	FirstImage, FirstDocument int64
	// IndexReads is what reading a table's whole by_id index costs (eventually
	// consistent, as lists read it), by table's logical ID: the least an
	// unbounded filter, search or deep page of that table would read.
	IndexReads map[string]float64
	Took       time.Duration
}

// LastDocument is the newest document: one with a result at its longest
// when the account has any.
func (a *WorstCaseAccount) LastDocument() int64 {
	return a.FirstDocument + int64(otherTemplateDocs+a.Documents) - 1
}

// SeedWorstCase writes the account's records into db's tables and gives it a
// key.
func SeedWorstCase(ctx context.Context, db *dynamodb.Client, tables map[string]string, account string, size WorstCaseSize) (*WorstCaseAccount, error) {
	start := time.Now()
	imgs, docs, err := values(size)
	if err != nil {
		return nil, err
	}
	a := &WorstCaseAccount{Name: account, WorstCaseSize: size}
	errs := make(chan error, 2)
	go func() {
		var err error
		a.FirstImage, err = store.New(db, tables["ImagesTable"], images.Resource).Import(ctx, account, imgs)
		errs <- err
	}()
	go func() {
		var err error
		a.FirstDocument, err = store.New(db, tables["DocumentsTable"], documents.Resource).Import(ctx, account, docs)
		errs <- err
	}()
	for range 2 {
		if err := <-errs; err != nil {
			return nil, fmt.Errorf("bench: seed: %w", err)
		}
	}
	a.Key, _, err = auth.NewKeys(db, tables["ApiKeysTable"], auth.PublicChecksum).Create(ctx, account,
		[]auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		return nil, err
	}
	a.Took = time.Since(start)
	a.IndexReads = map[string]float64{}
	for _, logical := range []string{"ImagesTable", "DocumentsTable"} {
		if a.IndexReads[logical], err = indexReads(ctx, db, tables[logical], account); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// indexReads is what a Query through the account's whole by_id index
// costs, page after page.
func indexReads(ctx context.Context, db *dynamodb.Client, table, account string) (float64, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &table,
		IndexName:                 aws.String(store.IndexByID),
		KeyConditionExpression:    aws.String("#a = :a"),
		ExpressionAttributeNames:  map[string]string{"#a": store.AttrAccount},
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberS{Value: account}},
		Select:                    types.SelectCount,
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	}
	var units float64
	for p := dynamodb.NewQueryPaginator(db, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("bench: reading %s's index: %w", table, err)
		}
		if cc := out.ConsumedCapacity; cc != nil && cc.CapacityUnits != nil {
			units += *cc.CapacityUnits
		}
	}
	return units, nil
}

// values are the records to import, oldest first, validated as a create
// and then an update through the API would be.
func values(size WorstCaseSize) (imgs, docs []records.Values, err error) {
	name := strings.Repeat("\uFDFA", maxChars(images.Resource, "name"))
	description := text(maxChars(images.Resource, "description"))
	prompt := text(maxChars(documents.Resource, "prompt"))
	result := text(maxChars(documents.Resource, "result"))
	for i := range size.Images {
		v, err := validated(images.Resource, map[string]string{"name": name, "description": description,
			"resolution": resolution, "style": style, "medium": medium, "filter": filter},
			map[string]string{"favorite": favorite(i)})
		if err != nil {
			return nil, nil, err
		}
		imgs = append(imgs, v)
	}
	for i := range otherTemplateDocs + size.Documents {
		create := map[string]string{"name": name, "prompt": prompt}
		if i < otherTemplateDocs {
			create["template_id"] = strconv.Itoa(WorstCaseOtherTemplate)
		}
		update := map[string]string{"favorite": favorite(i)}
		if i >= otherTemplateDocs+size.Documents-size.Results {
			update["result"] = result
		}
		v, err := validated(documents.Resource, create, update)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, v)
	}
	return imgs, docs, nil
}

func favorite(i int) string { return strconv.FormatBool(i%favoriteEvery == 0) }

// validated is a record's stored values: create's fields, then update's,
// each checked by the resource as the API checks them.
func validated(res *records.Resource, create, update map[string]string) (records.Values, error) {
	v, err := res.ValidateCreate(fields(create))
	if err != nil {
		return nil, fmt.Errorf("bench: a %s the API would refuse: %w", res.Object, err)
	}
	changes, err := res.ValidateUpdate(fields(update))
	if err != nil {
		return nil, fmt.Errorf("bench: an update of a %s the API would refuse: %w", res.Object, err)
	}
	for k, x := range changes {
		v[k] = x
	}
	return v, nil
}

func fields(m map[string]string) records.Input {
	var f records.Input
	for k, v := range m {
		f.Add(k, records.InputValue{Text: v})
	}
	return f
}

// maxChars is the longest text the resource's field takes.
func maxChars(res *records.Resource, field string) int {
	for _, f := range res.Fields {
		if k, ok := f.Kind.(records.Text); ok && f.Name == field {
			return k.Max
		}
	}
	panic("bench: " + res.Name + " has no text field " + field)
}

// text is n characters alternating U+1D51E (four bytes) and U+2028 (three,
// six in JSON), beginning and ending with the former so that no trimming
// shortens it.
func text(n int) string {
	var b strings.Builder
	for i := range n {
		if i%2 == 1 && i != n-1 {
			b.WriteRune('\u2028')
		} else {
			b.WriteRune('\U0001D51E')
		}
	}
	return b.String()
}
