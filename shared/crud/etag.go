package crud

import (
	"net/http"
	"strconv"
	"strings"

	"contentapi/shared/httpapi"
	"contentapi/shared/store"
)

// etag names a record's version: it changes with every update.
func etag(item store.Item) string {
	id, _ := store.IntAttr(item, store.AttrID)
	version, _ := store.IntAttr(item, store.AttrVersion)
	// Written into one buffer: the tag is then the only allocation.
	var b [2*20 + 3]byte
	t := append(b[:0], '"')
	t = strconv.AppendInt(t, id, 10)
	t = append(t, '.')
	t = strconv.AppendInt(t, version, 10)
	return string(append(t, '"'))
}

// setETag sets the ETag header under the name Header.Set would give it,
// without making that name again for every answer.
func setETag(w http.ResponseWriter, tag string) {
	w.Header()["Etag"] = []string{tag}
}

// ifMatchVersion reads If-Match: the record version a write requires (0 when
// there is no condition). "*" only requires that the record exists, which
// every write does anyway. The tag of a gzip-encoded answer names the
// same version (httpapi.IdentityTag). A tag of another record, a weak tag
// or garbage can never match, so it is a 412 (RFC 9110 strong comparison).
func ifMatchVersion(r *http.Request, id int64) (int64, error) {
	header := strings.TrimSpace(r.Header.Get("If-Match"))
	if header == "" || header == "*" {
		return 0, nil
	}
	prefix := `"` + strconv.FormatInt(id, 10) + "."
	for _, t := range strings.Split(header, ",") {
		t = httpapi.IdentityTag(strings.TrimSpace(t))
		if strings.HasPrefix(t, prefix) && strings.HasSuffix(t, `"`) {
			if v, err := strconv.ParseInt(t[len(prefix):len(t)-1], 10, 64); err == nil && v > 0 {
				return v, nil
			}
		}
	}
	return 0, httpapi.PreconditionFailed()
}
