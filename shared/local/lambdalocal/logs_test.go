package lambdalocal

import (
	"encoding/json"
	"testing"
)

// Lambda keeps a line at or above the application level, reads the level
// whatever its case, and takes a line without one (or not JSON at all) as
// INFO.
func TestApplicationLogFilter(t *testing.T) {
	for _, tc := range []struct {
		level, line string
		kept        bool
	}{
		{"INFO", `{"level":"INFO","msg":"request"}`, true},
		{"INFO", `{"level":"DEBUG","msg":"request"}`, false},
		{"INFO", `{"level":"debug"}`, false},
		{"WARN", `{"level":"INFO"}`, false},
		{"WARN", `{"level":"ERROR"}`, true},
		{"WARN", `{"_aws":{},"msg":"metrics"}`, false},
		{"INFO", `{"_aws":{},"msg":"metrics"}`, true},
		{"INFO", `plain text`, true},
		{"ERROR", `plain text`, false},
		{"INFO", `{"level":"LOUD"}`, true},
		{"DEBUG", `{"level":"TRACE"}`, false},
	} {
		keep, err := ApplicationLogFilter(tc.level)
		if err != nil {
			t.Fatal(err)
		}
		if got := keep([]byte(tc.line)); got != tc.kept {
			t.Errorf("at %s, %s kept: %v, want %v", tc.level, tc.line, got, tc.kept)
		}
	}
	if _, err := ApplicationLogFilter("verbose"); err == nil {
		t.Error("an unknown level is taken")
	}
}

// Lambda's own lines for an invocation: none at WARN in the JSON format,
// its start and report (each a JSON object) at INFO and DEBUG, and the
// Text format's three whatever the level.
func TestPlatformLines(t *testing.T) {
	for _, tc := range []struct {
		format, level string
		want          int
	}{
		{LogFormatJSON, "WARN", 0}, {LogFormatJSON, "INFO", 2}, {LogFormatJSON, "DEBUG", 2}, {LogFormatText, "", 3},
	} {
		lines, err := PlatformLines(tc.format, tc.level)
		if err != nil || len(lines) != tc.want {
			t.Errorf("%s %s: %d lines (%v), want %d", tc.format, tc.level, len(lines), err, tc.want)
		}
		for _, l := range lines {
			if tc.format == LogFormatJSON && !json.Valid([]byte(l)) {
				t.Errorf("not JSON: %s", l)
			}
		}
	}
	for _, bad := range [][2]string{{"XML", "INFO"}, {LogFormatJSON, "ERROR"}} {
		if _, err := PlatformLines(bad[0], bad[1]); err == nil {
			t.Errorf("%v taken", bad)
		}
	}
}
