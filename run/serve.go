package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/provebench/provebench/results"
)

// Serving is how another program (provebench ab) has one configuration's
// repetitions run on request by a long-lived `provebench run --serve`:
// each side of an A/B comparison keeps its own binary's process, with its
// prover warm (Runner.ReuseProcess), and asks it for one repetition at a
// time, interleaving the sides. Requests are JSON lines on the server's
// standard input (ServeRequest); each is answered, once the repetition has
// ended and the results document holds it, by a JSON line on its standard
// output (ServeReply). The end of the input ends the server, which then
// finishes its document as a run does.

// ServeRequest asks for one repetition.
type ServeRequest struct {
	// Index numbers the repetition from 1 (in ab, the pair it belongs to).
	Index  int  `json:"index"`
	Warmup bool `json:"warmup,omitempty"`
}

// ServeReply answers a request: the repetition's record as the results
// document holds it, or why no repetition could run.
type ServeReply struct {
	Index      int                 `json:"index"`
	Repetition *results.Repetition `json:"repetition,omitempty"`
	Error      string              `json:"error,omitempty"`
}

// ErrBadRequest marks a request a server cannot read: the caller's bug,
// bad input for the command.
var ErrBadRequest = errors.New("bad request")

// MaxServeIndex bounds a request's repetition index: a document holds far
// fewer repetitions, and history add refuses what no run could number.
const MaxServeIndex = 1 << 20

// servedIndices are the repetition indices a server has run, warm-ups and
// measured ones apart: the document it writes numbers each once, as
// history add requires.
type servedIndices map[[2]int]bool

// check refuses a request whose index is out of range or already served.
func (s servedIndices) check(req ServeRequest) error {
	if req.Index < 1 || req.Index > MaxServeIndex {
		return fmt.Errorf("%w: repetition index %d: numbered from 1 to %d", ErrBadRequest, req.Index, MaxServeIndex)
	}
	key := [2]int{req.Index, 0}
	if req.Warmup {
		key[1] = 1
	}
	if s[key] {
		return fmt.Errorf("%w: repetition index %d (warm-up %v) asked twice: a document numbers each repetition once", ErrBadRequest, req.Index, req.Warmup)
	}
	s[key] = true
	return nil
}

// Serve runs spec's repetitions on request until requests ends, answering
// each on replies, and returns the results document it kept up to date in
// OutDir. A configuration whose prepare fails (its proving key) is
// answered with the error at the first request, and Serve returns it.
// When ctx ends, the repetition in flight is recorded as cancelled and
// Serve returns ctx's error.
func (r *Runner) Serve(ctx context.Context, spec Spec, requests io.Reader, replies io.Writer) (*results.Run, error) {
	sw, err := r.begin([]Spec{spec})
	if err != nil {
		return nil, err
	}
	doc := sw.doc
	defer sw.release()
	if err := sw.startThrough(ctx, 0); err != nil {
		return r.stopped(ctx, doc, err)
	}
	dec, enc := json.NewDecoder(requests), json.NewEncoder(replies)
	served := servedIndices{}
	for {
		var req ServeRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			_ = r.finalSave(r.ResultsPath(), doc)
			return doc, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		if err := served.check(req); err != nil {
			_ = r.finalSave(r.ResultsPath(), doc)
			return doc, err
		}
		reply := ServeReply{Index: req.Index}
		if sw.drivers[0] == nil {
			// Its prepare failed, as the document records.
			reply.Error = doc.Scenarios[0].Repetitions[0].Error
		} else {
			sw.repetition(ctx, step{config: 0, index: req.Index - 1, warmup: req.Warmup})
			reps := doc.Scenarios[0].Repetitions
			reply.Repetition = &reps[len(reps)-1]
		}
		if err := enc.Encode(reply); err != nil {
			return r.stopped(ctx, doc, fmt.Errorf("reply: %w", err))
		}
		if ctx.Err() != nil {
			return r.interrupted(ctx, doc)
		}
		if reply.Error != "" {
			return doc, errors.New(reply.Error)
		}
	}
	doc.Complete = true
	doc.FinishedAt = time.Now().UTC()
	return doc, r.finalSave(r.ResultsPath(), doc)
}
