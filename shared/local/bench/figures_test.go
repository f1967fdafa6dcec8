package bench

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{2: "2", 0.0291: "0.029", 1.4666: "1.467", 10000000: "10000000", math.NaN(): "NaN"} {
		if got := FormatFigure(v); got != want {
			t.Errorf("Format(%v) = %q, want %q", v, got, want)
		}
	}
}

// Each command rewrites its own section of BENCHMARKS.md and keeps the
// other's: make chaos replaces its section in place, make bench rewrites
// the report around it.
func TestSectionsSurviveEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := ChaosSection.WriteInto(path, []byte("soak 1\n")); err != nil {
		t.Fatal(err)
	}
	if err := ChaosSection.WriteKeeping(path, []byte("# Benchmarks\n\nrun 1\n")); err != nil {
		t.Fatal(err)
	}
	if err := ChaosSection.WriteInto(path, []byte("soak 2\n")); err != nil {
		t.Fatal(err)
	}
	if err := ChaosSection.WriteKeeping(path, []byte("# Benchmarks\n\nrun 2\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Benchmarks\n\nrun 2\n\n<!-- make chaos -->\nsoak 2\n<!-- /make chaos -->\n"
	if string(got) != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}

func TestBoardMissing(t *testing.T) {
	b := &Board{}
	b.Missing("no build", "mb_rss_local", "ms_cold_start")
	if f := b.Get("mb_rss_local"); f.Unit != "MB" || f.Missing != "no build" || f.Line() != "bench: mb_rss_local NaN MB" {
		t.Errorf("got %+v", f)
	}
	if f := b.Get("calls_get"); f.Missing == "" || len(b.All()) != 2 {
		t.Errorf("an unmeasured figure: %+v", f)
	}
}
