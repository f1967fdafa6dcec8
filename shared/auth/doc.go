// Package auth turns the bearer token of a request into a Principal, and
// creates, lists and revokes the API keys behind those tokens.
//
// # Keys
//
// A key looks like
//
//	ck_<43 base62 characters><6 base62 characters>
//
// The fixed "ck_" prefix makes a leaked key easy to spot (secret scanners,
// grep); the 43-character body carries 256 random bits; the last six
// characters are a checksum of prefix and body, so a mistyped or truncated
// key is refused by [Checksum.Parse] before any DynamoDB call.
//
// The checksum is keyed in every deployed stack: an HMAC-SHA256 under a
// secret that CloudFormation generates (the template's KeyChecksumSecret)
// and hands to the functions and, through docs/deploying.md's "The first
// key", to the apikey command. Anyone can send a well-formed key, but without the secret its
// checksum is wrong in all but one case in 62^6, so a flood of forged keys
// costs no DynamoDB read at all, not even one per key. The secret proves
// nothing about who holds a key (the table lookup does that), so if it
// leaked, forged keys would cost one read each again and nothing more. The
// local stack has no secret and uses the public CRC-32, which [DemoKey]
// carries; for the same reason no deployed stack accepts the demo key.
//
// The secret reaches the functions as KEY_CHECKSUM_SECRET, a dynamic
// reference CloudFormation resolves at deploy, so it is in the functions'
// configuration, readable by whoever may call
// lambda:GetFunctionConfiguration. It stays there on purpose: what it
// guards is cost, not access (above). Resolving it at init from Secrets
// Manager instead was measured: the SDK's Secrets Manager client adds
// 262,144 bytes to a function (11,272,354 to 11,534,498 bytes for
// functions/images, arm64, as `make build` builds it), which fits the
// bootstrap budget, but every cold start would wait for a GetSecretValue
// round trip (the cold-start target is 30 ms in all), pay $0.05 per 10,000
// calls, and fail the function's init whenever Secrets Manager is slow or
// throttled. Someone who can read the functions' configuration can usually
// read their logs and tables too.
//
// Only the hex SHA-256 of the whole key is stored (the table's partition key
// key_hash). The plaintext is returned once, by [Keys.Create], and never
// logged: no error or message of this package contains a key. Plain SHA-256
// rather than a slow password hash is deliberate: the key already has 256 bits
// of entropy, so there is nothing to brute-force, and the lookup must be cheap.
//
// # Revocation delay
//
// An [Authenticator] caches what it learned about a key (its principal, or that
// it is unknown or revoked) for the ttl given to [NewAuthenticator]:
// [DefaultCacheTTL], 60 seconds, in the deployed functions unless the
// template's AuthCacheSeconds says otherwise. A key seen within the ttl costs
// no DynamoDB call, and so a revoked key keeps working for up to ttl on a warm
// function that saw it just before the revocation; a ttl of zero turns the
// cache off and makes revocation immediate, at one read per request. Expiry
// is different: it is checked on every request, cached or not, so an expired
// key is refused at once.
//
// The cache holds at most 10,000 keys per process. Refusals (unknown and
// revoked keys) are evicted before accepted keys, so a flood of keys that
// pass the checksum but are refused (revoked keys, or made-up keys where the
// checksum is public) costs at most one read per key and TTL, and cannot
// push real clients out of the cache.
// Concurrent lookups of one key share a single GetItem; a Lambda execution
// environment serves one request at a time, so this matters for the local
// gateway and any other long-running server.
//
// # Table
//
// One item per key, partition key key_hash (S):
//
//	key_hash    hex SHA-256 of the plaintext key
//	key_id      public id ("key_" + 12 base36 characters) used to list and revoke
//	account     the owner, 1-64 characters of [A-Za-z0-9._-]
//	scopes      string set: "read", "write"
//	created_at  time, ISO-8601 UTC with microseconds
//	expires_at  time, absent when the key never expires
//	revoked_at  time, absent until revoked
//
// The table holds nothing else: the functions may only read it (rate-limit
// counters have a table of their own). Its global secondary index
// [IndexByKeyID] maps key_id to key_hash, so [Keys.Revoke] finds a key with
// one Query instead of a scan.
package auth
