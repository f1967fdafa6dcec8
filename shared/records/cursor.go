package records

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
	// Check binds the cursor to the query it was made for, so that one
	// pasted into another list is refused rather than followed.
	Check string `json:"c"`
}

// MaxCursorLength bounds the parameter: a name order's key is at most about
// 900 bytes, which base64 and JSON grow by half.
const MaxCursorLength = 2048

// Encode is the cursor's form in a link, for the list q.
func (q ListQuery) Encode(c Cursor) string {
	c.Check = q.fingerprint()
	b, _ := json.Marshal(c) // a struct of strings and numbers always encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

// fingerprint identifies everything about q but its cursor: the same list,
// the same page.
func (q ListQuery) fingerprint() string {
	q.Cursor = nil
	sum := sha256.Sum256(fmt.Appendf(nil, "%#v", q))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// decodeCursor reads a cursor made for q; false when it does not decode,
// was made for another query, or points outside q's page.
func (q ListQuery) decodeCursor(s string) (*Cursor, bool) {
	if len(s) > MaxCursorLength {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	var c Cursor
	if json.Unmarshal(b, &c) != nil || c.Check != q.fingerprint() {
		return nil, false
	}
	// The service resumes a page only before its end, and never past
	// what it has read.
	if c.Matches < 0 || c.Matches >= q.Offset()+int64(q.PerPage) || c.Read < 0 || c.ID < 0 {
		return nil, false
	}
	c.Check = ""
	return &c, true
}
