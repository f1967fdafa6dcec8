package sam

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Schedule is a Schedule event of a function: an EventBridge rule that
// invokes it at a fixed rate.
type Schedule struct {
	// Function is the logical ID of the function, Event the event's name
	// in its Events section.
	Function, Event string
	// Every is the rate.
	Every time.Duration
}

var rateExpr = regexp.MustCompile(`^rate\(([1-9][0-9]*) (minute|minutes|hour|hours|day|days)\)$`)

var rateUnits = map[string]time.Duration{
	"minute": time.Minute, "minutes": time.Minute,
	"hour": time.Hour, "hours": time.Hour,
	"day": 24 * time.Hour, "days": 24 * time.Hour,
}

// Schedules returns every Schedule event of every function, sorted by
// function, then event name. Only rate expressions are read: a cron
// expression, or a ScheduleV2 event, is an error rather than a schedule
// the local stack would silently not keep.
func (t *Template) Schedules() ([]Schedule, error) {
	var out []Schedule
	for _, f := range t.Functions() {
		events, _ := f.Properties["Events"].(map[string]any)
		for _, name := range keys(events) {
			ev, _ := events[name].(map[string]any)
			switch ev["Type"] {
			case "Schedule":
			case "ScheduleV2":
				return nil, fmt.Errorf("sam: %s.%s: ScheduleV2 events are not read here; use Schedule", f.LogicalID, name)
			default:
				continue
			}
			expr, _ := lookup(ev, "Properties", "Schedule").(string)
			m := rateExpr.FindStringSubmatch(expr)
			if m == nil {
				return nil, fmt.Errorf("sam: %s.%s: schedule %q is not a rate(n unit) expression", f.LogicalID, name, expr)
			}
			n, _ := strconv.Atoi(m[1])
			out = append(out, Schedule{Function: f.LogicalID, Event: name, Every: time.Duration(n) * rateUnits[m[2]]})
		}
	}
	return out, nil
}
