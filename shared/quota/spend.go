package quota

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
)

// The monthly spend limit: what an account's generations may cost in a
// month, in nano-dollars (generation.USD), checked against the account's
// spend ledger (shared/store, ledger.go) rather than a counter item, since
// every generated resource spends against the same limit.

// CommittedAttr is the ledger's attribute holding what the account has
// committed to spend in period: what its generations cost, plus the worst
// case of those still under way.
func CommittedAttr(p Period) string { return "committed_" + UsedAttr(Spend, p)[len("used_"):] }

// ParseSpendLimit reads a spend limit in dollars ("12.50"), or
// "unlimited".
func ParseSpendLimit(s string) (Limit, error) {
	if s == unlimitedWord {
		return Unlimited, nil
	}
	usd, err := generation.ParseUSD(s)
	if err != nil {
		return Limit{}, err
	}
	return Max(int64(usd)), nil
}

// SpendLimit is the spend limit that applies to the account whose item (a
// counter item, or the ledger) says what its own is: its own, else def.
func SpendLimit(item map[string]types.AttributeValue, def Limit) (Limit, error) {
	own, ok, err := OwnLimit(item, Spend)
	if err != nil || !ok {
		return def, err
	}
	return own, nil
}

// LimitName is how people type a kind's limit (make limits, apikey
// limits): its name, with the unit where it is not a count (spend_usd).
func LimitName(k Kind) string {
	if k == Spend {
		return "spend_usd"
	}
	return string(k)
}

// ParseKindLimit reads a limit of k as people type it: dollars for spend,
// a whole number for the others, or "unlimited".
func ParseKindLimit(k Kind, s string) (Limit, error) {
	if k == Spend {
		return ParseSpendLimit(s)
	}
	return ParseLimit(s)
}

// FormatLimit is a limit of k as ParseKindLimit reads it.
func FormatLimit(k Kind, l Limit) string {
	if n, ok := l.Value(); ok && k == Spend {
		return strings.TrimPrefix(generation.USD(n).String(), "$")
	}
	return l.String()
}
