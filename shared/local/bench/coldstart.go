package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/local/lambdalocal"
)

// DocumentGet is the event of a GET of document id with key:
// events/documents-get.json of the repository at root, the id and the key
// put in.
func DocumentGet(root string, id int64, key string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, "events", "documents-get.json"))
	if err != nil {
		return nil, err
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	ev.Headers["authorization"] = "Bearer " + key
	ev.PathParameters["id"] = strconv.FormatInt(id, 10)
	ev.RawPath = "/api/v1/documents/" + ev.PathParameters["id"]
	ev.RequestContext.HTTP.Path = ev.RawPath
	ev.RequestContext.TimeEpoch = time.Now().UnixMilli()
	return json.Marshal(ev)
}

// Answered accepts an API function's answer of status 200 whose body
// holds want.
func Answered(want string) func(response []byte) error {
	return func(response []byte) error {
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(response, &resp); err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Body, want) {
			return fmt.Errorf("unexpected response: %.500s", response)
		}
		return nil
	}
}

// ColdStartTimes are the times of a bootstrap's cold starts, and of the
// floor's (the empty handler, shared/local/bench/floor) given the same
// event and environment right after.
type ColdStartTimes struct {
	Runs, Floor []lambdalocal.ColdStart
	// Failed are the runs made again, and why; FloorErr why the floor has
	// no times, if it has none.
	Failed, FloorFailed []string
	FloorErr            error
}

// ColdStartsWithFloor execs bootstrap runs times with event, each answer
// taken by accept (lambdalocal.ColdStarts), then floor as many times,
// unless floor is "" or the bootstrap's failed. The error is the
// bootstrap's.
func ColdStartsWithFloor(ctx context.Context, bootstrap, floor string, env []string, event []byte, runs int, accept func([]byte) error) (ColdStartTimes, error) {
	var t ColdStartTimes
	var err error
	t.Runs, t.Failed, err = lambdalocal.ColdStarts(ctx, bootstrap, env, event, runs, accept)
	if err != nil || floor == "" {
		return t, err
	}
	t.Floor, t.FloorFailed, t.FloorErr = lambdalocal.ColdStarts(ctx, floor, env, event, runs, Answered(""))
	return t, nil
}
