package events

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
)

// Action is what a rule does when its pattern matches a line.
type Action string

// Rule actions.
const (
	ActionSet   Action = "set"   // set the counter to the value
	ActionAdd   Action = "add"   // add the value (default 1) to the counter
	ActionStart Action = "start" // start the stage for the job
	ActionEnd   Action = "end"   // end the stage for the job
)

// Actions lists the valid actions.
var Actions = []Action{ActionSet, ActionAdd, ActionStart, ActionEnd}

// Rule turns lines a regular expression matches into counter updates or
// stage boundaries. The value is the submatch named "value" (a number; 1
// when the pattern has no such group), times Scale (0 means 1): a line
// "[RSS] after-synth 12.5 GiB" and scale 1073741824 give bytes. The job of
// a stage is the submatch named "job" ("" when there is none).
type Rule struct {
	Pattern *regexp.Regexp
	Action  Action
	Counter string // for set and add
	Stage   string // for start and end
	Scale   float64
}

// Check reports a rule that cannot work.
func (r *Rule) Check() error {
	switch r.Action {
	case ActionSet, ActionAdd:
		if r.Counter == "" {
			return fmt.Errorf("action %s needs a counter", r.Action)
		}
		if r.Action == ActionSet && r.Pattern.SubexpIndex("value") < 0 {
			return fmt.Errorf("action set needs a (?P<value>...) group in the pattern")
		}
	case ActionStart, ActionEnd:
		if r.Stage == "" {
			return fmt.Errorf("action %s needs a stage", r.Action)
		}
	default:
		return fmt.Errorf("unknown action %q", r.Action)
	}
	return nil
}

// Rules applies a list of rules to lines, every matching rule in order.
type Rules struct {
	sink     *Sink
	rules    []Rule
	rejected Rejections
}

// Rejected counts the matches refused: a value that does not fit a
// counter, or an add that would make it wrap.
func (rs *Rules) Rejected() Rejections { return rs.rejected }

// NewRules returns a line reader applying rules into sink.
func NewRules(sink *Sink, rules []Rule) *Rules {
	for _, r := range rules {
		if r.Counter != "" {
			sink.Declare(r.Counter)
		}
	}
	return &Rules{sink: sink, rules: rules}
}

// Line applies the rules to one line received at the time at.
func (rs *Rules) Line(line string, at time.Time) {
	for i := range rs.rules {
		r := &rs.rules[i]
		m := r.Pattern.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		group := func(name string) string {
			if k := r.Pattern.SubexpIndex(name); k >= 0 {
				return m[k]
			}
			return ""
		}
		switch r.Action {
		case ActionSet, ActionAdd:
			v := 1.0
			if text := group("value"); text != "" {
				x, err := strconv.ParseFloat(text, 64)
				if err != nil {
					continue // not a number after all: the line is not the one meant
				}
				v = x
			}
			if r.Scale != 0 {
				v *= r.Scale
			}
			v = math.Round(v)
			// 2^63 itself does not fit: the bound is exclusive.
			if math.IsNaN(v) || v >= math.MaxInt64 || v < math.MinInt64 {
				rs.rejected.add("%s %s: %g does not fit a counter", r.Action, r.Counter, v)
				continue
			}
			n := int64(v)
			if r.Action == ActionSet {
				rs.sink.Set(r.Counter, n)
			} else if !rs.sink.Add(r.Counter, n) {
				rs.rejected.add("add %d to %s: the counter would wrap", n, r.Counter)
			}
		case ActionStart:
			rs.sink.StageStart(r.Stage, group("job"), at)
		case ActionEnd:
			rs.sink.StageEnd(r.Stage, group("job"), at)
		}
	}
}
