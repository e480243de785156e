package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/consensys/gnark/logger"
	"github.com/rs/zerolog"
)

// gnark's Prove solves the witness itself, then proves: the moment between
// the two is the end of synthesis in cuzk's terms. gnark logs it ("constraint
// system solver done", at debug level, synchronously, inside Prove), so a
// logger whose writer reads gnark's events gives that moment as it happens
// and gnark's own stage times (with ICICLE_STEP_PROFILE set, the ICICLE
// prover's per-MSM and NTT times too).

// gnarkStages maps gnark's log messages with a duration to provebench's
// stage names (gpu/ stages: ntt, msm_a, msm_b1, msm_b2, msm_l, msm_h).
// gnark's K is provebench's L, its Z is H.
var gnarkStages = map[string]string{
	msgSolverDone:          "solve",
	msgProverDone:          "prove",
	"computeH: Total":      "ntt",
	"MSM Ar1":              "msm_a",
	"MSM Bs1":              "msm_b1",
	"MSM Bs2 G2":           "msm_b2",
	"MSM Krs":              "msm_l",
	"MSM Krs2":             "msm_h",
	"computeH: vecOps":     "ntt_vecops",
	"computeH: INTT final": "ntt_final",
}

const (
	msgSolverDone = "constraint system solver done"
	msgProverDone = "prover done"
)

// gnarkEvents receives gnark's log events while a partition is proved.
type gnarkEvents struct {
	mu       sync.Mutex
	onSolved func(at time.Time)
	stages   map[string]time.Duration
	solvedAt time.Time
}

// install makes gnark log into e, at debug level.
func (e *gnarkEvents) install() {
	logger.Set(zerolog.New(e).Level(zerolog.DebugLevel))
}

// begin starts a partition: onSolved runs when gnark's solver is done.
func (e *gnarkEvents) begin(onSolved func(at time.Time)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onSolved, e.stages, e.solvedAt = onSolved, map[string]time.Duration{}, time.Time{}
}

// end returns the partition's gnark stage times and when its solve ended.
func (e *gnarkEvents) end() (map[string]time.Duration, time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, at := e.stages, e.solvedAt
	e.onSolved, e.stages = nil, nil
	return st, at
}

// Write implements io.Writer: zerolog writes one JSON event per call.
func (e *gnarkEvents) Write(p []byte) (int, error) {
	now := time.Now()
	var ev struct {
		Message string   `json:"message"`
		Took    *float64 `json:"took"` // zerolog's default: milliseconds
	}
	if json.Unmarshal(p, &ev) != nil {
		return len(p), nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if name, ok := gnarkStages[ev.Message]; ok && ev.Took != nil && e.stages != nil {
		e.stages[name] += time.Duration(*ev.Took * float64(time.Millisecond))
	}
	if ev.Message == msgSolverDone && e.onSolved != nil {
		e.solvedAt = now
		e.onSolved(now)
	}
	return len(p), nil
}

// timeline prints cuzk's TIMELINE lines (TIMELINE,<offset_ms>,<event>,
// <job>,<detail>), the job the proof and the detail the partition, as
// provebench engine --timeline does; one write per line.
type timeline struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (t *timeline) event(at time.Time, ev string, proof, partition int) {
	if t == nil || t.w == nil {
		return
	}
	ms := float64(at.Sub(t.start)) / float64(time.Millisecond)
	line := "TIMELINE," + strconv.FormatFloat(ms, 'f', 3, 64) + "," + ev + "," +
		strconv.Itoa(proof) + "," + strconv.Itoa(partition) + "\n"
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = io.WriteString(t.w, line)
}

// lines prints the peer's own lines (stage times, device memory), one
// write per line, safe from several goroutines.
type lines struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lines) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
