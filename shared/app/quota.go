// An account's own monthly limits, its quota: shared/quota's Limits, kept on
// the counter item of each resource that counts a kind (and the webhooks'
// for the deliveries), as make limits and apikey limits set them. (Requests per key and minute are shared/ratelimit's.)

package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/hookstore"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// WebhooksTable is the logical ID in template.yaml of the webhooks' table,
// which keeps the deliveries' usage and limits (WebhooksQuota).
const WebhooksTable = "WebhooksTable"

// SetLimits changes an account's own monthly limits, each in the table of
// the resource that counts its kind, or the webhooks' table for the
// deliveries (tables by logical ID, as Config.Tables has them): set gives
// each kind in it a limit, unlimited included, reset returns each kind in
// it to the deployment's default, and kinds in neither keep theirs. It
// returns the account's own limits after the change; a kind absent has the
// default. With nothing to change it only reads them. It is what `make
// limits` and `apikey limits` run.
func SetLimits(ctx context.Context, db *dynamodb.Client, tables map[string]string, account string, set quota.Limits, reset []quota.Kind) (quota.Limits, error) {
	if account == "" {
		return nil, fmt.Errorf("no account given")
	}
	for k := range set {
		if !counted(k) {
			return nil, fmt.Errorf("no resource counts %s", k)
		}
	}
	for _, k := range reset {
		if !counted(k) {
			return nil, fmt.Errorf("no resource counts %s", k)
		}
	}
	own := quota.Limits{}
	for _, r := range Resources {
		kinds := r.Quota.Kinds()
		if len(kinds) == 0 {
			continue
		}
		name := tables[r.Table()]
		if name == "" {
			return nil, fmt.Errorf("no name for the table %s, which holds the limits of %v", r.Table(), kinds)
		}
		t := store.New(db, name, r.Def)
		t.Quota = r.Quota
		mine, myResets := only(kinds, set, reset)
		after, err := t.SetLimits(ctx, account, mine, myResets)
		if err != nil {
			return nil, err
		}
		for k, l := range after {
			own[k] = l
		}
	}
	if err := setSpendLimit(ctx, db, tables, account, set, reset, own); err != nil {
		return nil, err
	}
	name := tables[WebhooksTable]
	if name == "" {
		return nil, fmt.Errorf("no name for the table %s, which holds the limits of %v", WebhooksTable, WebhooksQuota.Kinds())
	}
	hooks := &hookstore.Store{Client: db, Table: name, Quota: WebhooksQuota}
	mine, myResets := only(WebhooksQuota.Kinds(), set, reset)
	after, err := hooks.SetLimits(ctx, account, mine, myResets)
	if err != nil {
		return nil, err
	}
	for k, l := range after {
		own[k] = l
	}
	return own, nil
}

// only is what of set and reset are limits of kinds.
func only(kinds []quota.Kind, set quota.Limits, reset []quota.Kind) (quota.Limits, []quota.Kind) {
	mine := quota.Limits{}
	for k, l := range set {
		if slices.Contains(kinds, k) {
			mine[k] = l
		}
	}
	var myResets []quota.Kind
	for _, k := range reset {
		if slices.Contains(kinds, k) {
			myResets = append(myResets, k)
		}
	}
	return mine, myResets
}

// counted reports whether a resource or the webhooks count k.
func counted(k quota.Kind) bool {
	return slices.Contains(Kinds, k)
}

// setSpendLimit sets or resets the account's own spend limit, where it is
// given, on the counter item of each generated resource (its creates read
// it there) and on the spend ledger (shared/store, ledger.go), the first
// generated resource's spend item, adding it to own.
func setSpendLimit(ctx context.Context, db *dynamodb.Client, tables map[string]string, account string, set quota.Limits, reset []quota.Kind, own quota.Limits) error {
	l, setting := set[quota.Spend]
	if !setting && !slices.Contains(reset, quota.Spend) {
		for _, r := range Resources {
			if name := tables[r.Table()]; r.Def.Content != nil && name != "" {
				l, ok, err := store.New(db, name, r.Def).OwnSpendLimit(ctx, account)
				if ok {
					own[quota.Spend] = l
				}
				return err
			}
		}
		return nil
	}
	var to *quota.Limit
	if setting {
		to = &l
	}
	first := true
	for _, r := range Resources {
		if r.Def.Content == nil {
			continue
		}
		name := tables[r.Table()]
		if name == "" {
			return fmt.Errorf("no name for the table %s, which holds the spend limit", r.Table())
		}
		after, ok, err := store.New(db, name, r.Def).SetSpendLimit(ctx, account, to, first)
		if err != nil {
			return err
		}
		if ok {
			own[quota.Spend] = after
		}
		first = false
	}
	return nil
}
