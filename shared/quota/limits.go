package quota

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The account's own limits and its usage, as they are written and read on a
// counter item, whichever table keeps it (a resource's, the webhooks').

// LimitsUpdate is the write on a counter item that changes the account's
// own limits of the policy's kinds: set gives each kind in it a limit
// (unlimited included), reset returns each kind in it to the deployment's
// default; kinds in neither keep theirs. False when there is nothing to
// change. A kind the policy does not count is an error.
func (p Policy) LimitsUpdate(set Limits, reset []Kind) (expression.UpdateBuilder, bool, error) {
	kinds := p.Kinds()
	var update expression.UpdateBuilder
	for k, l := range set {
		if !slices.Contains(kinds, k) || slices.Contains(reset, k) {
			return update, false, fmt.Errorf("quota: no limit of %s to set here", k)
		}
		update = update.Set(expression.Name(LimitAttr(k)), expression.Value(LimitValue(l)))
	}
	for _, k := range reset {
		if !slices.Contains(kinds, k) {
			return update, false, fmt.Errorf("quota: no limit of %s to reset here", k)
		}
		update = update.Remove(expression.Name(LimitAttr(k)))
	}
	return update, len(set)+len(reset) > 0, nil
}

// OwnLimits are the account's own limits of the policy's kinds on its
// counter item (a kind absent has the default).
func (p Policy) OwnLimits(item map[string]types.AttributeValue) (Limits, error) {
	own := Limits{}
	for _, k := range p.Kinds() {
		l, ok, err := OwnLimit(item, k)
		if err != nil {
			return nil, err
		}
		if ok {
			own[k] = l
		}
	}
	return own, nil
}

// UsageProjection is what Read needs of a counter item for period: each
// kind's usage and limit, beside the names given.
func (p Policy) UsageProjection(period Period, names ...string) expression.ProjectionBuilder {
	var proj expression.ProjectionBuilder
	for _, n := range names {
		proj = proj.AddNames(expression.Name(n))
	}
	for _, k := range p.Kinds() {
		proj = proj.AddNames(expression.Name(UsedAttr(k, period)), expression.Name(LimitAttr(k)))
	}
	return proj
}
