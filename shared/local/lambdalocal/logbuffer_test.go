package lambdalocal

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Lines written from many goroutines at once are all kept, none torn, and
// can be read while the writers go on (go test -race holds the reads).
func TestLogBufferKeepsConcurrentLines(t *testing.T) {
	var l LogBuffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				fmt.Fprintf(&l, "writer %d line %d\n", g, i)
				_ = l.String()
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(l.String(), "\n"), "\n")
	seen := map[string]bool{}
	for _, line := range lines {
		seen[line] = true
	}
	if len(lines) != 8*50 || len(seen) != 8*50 || !seen["writer 7 line 49"] {
		t.Fatalf("%d lines, %d different, want %d", len(lines), len(seen), 8*50)
	}
}
