package crud

import (
	"fmt"
	"net/http"
	"slices"
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

// precondition reads a write's If-Match and If-None-Match for the record
// id (RFC 9110 13.1): what the write requires of the record's version, as
// part of its own condition, or the 412 a write gets at once.
//
// If-Match: "*" only requires that the record exists, which every write
// does anyway. Otherwise the write goes through only if one of the listed
// tags matches (strong comparison, so a weak tag never does; the tag of a
// gzip-encoded answer names the same version, httpapi.IdentityTag). A
// header present but empty or unparsable lists no tag, so nothing
// matches: 412, as a tag of another record or garbage is.
//
// If-None-Match: the write goes through only if none of the listed tags
// matches (weak comparison); "*" matches any record, so refuses a write
// of one that exists (absent reports it: answered by a read, which costs
// less than a refused write). A header that lists nothing names nothing.
func precondition(r *http.Request, id int64) (pre store.Precondition, absent bool, err error) {
	if values := r.Header.Values("If-Match"); len(values) > 0 {
		tags, star := entityTags(values)
		if !star {
			if pre.Match = versionsOf(tags, id, false); len(pre.Match) == 0 {
				return store.Precondition{}, false, httpapi.PreconditionFailed()
			}
		}
	}
	if values := r.Header.Values("If-None-Match"); len(values) > 0 {
		tags, star := entityTags(values)
		if star {
			return pre, true, nil
		}
		pre.NoneMatch = versionsOf(tags, id, true)
	}
	if len(pre.Match) > store.MaxPreconditionVersions || len(pre.NoneMatch) > store.MaxPreconditionVersions {
		return store.Precondition{}, false, httpapi.BadRequest(fmt.Sprintf(
			"If-Match and If-None-Match may each name at most %d versions of the record.", store.MaxPreconditionVersions))
	}
	return pre, false, nil
}

// entityTags splits a conditional header's lines into its list's elements
// (empty elements ignored, as RFC 9110 5.6.1 has a recipient do), and
// reports "*" given alone.
func entityTags(values []string) (tags []string, star bool) {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
	}
	return tags, len(tags) == 1 && tags[0] == "*"
}

// versionsOf are the versions of record id the tags name, each once: a
// strong tag "<id>.<version>" (or its gzip-encoded answer's), and with weak
// a weak one too. Tags of other records and anything not a tag name none.
func versionsOf(tags []string, id int64, weak bool) []int64 {
	prefix := `"` + strconv.FormatInt(id, 10) + "."
	var versions []int64
	for _, t := range tags {
		if weak {
			t = strings.TrimPrefix(t, "W/")
		}
		t = httpapi.IdentityTag(t)
		if !strings.HasPrefix(t, prefix) || !strings.HasSuffix(t, `"`) || len(t) <= len(prefix) {
			continue
		}
		if v, err := strconv.ParseInt(t[len(prefix):len(t)-1], 10, 64); err == nil && v > 0 && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	return versions
}
