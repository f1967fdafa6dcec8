// Package webhook holds the two building blocks of webhook delivery that
// carry its risk: the signature, per the Standard Webhooks specification
// (standardwebhooks.com), so that a receiver verifies a delivery with that
// project's published libraries, and a delivery client that calls only
// public addresses, so that an endpoint URL cannot make the service reach
// into its own network (SSRF).
//
// The webhook sender, the function that takes deliveries from the queue,
// makes each attempt with Client.Deliver, which signs it at that moment
// with Sign (the webhook-id stays the same across an event's retries, the
// timestamp is the attempt's) and posts it through Client.Post, which resolves the host itself, refuses every non-public
// address, connects to exactly the address it checked (DNS rebinding
// cannot switch it), follows no redirect, gives up after 10 s and reads
// at most MaxResponseBytes of the answer. Registration checks the URL with
// Client.CheckURL, so that a URL the sender would refuse is a 422 at once.
// A failed attempt is retried on DefaultSchedule, the sender waiting by
// the queue message's visibility; an endpoint whose deliveries all failed
// for DisableAfter is disabled. An endpoint's signing key is stored only
// sealed by a Sealer, and shown to its user once, at registration.
package webhook
