package lambdalocal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// What Lambda does with a function's logs under its LoggingConfig, as its
// developer guide says ("Configuring advanced logging controls for Lambda
// functions", "Log-level filtering"): which of the function's own lines
// reach its log group, and which lines of its own Lambda adds to each
// invocation.

// Lambda's log formats (LoggingConfig LogFormat).
const (
	LogFormatJSON = "JSON"
	LogFormatText = "Text"
)

// applicationLevels are the levels Lambda knows of a function's lines, the
// least severe first.
var applicationLevels = []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}

// ApplicationLogFilter is Lambda's filter of a function's own lines in the
// JSON log format at LoggingConfig's ApplicationLogLevel level: a line is
// kept when its "level" is level or more severe. A line that is no JSON
// object, or whose level is missing or none of Lambda's, counts as INFO.
// Lambda passes a JSON line as it is (it does not wrap it again), so an
// embedded metric line kept is still one CloudWatch reads.
func ApplicationLogFilter(level string) (func(line []byte) bool, error) {
	least := slices.Index(applicationLevels, strings.ToUpper(level))
	if least < 0 {
		return nil, fmt.Errorf("lambdalocal: %q is not an application log level (%s)", level, strings.Join(applicationLevels, ", "))
	}
	return func(line []byte) bool { return lineLevel(line) >= least }, nil
}

// lineLevel is the index of line's level among applicationLevels.
func lineLevel(line []byte) int {
	var l struct {
		Level string `json:"level"`
	}
	info := slices.Index(applicationLevels, "INFO")
	if json.Unmarshal(line, &l) != nil {
		return info
	}
	if i := slices.Index(applicationLevels, strings.ToUpper(l.Level)); i >= 0 {
		return i
	}
	return info
}

// systemLevels are the levels of Lambda's own lines, the least severe
// first.
var systemLevels = []string{"DEBUG", "INFO", "WARN"}

// The lines Lambda writes around a warm invocation, as its developer guide
// shows them ("Using CloudWatch Logs with Lambda", the Telemetry API's
// platform.start and platform.report), with a request id's 36 characters
// and the values of this stack's functions (256 MB, a 5 ms invocation).
// In the JSON format they are INFO events, so a system level of WARN
// leaves them out; the Text format has no levels and writes them all.
const (
	exampleRequestID   = "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa"
	platformStartJSON  = `{"time":"2026-11-26T03:38:00.000Z","type":"platform.start","record":{"requestId":"` + exampleRequestID + `","version":"$LATEST"}}`
	platformReportJSON = `{"time":"2026-11-26T03:38:00.005Z","type":"platform.report","record":{"requestId":"` + exampleRequestID +
		`","metrics":{"durationMs":4.58,"billedDurationMs":5,"memorySizeMB":256,"maxMemoryUsedMB":32},"status":"success"}}`
	startText  = "START RequestId: " + exampleRequestID + " Version: $LATEST"
	endText    = "END RequestId: " + exampleRequestID
	reportText = "REPORT RequestId: " + exampleRequestID + "\tDuration: 4.58 ms\tBilled Duration: 5 ms\tMemory Size: 256 MB\tMax Memory Used: 32 MB\t"
)

// PlatformLines are the lines Lambda writes to a function's group for one
// warm invocation, in format at system level (JSON only; "" for Text):
// none at WARN; its start and report at INFO and DEBUG; and START, END and
// REPORT in the Text format. A cold start adds its init lines, once per
// execution environment, left out here.
func PlatformLines(format, systemLevel string) ([]string, error) {
	switch format {
	case LogFormatText:
		return []string{startText, endText, reportText}, nil
	case LogFormatJSON:
	default:
		return nil, fmt.Errorf("lambdalocal: %q is not a log format (%s or %s)", format, LogFormatJSON, LogFormatText)
	}
	i := slices.Index(systemLevels, strings.ToUpper(systemLevel))
	switch {
	case i < 0:
		return nil, fmt.Errorf("lambdalocal: %q is not a system log level (%s)", systemLevel, strings.Join(systemLevels, ", "))
	case i > slices.Index(systemLevels, "INFO"):
		return nil, nil
	}
	return []string{platformStartJSON, platformReportJSON}, nil
}
