package bench

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"contentapi/shared/local/stack"
)

// Figure is one measured value.
type Figure struct {
	Name  string
	Value float64
	Unit  string
	// Missing is set when the figure could not be measured, with why.
	Missing string
}

// Line is the figure as the commands print it: "bench: <name> <value> <unit>".
func (f Figure) Line() string {
	v := FormatFigure(f.Value)
	if f.Missing != "" {
		v = "NaN"
	}
	return fmt.Sprintf("bench: %s %s %s", f.Name, v, f.Unit)
}

// FormatFigure writes a value as the figures show it: whole numbers whole,
// others to three decimals.
func FormatFigure(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// Board collects the figures in the order they are printed; the
// measurements add to it from several goroutines.
type Board struct {
	mu      sync.Mutex
	figures []Figure
}

// Add records a figure and prints its line.
func (b *Board) Add(f Figure) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.figures = append(b.figures, f)
	fmt.Println(f.Line())
}

// Missing adds figures that could not be measured, for why; a name's
// first word is its unit.
func (b *Board) Missing(why string, names ...string) {
	for _, n := range names {
		unit, _, _ := strings.Cut(n, "_")
		if unit == "mb" {
			unit = "MB"
		}
		b.Add(Figure{Name: n, Unit: unit, Missing: why})
	}
}

// Get is the figure of that name, or a missing one.
func (b *Board) Get(name string) Figure {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.figures {
		if f.Name == name {
			return f
		}
	}
	return Figure{Name: name, Value: math.NaN(), Missing: "not measured"}
}

// All is every figure, in the order added.
func (b *Board) All() []Figure {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Figure(nil), b.figures...)
}

// Section is one command's part of a report, between HTML comments that
// name it, so that the other command, writing the report, keeps it.
type Section string

// ChaosSection is make chaos's section of BENCHMARKS.md.
const ChaosSection Section = "make chaos"

func (s Section) begin() string { return "<!-- " + string(s) + " -->" }
func (s Section) end() string   { return "<!-- /" + string(s) + " -->\n" }

// Of is the section in report, markers included; nil if it has none.
func (s Section) Of(report []byte) []byte {
	_, rest, found := bytes.Cut(report, []byte(s.begin()))
	if !found {
		return nil
	}
	body, _, found := bytes.Cut(rest, []byte(s.end()))
	if !found {
		return nil
	}
	return []byte(s.begin() + string(body) + s.end())
}

// Replace is report with the section replaced by section (markers
// included), or section added at the end; a nil section leaves report as
// it is.
func (s Section) Replace(report, section []byte) []byte {
	if section == nil {
		return report
	}
	before, rest, found := bytes.Cut(report, []byte(s.begin()))
	var after []byte
	if found {
		_, after, _ = bytes.Cut(rest, []byte(s.end()))
	}
	out := append(bytes.TrimRight(before, "\n"), "\n\n"...)
	out = append(out, section...)
	return append(out, bytes.TrimLeft(after, "\n")...)
}

// Wrap puts body between the section's markers.
func (s Section) Wrap(body []byte) []byte {
	return []byte(s.begin() + "\n" + string(body) + s.end())
}

// WriteInto replaces the section of the report at path with body; a
// report that does not exist yet is made.
func (s Section) WriteInto(path string, body []byte) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(path, s.Replace(old, s.Wrap(body)), 0o644)
}

// WriteKeeping writes report to path, keeping the section the file there
// holds.
func (s Section) WriteKeeping(path string, report []byte) error {
	old, _ := os.ReadFile(path)
	return os.WriteFile(path, s.Replace(report, s.Of(old)), 0o644)
}

// Machine describes this computer for a report.
func Machine() string {
	s := fmt.Sprintf("%d cores", runtime.NumCPU())
	if cpu := stack.ProcField("/proc/cpuinfo", "model name"); cpu != "" {
		s += " (" + cpu + ")"
	}
	var kb float64
	if _, err := fmt.Sscan(strings.TrimSuffix(stack.ProcField("/proc/meminfo", "MemTotal:"), " kB"), &kb); err == nil {
		s += fmt.Sprintf(", %.0f GiB memory", kb/(1<<20))
	}
	return s + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// LoadAverage is the machine's load over 1, 5 and 15 minutes.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "unknown"
}

// AddFileSize adds the size of the file at path as the figure name, in bytes.
func (b *Board) AddFileSize(name, path string) error {
	st, err := os.Stat(path)
	if err == nil {
		b.Add(Figure{Name: name, Value: float64(st.Size()), Unit: "bytes"})
	}
	return err
}
