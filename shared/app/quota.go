// An account's own monthly limits, its quota: shared/quota's Limits, kept on
// the counter item of each resource that counts a kind, as make limits and
// apikey limits set them. (Requests per key and minute are shared/ratelimit's.)

package app

import (
	"context"
	"fmt"
	"slices"

	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// SetLimits changes an account's own monthly limits, each in the table of
// the resource that counts its kind (tables by logical ID, as Config.Tables
// has them): set gives each kind in it a limit, unlimited included, reset
// returns each kind in it to the deployment's default, and kinds in neither
// keep theirs. It returns the account's own limits after the change; a kind
// absent has the default. With nothing to change it only reads them. It is
// what `make limits` and `apikey limits` run.
func SetLimits(ctx context.Context, db store.DB, tables map[string]string, account string, set quota.Limits, reset []quota.Kind) (quota.Limits, error) {
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
		after, err := t.SetLimits(ctx, account, mine, myResets)
		if err != nil {
			return nil, err
		}
		for k, l := range after {
			own[k] = l
		}
	}
	return own, nil
}

// counted reports whether a resource counts k.
func counted(k quota.Kind) bool {
	return slices.ContainsFunc(Resources, func(r Resource) bool { return slices.Contains(r.Quota.Kinds(), k) })
}
