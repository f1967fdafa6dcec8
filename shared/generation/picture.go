package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
)

// PictureName is the file name of the picture of one generation attempt
// of a record (shared/picturebucket keeps it under that name): the same
// for every delivery of that attempt, another for every other attempt or
// record, and revealing none of them.
func PictureName(account, resource string, id int64, attempt string) string {
	h := sha256.New()
	for _, part := range []string{"picture", account, resource, strconv.FormatInt(id, 10), attempt} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16]) + ".png"
}

// pictureName is what PictureName makes, 32 hex digits and .png; the
// length is checked apart, as a counted repeat compiles to a state per
// count at every cold start.
var pictureName = regexp.MustCompile(`^[0-9a-f]+\.png$`)

// IsPictureName reports whether s is a name PictureName makes: only those
// are read or deleted, whatever a stored record says.
func IsPictureName(s string) bool { return len(s) == 32+len(".png") && pictureName.MatchString(s) }
