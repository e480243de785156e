package predict

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/provebench/provebench/predict/calibcache"
	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

// An empty cache has nothing to say, and says why; a configuration the
// calibration documents cannot describe is refused with the calibration's
// error, not passed off as no prediction.
func TestPreflightPeaks(t *testing.T) {
	env := results.Environment{Hostname: "h", CPUModel: "c", MemoryBytes: 1 << 30}
	peaks := CachedPeaks(context.Background(), calibcache.Cache{Dir: t.TempDir()}, env)
	_, _, err := peaks(&spec.Spec{Name: "x", Backend: "cpu"})
	var none *NoPrediction
	if !errors.As(err, &none) || !strings.Contains(none.Reason, "no cached run of the cpu backend") {
		t.Errorf("empty cache: %v, want a NoPrediction naming the backend", err)
	}
	if _, _, err := CalibratedPeaks(context.Background(), []string{t.TempDir()}, LoadOptions{}); err == nil || errors.As(err, &none) {
		t.Errorf("a folder without a document calibrated: %v", err)
	}

	// A configuration of the calibration itself: a peak, said to come
	// from it.
	const cal = "calibcache/testdata/calibration-cpu.json"
	peaks, _, err = CalibratedPeaks(context.Background(), []string{cal}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Read(cal)
	if err != nil || len(doc.Scenarios) == 0 {
		t.Fatalf("%s: %v", cal, err)
	}
	var s spec.Spec
	if err := json.Unmarshal(doc.Scenarios[0].Spec, &s); err != nil {
		t.Fatal(err)
	}
	peak, from, err := peaks(&s)
	if err != nil || peak <= 0 || !strings.Contains(from, cal) {
		t.Errorf("%s: peak %d from %q, %v", s.Name, peak, from, err)
	}
}
