package codec

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func benchText(size int) string {
	words := strings.Fields(`our team built a fresh café menu for the summer season with crème brûlée
		croissants and local coffee every customer can enjoy while the city wakes up we share simple
		ideas that help small business owners grow their brand through honest stories clear goals and
		useful tools today tomorrow and every weekend the community discovers new places to explore`)
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(i*7+i/len(words))%len(words)])
		if i%17 == 16 {
			b.WriteString(".")
		}
	}
	return b.String()
}

var text = benchText(5000)

func BenchmarkExpAppendString(b *testing.B) {
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf = appendString(buf[:0], text)
	}
}

func BenchmarkExpEncodingJSON(b *testing.B) {
	var buf bytes.Buffer
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf.Reset()
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		e.Encode(text)
	}
}

func BenchmarkExpMemmove(b *testing.B) {
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf = append(buf[:0], text...)
	}
}

var ascii = strings.Repeat("our team built a fresh menu for the summer season with local coffee. ", 73)

func BenchmarkExpAppendASCII(b *testing.B) {
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(ascii)))
	for b.Loop() {
		buf = appendString(buf[:0], ascii)
	}
}
