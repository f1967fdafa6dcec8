package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is a permission a key carries.
type Scope string

const (
	// ScopeRead allows the GET operations.
	ScopeRead Scope = "read"
	// ScopeWrite allows POST, PUT and DELETE, and implies ScopeRead.
	ScopeWrite Scope = "write"
)

// allScopes is the canonical order in which scopes are stored and printed.
var allScopes = []Scope{ScopeRead, ScopeWrite}

// ParseScopes reads a comma-separated scope list such as "read",
// "write" or "read,write" (spaces around names are ignored). Unknown, empty
// or repeated names are errors rather than silently dropped, since a typo in
// an admin command must not mint a key with other rights than intended.
// The result is in canonical order: read before write.
func ParseScopes(s string) ([]Scope, error) {
	var seen []Scope
	for name := range strings.SplitSeq(s, ",") {
		sc := Scope(strings.TrimSpace(name))
		if !slices.Contains(allScopes, sc) {
			return nil, fmt.Errorf("auth: unknown scope %q (want read, write or read,write)", string(sc))
		}
		if slices.Contains(seen, sc) {
			return nil, fmt.Errorf("auth: scope %q given twice", string(sc))
		}
		seen = append(seen, sc)
	}
	return canonicalScopes(seen), nil
}

// checkScopes validates scopes handed to Create or Import and returns them in
// canonical order without duplicates.
func checkScopes(scopes []Scope) ([]Scope, error) {
	if len(scopes) == 0 {
		return nil, fmt.Errorf("a key needs at least one scope")
	}
	for _, sc := range scopes {
		if !slices.Contains(allScopes, sc) {
			return nil, fmt.Errorf("unknown scope %q", string(sc))
		}
	}
	return canonicalScopes(scopes), nil
}

func canonicalScopes(scopes []Scope) []Scope {
	out := make([]Scope, 0, len(allScopes))
	for _, sc := range allScopes {
		if slices.Contains(scopes, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// FormatScopes is the inverse of ParseScopes: "read,write".
func FormatScopes(scopes []Scope) string {
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = string(sc)
	}
	return strings.Join(names, ",")
}

// Principal is who a request acts for.
type Principal struct {
	Account string // owner of every record the request may touch
	KeyID   string // public id of the key used, for logs and audit
	Scopes  []Scope
}

// Allows reports whether p may act with scope s. A write key can also read:
// a client able to change records must be able to see what it changed.
func (p Principal) Allows(s Scope) bool {
	for _, have := range p.Scopes {
		if have == s || (have == ScopeWrite && s == ScopeRead) {
			return true
		}
	}
	return false
}

// validateAccount accepts 1-64 characters of [A-Za-z0-9._-]. The limits keep
// account names safe to print, to log and to use in DynamoDB keys.
func validateAccount(name string) error {
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("auth: invalid account name %q: want 1-64 characters of [A-Za-z0-9._-]", name)
	}
	return nil
}
