package store

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/records"
)

// Lookup reads one record of the account from the table of the named
// resource, strongly consistent: nil when there is none (never written,
// or deleted). It is how a record's Ref fields (records.Ref) are read.
type Lookup func(ctx context.Context, account, resource string, id int64) (Item, error)

// LookupIn looks records up in the given tables, by their resources'
// names; a resource of none of them is an error.
func LookupIn(tables ...*Table) Lookup {
	byName := map[string]*Table{}
	for _, t := range tables {
		byName[t.res.Name] = t
	}
	return func(ctx context.Context, account, resource string, id int64) (Item, error) {
		t := byName[resource]
		if t == nil {
			return nil, &unknownResourceError{resource}
		}
		return t.Get(ctx, account, id)
	}
}

type unknownResourceError struct{ resource string }

func (e *unknownResourceError) Error() string {
	return "store: no table of resource " + strconv.Quote(e.resource) + " to look records up in"
}

// Refs are the fields of the table's records that name records of other
// resources (records.Ref).
func (t *Table) Refs() []records.Field { return t.res.Refs() }

// Kept are the values a record keeps of the record named by its Ref field
// f (records.Ref.Keep), read from named; with named nil (the record named
// is gone), f and what it kept become null.
func Kept(f records.Field, named Item) records.Values {
	ref, _ := f.Kind.(records.Ref)
	v := records.Values{}
	if named == nil {
		v[f.Name] = nil
	}
	for from, to := range ref.Keep {
		v[to] = nil
		if named != nil {
			v[to] = valueOf(named[from])
		}
	}
	return v
}

// valueOf is a stored scalar as records.Values holds it.
func valueOf(av types.AttributeValue) any {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return x.Value
	case *types.AttributeValueMemberBOOL:
		return x.Value
	case *types.AttributeValueMemberN:
		if n, err := strconv.ParseInt(x.Value, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(x.Value, 64); err == nil {
			return f
		}
	}
	return nil
}
