package s3local

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// maxSkew is how far a signed request's time may be from the server's, as
// S3 allows.
const maxSkew = 15 * time.Minute

// maxExpires is the longest a presigned URL may last (seven days), as S3.
const maxExpires = 7 * 24 * time.Hour

// unsignedPayload is what a presigned URL's payload hash is.
const unsignedPayload = "UNSIGNED-PAYLOAD"

// signer is the SDK's SigV4 signer as S3 uses it (paths not escaped a
// second time): the server signs each request again with the secret and
// compares, so its checks are S3's whatever client signed.
var signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })

// authenticating refuses what S3 refuses from a stranger: a request that is
// not signed by creds (in its Authorization header or presigned in its
// query), signed too far from now, or presigned without X-Amz-Expires or
// past it. Otherwise a web page could read, list, overwrite or delete the
// pictures of a developer's local stack.
func authenticating(creds aws.CredentialsProvider, now func() time.Time, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := creds.Retrieve(r.Context())
		if err != nil {
			s3Error(w, http.StatusInternalServerError, "InternalError", "No credentials to check the signature with.")
			return
		}
		if status, code, msg := check(r, c, now()); code != "" {
			s3Error(w, status, code, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// check is S3's verdict on r's signature: an empty code when it holds.
func check(r *http.Request, c aws.Credentials, now time.Time) (status int, code, message string) {
	q := r.URL.Query()
	if q.Get("X-Amz-Signature") != "" || q.Get("X-Amz-Credential") != "" {
		return checkPresigned(r, q, c, now)
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return http.StatusForbidden, "AccessDenied", "Access Denied"
	}
	fields, ok := authFields(auth)
	if !ok {
		return http.StatusBadRequest, "AuthorizationHeaderMalformed", "The authorization header is malformed."
	}
	signed, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return http.StatusForbidden, "AccessDenied", "X-Amz-Date is missing or malformed."
	}
	if d := now.Sub(signed); d > maxSkew || d < -maxSkew {
		return http.StatusForbidden, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large."
	}
	region, ok := scopeRegion(fields["Credential"], c.AccessKeyID)
	if !ok {
		return http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	clone := signedOnly(r, fields["SignedHeaders"])
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if err := signer.SignHTTP(context.Background(), c, clone, payload, "s3", region, signed); err != nil {
		return http.StatusForbidden, "SignatureDoesNotMatch", err.Error()
	}
	want, _ := authFields(clone.Header.Get("Authorization"))
	if !equal(want["Signature"], fields["Signature"]) {
		return http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."
	}
	return 0, "", ""
}

// checkPresigned is check of a presigned URL.
func checkPresigned(r *http.Request, q url.Values, c aws.Credentials, now time.Time) (int, string, string) {
	expires := q.Get("X-Amz-Expires")
	if expires == "" {
		return http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Expires must be given."
	}
	secs, err := strconv.Atoi(expires)
	if err != nil || secs < 0 || time.Duration(secs)*time.Second > maxExpires {
		return http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Expires must be a number of seconds up to 604800."
	}
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Date is missing or malformed."
	}
	if now.After(signed.Add(time.Duration(secs)*time.Second)) || signed.Sub(now) > maxSkew {
		return http.StatusForbidden, "AccessDenied", "Request has expired"
	}
	region, ok := scopeRegion(q.Get("X-Amz-Credential"), c.AccessKeyID)
	if !ok {
		return http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	clone := signedOnly(r, q.Get("X-Amz-SignedHeaders"))
	// The signer adds the signature's own parameters; the rest (the
	// expiry among them) is what was signed.
	unsigned := clone.URL.Query()
	for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"} {
		unsigned.Del(p)
	}
	clone.URL.RawQuery = unsigned.Encode()
	uri, _, err := signer.PresignHTTP(context.Background(), c, clone, unsignedPayload, "s3", region, signed)
	if err != nil {
		return http.StatusForbidden, "SignatureDoesNotMatch", err.Error()
	}
	want, err := url.Parse(uri)
	if err != nil || !equal(want.Query().Get("X-Amz-Signature"), q.Get("X-Amz-Signature")) {
		return http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."
	}
	return 0, "", ""
}

// authFields are an Authorization header's Credential, SignedHeaders and
// Signature.
func authFields(auth string) (map[string]string, bool) {
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return nil, false
	}
	fields := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, false
		}
		fields[k] = v
	}
	return fields, fields["Credential"] != "" && fields["SignedHeaders"] != "" && fields["Signature"] != ""
}

// scopeRegion is the region of a credential scope (AKID/date/region/s3/
// aws4_request) made with the access key id.
func scopeRegion(credential, accessKeyID string) (string, bool) {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 || parts[0] != accessKeyID || parts[3] != "s3" || parts[4] != "aws4_request" {
		return "", false
	}
	return parts[2], true
}

// signedOnly is r with only the headers its signature names, so that the
// signer signs what the client signed and no more.
func signedOnly(r *http.Request, signedHeaders string) *http.Request {
	clone := r.Clone(context.Background())
	clone.Header = http.Header{}
	clone.ContentLength = 0
	for name := range strings.SplitSeq(signedHeaders, ";") {
		switch name {
		case "host":
		case "content-length":
			clone.ContentLength = r.ContentLength
		default:
			clone.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	return clone
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
