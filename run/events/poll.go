package events

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxBody bounds what one poll reads from an endpoint.
const maxBody = 16 << 20

// Poller reads an endpoint into counters. Poll is called at every interval
// while the repetition runs; an endpoint that is not up yet (a daemon still
// starting) or briefly fails only loses that poll.
type Poller interface {
	Poll(ctx context.Context) error
}

// JSONStatus polls a JSON document (a daemon's /status page) and sets one
// counter per JSON pointer (RFC 6901): a number as it is, a boolean as 0 or
// 1, an array or an object as its number of elements (partitions listed
// in a state, buffers in flight).
type JSONStatus struct {
	URL    string
	Client *http.Client
	// Pointers maps a JSON pointer such as /memory/used_bytes to a counter.
	Pointers map[string]string
	Sink     *Sink
}

// Poll reads the document once.
func (j *JSONStatus) Poll(ctx context.Context) error {
	body, err := get(ctx, j.Client, j.URL)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("%s: %w", j.URL, err)
	}
	for ptr, name := range j.Pointers {
		v, err := Pointer(doc, ptr)
		if err != nil {
			continue // a field that comes and goes (an idle daemon) is not an error
		}
		if n, ok := number(v); ok {
			j.Sink.Set(name, n)
		}
	}
	return nil
}

// Pointer resolves an RFC 6901 JSON pointer in a decoded document.
func Pointer(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", ptr)
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("JSON pointer %q: no member %q", ptr, tok)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("JSON pointer %q: no element %q", ptr, tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("JSON pointer %q: %q is inside a scalar", ptr, tok)
		}
	}
	return cur, nil
}

func number(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(math.Round(x)), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case []any:
		return int64(len(x)), true
	case map[string]any:
		return int64(len(x)), true
	}
	return 0, false
}

// Prometheus polls a Prometheus text endpoint (parsed by prometheus/common's
// expfmt) and sets one counter per metric family: the sum of the family's
// samples (over every label set) of a counter, gauge or untyped metric.
type Prometheus struct {
	URL    string
	Client *http.Client
	// Metrics maps a metric family name to a counter.
	Metrics map[string]string
	Sink    *Sink
}

// Poll reads the page once.
func (p *Prometheus) Poll(ctx context.Context) error {
	body, err := get(ctx, p.Client, p.URL)
	if err != nil {
		return err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("%s: %w", p.URL, err)
	}
	for metric, name := range p.Metrics {
		mf := families[metric]
		if mf == nil {
			continue
		}
		sum, ok := 0.0, false
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetGauge() != nil:
				sum, ok = sum+m.GetGauge().GetValue(), true
			case m.GetCounter() != nil:
				sum, ok = sum+m.GetCounter().GetValue(), true
			case m.GetUntyped() != nil:
				sum, ok = sum+m.GetUntyped().GetValue(), true
			}
		}
		if ok {
			p.Sink.Set(name, int64(math.Round(sum)))
		}
	}
	return nil
}

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxBody))
}

// Every polls p every interval until ctx is done.
func Every(ctx context.Context, p Poller, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, max(interval, time.Second))
		_ = p.Poll(pctx) // a failed poll loses that sample only
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
