package bench

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"contentapi/shared/local/sam"
)

// Under the project's template, a request's lines are what Lambda keeps of
// the function's (not the Debug ones; the Info and the metric lines),
// none of Lambda's own at the default system level, and the HTTP API's
// access line in its format, priced as its group's class.
func TestLogMeterMeasuresARequest(t *testing.T) {
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewLogMeter(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tracing != "PassThrough" {
		t.Errorf("tracing %q, want the template's default", m.Tracing)
	}
	_, _ = m.Write([]byte(`{"level":"INFO","msg":"before the mark"}` + "\n"))
	m.Mark()
	kept := []string{`{"level":"INFO","msg":"request","status":404}`, `{"_aws":{},"QuotaRefusals":1,"level":"INFO","msg":"metrics"}`}
	for _, l := range append(kept, `{"level":"DEBUG","msg":"request","status":200}`) {
		_, _ = m.Write([]byte(l + "\n"))
	}
	a := Answer{Status: 404, Header: http.Header{"X-Request-Id": {"AbCdEfGhIjKlMnO="}}, Wire: 120}
	writes, err := m.Request("get", "GET", "/api/v1/documents/7?search=x", a, 12*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(writes) != 2 {
		t.Fatalf("%+v", writes)
	}
	fn, access := writes[0], writes[1]
	if fn.Group != "DocumentsLogGroup" || fn.Class != sam.LogClassStandard || fn.Bytes != float64(len(strings.Join(kept, ""))) {
		t.Errorf("the function's write %+v, want %d bytes to DocumentsLogGroup", fn, len(strings.Join(kept, "")))
	}
	settings, err := tmpl.HTTPAPIAccessLog()
	if err != nil {
		t.Fatal(err)
	}
	if access.Group != settings.Group.LogicalID || access.Class != sam.LogClassInfrequentAccess || access.Bytes < float64(len(settings.Format))-200 {
		t.Errorf("the access line's write %+v", access)
	}
	w, err := m.Invocation("TallyFunction")
	if err != nil || w.Bytes != 0 || w.Group != "TallyLogGroup" {
		t.Errorf("an invocation that wrote nothing: %+v, %v", w, err)
	}
	m.Add("get", w)
	if got := m.Measured("get"); len(got) != 3 || got[2] != w {
		t.Errorf("measured %+v", got)
	}
	if _, err := m.Request("other", "GET", "/nowhere/at/all", a, time.Millisecond); err != nil {
		t.Errorf("the $default route takes any path: %v", err)
	}
}
