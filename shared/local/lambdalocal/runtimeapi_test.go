package lambdalocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/local/lambdalocal"
)

// bootstrapEnv makes the test binary a Lambda bootstrap (see TestMain):
// "echo" answers the event's "say", "fail" returns an error.
const bootstrapEnv = "RUNTIMEAPI_TEST_BOOTSTRAP"

// flakyMarkEnv names the file a "flaky" bootstrap leaves on its first run.
const flakyMarkEnv = "RUNTIMEAPI_TEST_FLAKY_MARK"

func anyResponse([]byte) error { return nil }

func TestMain(m *testing.M) {
	switch os.Getenv(bootstrapEnv) {
	case "echo":
		lambda.Start(func(ev struct{ Say string }) (map[string]string, error) {
			return map[string]string{"said": ev.Say}, nil
		})
	case "fail":
		lambda.Start(func(json.RawMessage) (string, error) { return "", os.ErrPermission })
	case "flaky":
		// Fails on its first run, which leaves a mark for the next.
		mark := os.Getenv(flakyMarkEnv)
		if _, err := os.Stat(mark); err != nil {
			_ = os.WriteFile(mark, nil, 0o644)
			lambda.Start(func(json.RawMessage) (string, error) { return "", os.ErrDeadlineExceeded })
		}
		lambda.Start(func(json.RawMessage) (string, error) { return "ok", nil })
	}
	os.Exit(m.Run())
}

func TestColdStarts(t *testing.T) {
	runs, failed, err := lambdalocal.ColdStarts(context.Background(), os.Args[0], []string{bootstrapEnv + "=echo"}, []byte(`{"say":"hello"}`), 3, anyResponse)
	if err != nil || len(failed) != 0 {
		t.Fatal(err, failed)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	for i, r := range runs {
		if string(r.Response) != `{"said":"hello"}` {
			t.Errorf("run %d answered %s", i, r.Response)
		}
		if r.Init <= 0 || r.Total < r.Init {
			t.Errorf("run %d: init %v, total %v", i, r.Init, r.Total)
		}
	}
}

// A handler's error is the run's error, not a response: a run that fails
// every time is an error once it has failed once more than the runs asked.
func TestColdStartsReportsErrors(t *testing.T) {
	_, failed, err := lambdalocal.ColdStarts(context.Background(), os.Args[0], []string{bootstrapEnv + "=fail"}, []byte(`{}`), 1, anyResponse)
	if err == nil || !strings.Contains(err.Error(), "permission denied") || len(failed) != 2 {
		t.Fatalf("error %v after %d failures, want the handler's after 2", err, len(failed))
	}
}

// A run that fails, as one that stalls on a busy machine does, is run
// again: the figure stays the median of the runs asked, the failure said.
func TestColdStartsRunAFailedRunAgain(t *testing.T) {
	env := []string{bootstrapEnv + "=flaky", flakyMarkEnv + "=" + filepath.Join(t.TempDir(), "mark")}
	runs, failed, err := lambdalocal.ColdStarts(context.Background(), os.Args[0], env, []byte(`{}`), 2, anyResponse)
	if err != nil || len(runs) != 2 || len(failed) != 1 || !strings.Contains(failed[0], "DeadlineExceeded") {
		t.Fatalf("%d runs, failed %q, error %v; want 2 runs after the first failed", len(runs), failed, err)
	}
}

// A response the caller refuses is a failed run too.
func TestColdStartsRunAgainWhatTheCallerRefuses(t *testing.T) {
	refused := 0
	runs, failed, err := lambdalocal.ColdStarts(context.Background(), os.Args[0], []string{bootstrapEnv + "=echo"}, []byte(`{"say":"hi"}`), 2,
		func([]byte) error {
			if refused++; refused == 1 {
				return errors.New("not what was asked")
			}
			return nil
		})
	if err != nil || len(runs) != 2 || len(failed) != 1 {
		t.Fatalf("%d runs, failed %q, error %v; want 2 runs and 1 failure", len(runs), failed, err)
	}
}
