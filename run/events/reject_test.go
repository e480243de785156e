package events

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 20 item 9: TIMELINE offsets that are not finite or not plausible
// are refused and counted, and leave the span alone.
func TestTimelineRejectsAbsurdOffsets(t *testing.T) {
	sink := NewSink()
	tl := NewTimeline(sink)
	for _, l := range []string{
		"TIMELINE,0,SYNTH_START,1,p0",
		"TIMELINE,NaN,SYNTH_END,1,p0",
		"TIMELINE,+Inf,SYNTH_END,1,p0",
		"TIMELINE,1e12,SYNTH_END,1,p0",
		"TIMELINE,-5,SYNTH_END,1,p0",
		"TIMELINE,7,SYNTH_END,1,p0",
	} {
		if !tl.Line(l) {
			t.Errorf("%q not taken for a TIMELINE line", l)
		}
	}
	if r := tl.Rejected(); r.N != 4 || !strings.Contains(r.First, `"NaN"`) {
		t.Errorf("rejected %+v, want 4, the first the NaN", r)
	}
	if span, _ := tl.Span(); span != 7*time.Millisecond {
		t.Errorf("span %s, want 7ms", span)
	}
	if v := sink.Finals()[CounterSynthesizing]; v != 0 {
		t.Errorf("synthesizing ended at %d", v)
	}
}

// Issue 20 item 9: a rule's add that would wrap the counter, or a value
// no int64 holds, is refused and counted; the counter keeps its value.
func TestRulesRefuseOverflow(t *testing.T) {
	sink := NewSink()
	rs := NewRules(sink, []Rule{{Pattern: regexp.MustCompile(`add (?P<value>\S+)`), Action: ActionAdd, Counter: "c"}})
	for _, l := range []string{"add 9e18", "add 9e18", "add 1e30", "add NaN", "add 5"} {
		rs.Line(l, time.Time{})
	}
	if got := sink.Finals()["c"]; got != 9e18+5 {
		t.Errorf("counter %d, want %d", got, int64(9e18+5))
	}
	if r := rs.Rejected(); r.N != 3 || !strings.Contains(r.First, "wrap") {
		t.Errorf("rejected %+v, want 3, the first a wrap", r)
	}
	if ok := sink.Add("c", math.MinInt64); !ok {
		t.Error("a subtraction that fits was refused")
	}
}
