package events

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTimelineCountersAndStages(t *testing.T) {
	sink := NewSink()
	tl := NewTimeline(sink)
	// Two partitions of job 7: both synthesize at once, the second waits
	// in the queue while the first is on the GPU.
	lines := []string{
		"TIMELINE,0,SYNTH_START,7,0",
		"TIMELINE,1,SYNTH_START,7,1",
		"[RSS] after-load 1.5 GiB",
		"TIMELINE,100,SYNTH_END,7,0",
		"TIMELINE,100.5,GPU_QUEUE,7,0",
		"TIMELINE,110,SYNTH_END,7,1",
		"TIMELINE,110,GPU_QUEUE,7,1 extra",
		"TIMELINE,120,GPU_PICKUP,7,0",
		"TIMELINE,121,GPU_START,7,0 gpu=0",
		"TIMELINE,221,GPU_END,7,0",
		"TIMELINE,230,GPU_START,7,1", // no GPU_PICKUP: read as if it had come
		"TIMELINE,330,GPU_END,7,1",
	}
	for _, l := range lines {
		tl.Line(l)
	}
	peaks, finals := sink.Peaks(), sink.Finals()
	want := map[string]int64{CounterSynthesizing: 2, CounterQueueDepth: 2, CounterInChannel: 2, CounterOnGPU: 1, CounterPartitionsDone: 2}
	for name, p := range want {
		if peaks[name] != p {
			t.Errorf("peak %s = %d, want %d", name, peaks[name], p)
		}
		if name != CounterPartitionsDone && finals[name] != 0 {
			t.Errorf("final %s = %d, want 0", name, finals[name])
		}
	}
	st := sink.Stages()
	if got := st[StageSynthesis]; len(got) != 2 || got[0] != 100*time.Millisecond || got[1] != 109*time.Millisecond {
		t.Errorf("synthesis = %v", got)
	}
	if got := st[StageQueueWait]; len(got) != 2 || got[0] != 20*time.Millisecond || got[1] != 120*time.Millisecond {
		t.Errorf("queue_wait = %v", got)
	}
	if got := st[StageGPU]; len(got) != 2 || got[0] != 100*time.Millisecond {
		t.Errorf("gpu = %v", got)
	}
	if tl.Line("TIMELINE,x,SYNTH_START,1,1") || tl.Line("no timeline here") {
		t.Error("malformed lines read as TIMELINE lines")
	}
}

func TestRules(t *testing.T) {
	sink := NewSink()
	rs := NewRules(sink, []Rule{
		{Pattern: regexp.MustCompile(`\[RSS\] \S+ (?P<value>[0-9.]+) GiB`), Action: ActionSet, Counter: "rss_label_bytes", Scale: 1 << 30},
		{Pattern: regexp.MustCompile(`proof done`), Action: ActionAdd, Counter: "proofs_done"},
		{Pattern: regexp.MustCompile(`begin (?P<job>\d+)`), Action: ActionStart, Stage: "work"},
		{Pattern: regexp.MustCompile(`finish (?P<job>\d+)`), Action: ActionEnd, Stage: "work"},
	})
	t0 := time.Unix(100, 0)
	rs.Line("[RSS] after-synth 2.5 GiB", t0)
	rs.Line("[RSS] after-gpu 1 GiB", t0)
	rs.Line("proof done", t0)
	rs.Line("proof done", t0)
	rs.Line("begin 3", t0)
	rs.Line("finish 3", t0.Add(time.Second))
	rs.Line("finish 4", t0.Add(time.Second)) // no start: ignored
	peaks, finals := sink.Peaks(), sink.Finals()
	if peaks["rss_label_bytes"] != 5<<29 || finals["rss_label_bytes"] != 1<<30 {
		t.Errorf("rss_label_bytes peak %d final %d", peaks["rss_label_bytes"], finals["rss_label_bytes"])
	}
	if finals["proofs_done"] != 2 {
		t.Errorf("proofs_done = %d", finals["proofs_done"])
	}
	if w := sink.Stages()["work"]; len(w) != 1 || w[0] != time.Second {
		t.Errorf("work = %v", w)
	}
	bad := Rule{Pattern: regexp.MustCompile(`x`), Action: ActionSet, Counter: "c"}
	if bad.Check() == nil {
		t.Error("a set rule without a value group passed Check")
	}
}

func TestJSONStatusAndPrometheus(t *testing.T) {
	used := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		used += 100
		switch r.URL.Path {
		case "/status":
			fmt.Fprintf(w, `{"memory":{"used_bytes":%d,"budget/bytes":4096},"partitions":[{"state":"gpu"},{"busy":true}]}`, used)
		case "/metrics":
			fmt.Fprintf(w, "# TYPE cuzk_buffers gauge\ncuzk_buffers{kind=\"abc\"} 3\ncuzk_buffers{kind=\"wires\"} 4\n# TYPE cuzk_done_total counter\ncuzk_done_total %d\n", used)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server at %s, want 127.0.0.1", srv.URL)
	}
	sink := NewSink()
	js := &JSONStatus{URL: srv.URL + "/status", Sink: sink, Pointers: map[string]string{
		"/memory/used_bytes": "used", "/memory/budget~1bytes": "budget", "/partitions/1/busy": "busy", "/missing": "missing", "/partitions": "partitions",
	}}
	prom := &Prometheus{URL: srv.URL + "/metrics", Sink: sink, Metrics: map[string]string{"cuzk_buffers": "buffers", "cuzk_done_total": "done"}}
	ctx := context.Background()
	for range 2 {
		if err := js.Poll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := prom.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	f := sink.Finals()
	if f["used"] != 200 || f["budget"] != 4096 || f["busy"] != 1 || f["buffers"] != 7 || f["done"] != 300 || f["partitions"] != 2 {
		t.Errorf("counters %v", f)
	}
	if _, ok := f["missing"]; ok {
		t.Error("a pointer to nothing made a counter")
	}
	bad := &JSONStatus{URL: srv.URL + "/nothing", Sink: sink}
	if bad.Poll(ctx) == nil {
		t.Error("a 404 polled without error")
	}
}
