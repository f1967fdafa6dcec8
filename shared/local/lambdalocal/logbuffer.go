package lambdalocal

import (
	"bytes"
	"sync"
)

// LogBuffer keeps what the functions, or the local stack around them,
// write to their log output, as CloudWatch Logs would keep it, for a test
// to read while they go on writing from their goroutines.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps p after what was written before it.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is all that was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
