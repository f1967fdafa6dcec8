package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// BenchResult is one run of one benchmark: its ns/op, its allocs/op where
// -benchmem asked for them, and every figure it printed, by unit (custom
// metrics such as "x" included).
type BenchResult struct {
	NS, Allocs float64
	Metrics    map[string]float64
}

// BenchRound is one run of every benchmark asked for, back to back in one
// process, by benchmark name.
type BenchRound map[string]BenchResult

// resultLine is a benchmark's result: its name (a sub-benchmark's with
// its path) less the GOMAXPROCS suffix, its iterations, then value and
// unit pairs.
var resultLine = regexp.MustCompile(`(?m)^(Benchmark[\w/]+?)(?:-\d+)?\s+\d+((?:\s+[-+.\deE]+ \S+)+)\s*$`)

// BenchRounds runs count rounds of the benchmarks named (without their
// "Benchmark"), each for benchtime, with env added to the environment. It
// returns the rounds and the binary's whole output.
func BenchRounds(ctx context.Context, testBinary string, env, names []string, count int, benchtime string) ([]BenchRound, string, error) {
	var rounds []BenchRound
	var all strings.Builder
	for range count {
		out, err := RunBenchmarks(ctx, testBinary, env, "-test.bench", "^Benchmark("+strings.Join(names, "|")+")$",
			"-test.benchmem", "-test.count", "1", "-test.benchtime", benchtime)
		all.WriteString(out)
		if err != nil {
			return nil, all.String(), err
		}
		round := BenchRound{}
		for _, m := range resultLine.FindAllStringSubmatch(out, -1) {
			round[m[1]] = parseResult(m[2])
		}
		rounds = append(rounds, round)
	}
	return rounds, all.String(), nil
}

// parseResult reads a result line's value and unit pairs.
func parseResult(pairs string) BenchResult {
	r := BenchResult{Metrics: map[string]float64{}}
	f := strings.Fields(pairs)
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			r.Metrics[f[i+1]] = v
		}
	}
	r.NS, r.Allocs = r.Metrics["ns/op"], r.Metrics["allocs/op"]
	return r
}

// RunBenchmarks runs benchmarks of the test binary (args say which and how)
// with env added to the environment, and returns their output.
func RunBenchmarks(ctx context.Context, testBinary string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, testBinary, append([]string{"-test.run", "^$"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := string(out)
		if len(tail) > 3000 {
			tail = "..." + tail[len(tail)-3000:]
		}
		err = fmt.Errorf("%s %s: %v\n%s", filepath.Base(testBinary), strings.Join(args, " "), err, tail)
	}
	return string(out), err
}

// BenchLines keeps the lines of go test -bench output a reader needs.
func BenchLines(output string) []string {
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
		for _, prefix := range []string{"Benchmark", "cpu:", "goos", "goarch"} {
			if strings.HasPrefix(line, prefix) {
				keep = append(keep, line)
			}
		}
	}
	return keep
}

// ProfilePart is one part of a CPU profile: the samples with a function
// matching Match on their stack.
type ProfilePart struct{ What, Match string }

// ProfileShare is a part's CPU time.
type ProfileShare struct {
	What             string
	Seconds, Percent float64
}

// Profile is where a benchmark's CPU time goes: a share for each part, and
// last the rest.
type Profile struct {
	Bench   string
	Shares  []ProfileShare
	Seconds float64
}

// CPUProfile profiles the benchmark bench for 3 s, in dir, and splits its
// CPU time into parts: a sample counts in the first part it matches, else
// in the last share, named rest.
func CPUProfile(ctx context.Context, testBinary, bench, dir string, env []string, parts []ProfilePart, rest string) (Profile, error) {
	h := Profile{Bench: bench}
	path := filepath.Join(dir, bench+".prof")
	if _, err := RunBenchmarks(ctx, testBinary, env, "-test.bench", "^"+bench+"$", "-test.benchtime", "3s", "-test.cpuprofile", path); err != nil {
		return h, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	prof, err := profile.ParseData(data)
	if err != nil {
		return h, fmt.Errorf("profile %s: %w", bench, err)
	}
	res := make([]*regexp.Regexp, len(parts))
	h.Shares = make([]ProfileShare, len(parts)+1)
	for i, p := range parts {
		res[i], h.Shares[i].What = regexp.MustCompile(p.Match), p.What
	}
	h.Shares[len(parts)].What = rest
	cpu := slices.IndexFunc(prof.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	for _, sample := range prof.Sample {
		part := len(parts)
	match:
		for i, re := range res {
			for _, loc := range sample.Location {
				for _, line := range loc.Line {
					if re.MatchString(line.Function.Name) {
						part = i
						break match
					}
				}
			}
		}
		seconds := time.Duration(sample.Value[cpu]).Seconds()
		h.Shares[part].Seconds += seconds
		h.Seconds += seconds
	}
	if h.Seconds == 0 {
		return h, fmt.Errorf("profile %s: no samples", bench)
	}
	for i := range h.Shares {
		h.Shares[i].Percent = 100 * h.Shares[i].Seconds / h.Seconds
	}
	return h, nil
}

// Percent is the share of the part named what.
func (p Profile) Percent(what string) float64 {
	for _, s := range p.Shares {
		if s.What == what {
			return s.Percent
		}
	}
	return 0
}

// Largest are the parts of at least min percent, largest first, leaving
// out the rest and the parts named in except.
func (p Profile) Largest(min float64, except ...string) []ProfileShare {
	var out []ProfileShare
	for i, s := range p.Shares {
		if i < len(p.Shares)-1 && s.Percent >= min && !slices.Contains(except, s.What) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b ProfileShare) int { return cmp.Compare(b.Percent, a.Percent) })
	return out
}
