package records

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Cursor is where a list cut short by its bounds resumes: after the index
// entry whose sort key is Key (and id ID), with Matches records matching
// before that point and Read index entries read up to it. An empty Key
// resumes from the start of the index.
type Cursor struct {
	Key     string `json:"k,omitempty"`
	ID      int64  `json:"i,omitempty"`
	Matches int64  `json:"n"`
	Read    int64  `json:"r"`
}

// cursorField and invalidCursor are the 422 of a cursor refused.
const (
	cursorField   = "cursor"
	invalidCursor = "The cursor is invalid: follow links.next as it was given."
)

// InvalidCursor is the error of a cursor that verified but does not fit
// the index it resumes (DynamoDB refuses its start key): one only a holder
// of the signing key could make, such as anyone on a local stack.
func InvalidCursor() error {
	return &InvalidError{Fields: map[string][]string{cursorField: {invalidCursor}}}
}

// MaxCursorLength bounds the parameter: a name order's key is at most about
// 900 bytes, which base64 and JSON grow by half, plus the signature.
const MaxCursorLength = 2048

// Cursors signs the cursors a deployment hands out, so that a cursor's
// fields reach DynamoDB only as the service wrote them: a start key edited
// by a client would otherwise be a DynamoDB validation error, a 500. The
// signature also binds the cursor to the query it was made for and to the
// account it was made for (For), so that one pasted into another list, or
// used by another account, is refused rather than followed.
type Cursors struct {
	key     []byte
	account string
}

// For is the cursors of one account's lists: a cursor one account was
// given does not verify for another, whatever list it names.
func (cs Cursors) For(account string) Cursors {
	cs.account = account
	return cs
}

// cursorKeyInfo separates the cursor key from anything else derived from
// the same secret.
const cursorKeyInfo = "contentapi list cursor v1"

// NewCursors derives the signing key from the deployment's secret (the
// keys' checksum secret) with HKDF, so the secret itself signs nothing but
// keys. An empty secret, the local stack's, gives the zero Cursors, which
// sign under an empty key that anyone can compute: there only decode's
// bounds on the fields hold.
func NewCursors(secret []byte) (Cursors, error) {
	if len(secret) == 0 {
		return Cursors{}, nil
	}
	key, err := hkdf.Key(sha256.New, secret, nil, cursorKeyInfo, sha256.Size)
	if err != nil {
		return Cursors{}, fmt.Errorf("records: deriving the cursor key: %w", err)
	}
	return Cursors{key: key}, nil
}

// signatureLen is the MAC's length in a cursor: 128 bits.
const signatureLen = 16

// Encode is the cursor's form in a link, for the list q: the cursor's JSON
// and its MAC over the account, the query and that JSON, each base64url.
func (cs Cursors) Encode(q ListQuery, c Cursor) string {
	b, _ := json.Marshal(c) // a struct of strings and numbers always encodes
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(cs.sign(q, payload))
}

// sign is the MAC of payload for the list q of the account: everything
// about q but its cursor, so the same list and the same page, for the same
// account. The account comes first with its length, so no account and
// query run together into another's.
func (cs Cursors) sign(q ListQuery, payload string) []byte {
	q.Cursor = nil
	mac := hmac.New(sha256.New, cs.key)
	fmt.Fprintf(mac, "%d:%s\x00%#v\x00%s", len(cs.account), cs.account, q, payload)
	return mac.Sum(nil)[:signatureLen]
}

// decode reads a cursor made for q; false when it does not decode, is not
// signed by this deployment for q and the account, or points outside q's
// page.
func (cs Cursors) decode(q ListQuery, s string) (*Cursor, bool) {
	if len(s) > MaxCursorLength {
		return nil, false
	}
	payload, sig, ok := strings.Cut(s, ".")
	if !ok {
		return nil, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, cs.sign(q, payload)) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil, false
	}
	var c Cursor
	if json.Unmarshal(b, &c) != nil {
		return nil, false
	}
	// The service resumes a page only before its end, and never past
	// what it has read.
	if c.Matches < 0 || c.Matches >= q.Offset()+int64(q.PerPage) || c.Read < 0 || c.ID < 0 {
		return nil, false
	}
	return &c, true
}
