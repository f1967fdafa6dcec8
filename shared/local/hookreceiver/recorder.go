// Package hookreceiver holds webhook receivers on 127.0.0.1 for the local
// stack's tests and the bench: one that answers 204 and tells of each
// delivery's record (Recorder), and one that never answers (Hanging), for
// the scene of one account's dead endpoint beside another's.
package hookreceiver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Recorder is a receiver that answers 204 and tells of each delivery by
// its event's data.id (a record's id).
type Recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]chan struct{}
}

// NewRecorder starts a receiver that answers 204.
func NewRecorder() *Recorder {
	r := &Recorder{got: map[string]chan struct{}{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct{ Data struct{ ID json.Number } }
		body, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(body, &ev)
		w.WriteHeader(http.StatusNoContent)
		r.arrived(ev.Data.ID.String())
	}))
	return r
}

// Wait is closed when the delivery of record id arrives.
func (r *Recorder) Wait(id string) <-chan struct{} { return r.arrival(id) }

func (r *Recorder) arrival(id string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got[id] == nil {
		r.got[id] = make(chan struct{})
	}
	return r.got[id]
}

// arrived tells of a delivery; a second one of the same record (at least
// once) tells nothing more.
func (r *Recorder) arrived(id string) {
	ch := r.arrival(id)
	select {
	case <-ch:
	default:
		close(ch)
	}
}
