package sam

import (
	"strings"
	"testing"
	"time"
)

// A rate is read as EventBridge reads it; what the local stack could not
// keep the same way is an error, not a schedule silently dropped.
func TestSchedules(t *testing.T) {
	testCases := []struct {
		name, event string
		want        time.Duration
		err         string
	}{
		{"a minute", "{Type: Schedule, Properties: {Schedule: rate(1 minute)}}", time.Minute, ""},
		{"hours", "{Type: Schedule, Properties: {Schedule: rate(2 hours)}}", 2 * time.Hour, ""},
		{"cron", "{Type: Schedule, Properties: {Schedule: 'cron(0 12 * * ? *)'}}", 0, "not a rate"},
		{"seconds", "{Type: Schedule, Properties: {Schedule: rate(30 seconds)}}", 0, "not a rate"},
		{"scheduler", "{Type: ScheduleV2, Properties: {ScheduleExpression: rate(1 minute)}}", 0, "ScheduleV2"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        E: " + tc.event + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Schedules()
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			case tc.err == "" && (err != nil || len(got) != 1 || got[0] != Schedule{Function: "F", Event: "E", Every: tc.want}):
				t.Fatalf("%+v, %v; want every %v", got, err, tc.want)
			}
		})
	}
}
