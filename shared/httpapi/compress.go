package httpapi

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// MinCompressBytes is the smallest answer sent gzip-encoded: below it the
// gzip header and trailer (18 bytes) and the CPU buy next to nothing.
const MinCompressBytes = 1024

// gzipSuffix marks the entity tag of a gzip-encoded answer. RFC 9110
// (8.8.3.3) has a strong tag of a content-coded representation differ
// from the unencoded one's, so that caches and range requests never mix
// the two; a weak tag would do that too, but If-Match compares strongly
// and would then refuse every tag a gzip client ever read. So "7.3"
// becomes "7.3-gzip", and both name version 3 to If-None-Match and
// If-Match (IdentityTag).
const gzipSuffix = `-gzip"`

// varyAcceptEncoding is on every answer: whether one is compressed
// depends on the request's Accept-Encoding, which caches must key on.
// Shared by all answers, as nothing edits a header's values in place.
var varyAcceptEncoding = []string{"Accept-Encoding"}

// compress sends an answer of MinCompressBytes or more gzip-encoded when
// the request's Accept-Encoding allows it: through API Gateway that is a
// body Lambda returns base64-encoded, which the gateway decodes, so the
// client is sent the gzip bytes. The encoder is klauspost/compress's gzip
// at its default level: the same size as the standard library's at its
// default, in a sixth of the time (BENCHMARKS.md, ns_gzip_list).
func compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Vary"] = varyAcceptEncoding
		if !AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, r: r}
		next.ServeHTTP(gw, r)
		gw.finish()
	})
}

// AcceptsGzip reports whether an Accept-Encoding header allows gzip: named
// (or as x-gzip) with a q-value above 0, or left to "*" with one (RFC 9110,
// 12.5.3).
func AcceptsGzip(header string) bool {
	star := false
	for header != "" {
		var item string
		item, header, _ = strings.Cut(header, ",")
		coding, params, _ := strings.Cut(item, ";")
		coding = strings.TrimSpace(coding)
		ok := qAboveZero(params)
		switch {
		case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
			return ok
		case coding == "*":
			star = ok
		}
	}
	return star
}

// qAboveZero reads the q parameter of a coding: absent is 1.
func qAboveZero(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && q > 0
		}
	}
	return true
}

// IdentityTag is the entity tag of the unencoded answer a tag names: the
// tag itself, or, for the tag of a gzip-encoded answer, the one it was
// made from.
func IdentityTag(tag string) string {
	if strings.HasPrefix(tag, `"`) && strings.HasSuffix(tag, gzipSuffix) && len(tag) > len(gzipSuffix) {
		return tag[:len(tag)-len(gzipSuffix)] + `"`
	}
	return tag
}

// gzipTag is the entity tag of the gzip-encoded answer whose unencoded
// tag is tag; a weak tag may name both, and stays.
func gzipTag(tag string) string {
	if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return tag
	}
	return tag[:len(tag)-1] + gzipSuffix
}

// gzipWriter holds an answer back until the handler is done, to send it
// gzip-encoded or as it is.
type gzipWriter struct {
	http.ResponseWriter
	r      *http.Request
	status int
	body   *[]byte // from Buffer, once written to
	// through is set once the answer went on unheld: one not worth
	// compressing, whose status and headers are out.
	through bool
}

func (g *gzipWriter) WriteHeader(status int) {
	if g.through {
		g.ResponseWriter.WriteHeader(status)
		return
	}
	// Like the writers beneath, a later call wins until a write.
	g.status = status
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if g.status == 0 {
		g.status = http.StatusOK
	}
	if !g.through && g.body == nil && !g.compressible() {
		g.through = true
		g.ResponseWriter.WriteHeader(g.status)
	}
	if g.through {
		return g.ResponseWriter.Write(b)
	}
	if g.body == nil {
		g.body = Buffer()
	}
	*g.body = append(*g.body, b...)
	return len(b), nil
}

// compressible is an answer that may go gzip-encoded: one with content,
// of a textual type, not encoded already.
func (g *gzipWriter) compressible() bool {
	h := g.Header()
	ct := h.Get("Content-Type")
	return g.status >= 200 && g.status != http.StatusNoContent && g.status != http.StatusNotModified &&
		h.Get("Content-Encoding") == "" && (strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/"))
}

// finish sends what was held: gzip-encoded if it is MinCompressBytes or
// more and its encoding, in base64 as Lambda returns it, is shorter than
// the answer itself. Base64 needs no escaping in the response event, and
// the plain answer there is escaped again, so compression never makes the
// event longer: what keeps the plain answer within
// MaxLambdaResponseBytes (a list's paging) keeps the encoded one too.
func (g *gzipWriter) finish() {
	if g.through {
		return
	}
	if g.body == nil {
		if g.status == http.StatusNotModified {
			g.notModifiedTag()
		}
		if g.status != 0 {
			g.ResponseWriter.WriteHeader(g.status)
		}
		return
	}
	defer Release(g.body)
	body := *g.body
	if len(body) >= MinCompressBytes {
		zp := Buffer()
		defer Release(zp)
		*zp = AppendGzip((*zp)[:0], body)
		if base64.StdEncoding.EncodedLen(len(*zp)) < len(body) {
			h := g.Header()
			h["Content-Encoding"] = []string{"gzip"}
			h.Del("Content-Length")
			if tag := h.Get("Etag"); tag != "" {
				h.Set("Etag", gzipTag(tag))
			}
			g.ResponseWriter.WriteHeader(g.status)
			_, _ = g.ResponseWriter.Write(*zp)
			return
		}
	}
	g.ResponseWriter.WriteHeader(g.status)
	_, _ = g.ResponseWriter.Write(body)
}

// notModifiedTag answers a 304 with the tag the client holds when that is
// the gzip-encoded answer's: the one a cache keeps it under.
func (g *gzipWriter) notModifiedTag() {
	tag := g.Header().Get("Etag")
	if tag == "" {
		return
	}
	coded := gzipTag(tag)
	if ifNoneMatchHolds(g.r, func(t string) bool { return t == coded }) {
		g.Header().Set("Etag", coded)
	}
}

// gzipWriters are encoders kept for later answers: each holds its
// compressor's state, hundreds of KB.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression) // a valid level: no error
	return w
}}

// AppendGzip appends the gzip encoding of b to dst, as the answers are
// encoded.
func AppendGzip(dst, b []byte) []byte {
	zw := gzipWriters.Get().(*gzip.Writer)
	out := appender{dst}
	zw.Reset(&out)
	_, _ = zw.Write(b) // appending cannot fail
	_ = zw.Close()
	zw.Reset(nil)
	gzipWriters.Put(zw)
	return out.b
}

// appender is an io.Writer that appends to a slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}
