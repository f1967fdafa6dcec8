package lambdalocal_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"contentapi/shared/local/lambdalocal"
)

// bootstrapEnv makes the test binary a Lambda bootstrap (see TestMain):
// "echo" answers the event's "say", "fail" returns an error.
const bootstrapEnv = "RUNTIMEAPI_TEST_BOOTSTRAP"

func TestMain(m *testing.M) {
	switch os.Getenv(bootstrapEnv) {
	case "echo":
		lambda.Start(func(ev struct{ Say string }) (map[string]string, error) {
			return map[string]string{"said": ev.Say}, nil
		})
	case "fail":
		lambda.Start(func(json.RawMessage) (string, error) { return "", os.ErrPermission })
	}
	os.Exit(m.Run())
}

func TestColdStarts(t *testing.T) {
	runs, err := lambdalocal.ColdStarts(context.Background(), os.Args[0], []string{bootstrapEnv + "=echo"}, []byte(`{"say":"hello"}`), 3)
	if err != nil {
		t.Fatal(err)
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

// A handler's error is the run's error, not a response.
func TestColdStartsReportsErrors(t *testing.T) {
	_, err := lambdalocal.ColdStarts(context.Background(), os.Args[0], []string{bootstrapEnv + "=fail"}, []byte(`{}`), 1)
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("error %v, want the handler's", err)
	}
}
