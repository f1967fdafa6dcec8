package hookreceiver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Hanging is a webhook receiver on 127.0.0.1 that takes each request and
// never answers it: an attempt ends only when its sender gives up (the
// attempt's timeout) or the receiver is let go (Release), which closes the
// attempts unanswered, then and after. OnAttempt and OnEnd, when given,
// are told of each attempt as it starts and as it ends.
type Hanging struct {
	*httptest.Server
	release chan struct{}
	once    sync.Once
}

// NewHanging starts a receiver that never answers.
func NewHanging(onAttempt, onEnd func()) *Hanging {
	h := &Hanging{release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body read, the server hears of the sender hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		if onAttempt != nil {
			onAttempt()
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		if onEnd != nil {
			onEnd()
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close() // no answer at all
		}
	}))
	return h
}

// Release ends every attempt waiting and every later one at once,
// unanswered.
func (h *Hanging) Release() { h.once.Do(func() { close(h.release) }) }

// Close releases the attempts, then stops the receiver.
func (h *Hanging) Close() {
	h.Release()
	h.Server.Close()
}
