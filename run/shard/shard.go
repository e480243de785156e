// Package shard splits a sweep of configurations into disjoint shards that
// separate hosts run on their own (CI matrices, Kubernetes Indexed Jobs),
// and merges the shards' results documents back into one.
//
// The split is round-robin over the sweep's expanded order: the
// configuration at position p (from 0) belongs to shard p mod n + 1. It
// depends only on the scenario files and run's flags, never on the host,
// so every host computes the same split; and round-robin spreads a matrix
// whose first axis is the size (the slowest varying) over all shards
// instead of giving one shard every large point.
package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/spec"
)

// Spec names one shard: Index of Count, Index counted from 1 (k/n, as
// Playwright's and Jest's --shard write it).
type Spec struct {
	Index, Count int
}

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Environment variables read by --shard auto.
const (
	// IndexEnv is set by Kubernetes on every pod of an Indexed Job: the
	// pod's completion index, counted from 0.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// CountEnv gives the number of shards when no flag does (for an
	// Indexed Job, its completions).
	CountEnv = "PROVEBENCH_SHARD_COUNT"
)

// MaxCount bounds the number of shards, so a typo cannot ask for a
// billion pods' worth of empty shards.
const MaxCount = 10000

// Parse reads "k/n" with 1 <= k <= n.
func Parse(text string) (Spec, error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok {
		return Spec{}, fmt.Errorf("%q: want k/n (shard k of n, k from 1), or auto", text)
	}
	k, err := strconv.Atoi(strings.TrimSpace(ks))
	if err != nil {
		return Spec{}, fmt.Errorf("%q: shard index %q is not a whole number", text, ks)
	}
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil {
		return Spec{}, fmt.Errorf("%q: shard count %q is not a whole number", text, ns)
	}
	return check(Spec{Index: k, Count: n}, text)
}

func check(s Spec, text string) (Spec, error) {
	switch {
	case s.Count < 1 || s.Count > MaxCount:
		return Spec{}, fmt.Errorf("%q: shard count %d is not between 1 and %d", text, s.Count, MaxCount)
	case s.Index == 0:
		return Spec{}, fmt.Errorf("%q: shards are numbered from 1 (1/%d to %d/%d)", text, s.Count, s.Count, s.Count)
	case s.Index < 1 || s.Index > s.Count:
		return Spec{}, fmt.Errorf("%q: shard index %d is not between 1 and %d", text, s.Index, s.Count)
	}
	return s, nil
}

// Resolve turns the --shard flag's value into a Spec. "auto" reads the
// index from $JOB_COMPLETION_INDEX (from 0, as Kubernetes sets it) and the
// count from count when positive, else from $PROVEBENCH_SHARD_COUNT;
// anything else is k/n. lookup is os.LookupEnv outside tests.
func Resolve(flag string, count int, lookup func(string) (string, bool)) (Spec, error) {
	if flag != "auto" {
		if count > 0 {
			return Spec{}, errors.New("--shard-count goes with --shard auto; with k/n the count is n")
		}
		return Parse(flag)
	}
	idx, ok := lookup(IndexEnv)
	if !ok || strings.TrimSpace(idx) == "" {
		return Spec{}, fmt.Errorf("auto: $%s is not set (it is set on the pods of a Kubernetes Indexed Job; elsewhere give k/n)", IndexEnv)
	}
	i, err := strconv.Atoi(strings.TrimSpace(idx))
	if err != nil || i < 0 {
		return Spec{}, fmt.Errorf("auto: $%s=%q is not a completion index (0, 1, ...)", IndexEnv, idx)
	}
	text := fmt.Sprintf("$%s=%s", IndexEnv, idx)
	if count <= 0 {
		c, ok := lookup(CountEnv)
		if !ok || strings.TrimSpace(c) == "" {
			return Spec{}, fmt.Errorf("auto: the number of shards is not given: set --shard-count or $%s (an Indexed Job's completions)", CountEnv)
		}
		if count, err = strconv.Atoi(strings.TrimSpace(c)); err != nil {
			return Spec{}, fmt.Errorf("auto: $%s=%q is not a whole number", CountEnv, c)
		}
		text += fmt.Sprintf(", $%s=%s", CountEnv, c)
	}
	if count >= 1 && i >= count {
		return Spec{}, fmt.Errorf("auto: %s: the completion index must be below the shard count %d", text, count)
	}
	s, err := check(Spec{Index: i + 1, Count: count}, text)
	if err != nil {
		return Spec{}, fmt.Errorf("auto: %w", err)
	}
	return s, nil
}

// Owns reports whether the configuration at sweep position p (from 0)
// belongs to the shard.
func (s Spec) Owns(p int) bool { return p%s.Count == s.Index-1 }

// Select returns the shard's configurations in sweep order, and the
// record of the shard for the results document.
func Select(specs []spec.Spec, s Spec) ([]spec.Spec, *results.Shard, error) {
	plan, err := Plan(specs)
	if err != nil {
		return nil, nil, err
	}
	rec := &results.Shard{Index: s.Index, Count: s.Count, Configurations: len(specs), Plan: plan, Positions: []int{}}
	var picked []spec.Spec
	for p := range specs {
		if s.Owns(p) {
			picked = append(picked, specs[p])
			rec.Positions = append(rec.Positions, p)
		}
	}
	return picked, rec, nil
}

// Plan hashes the whole sweep: every configuration's name and resolved
// settings, in order. Where a configuration was written (Source, which
// holds the file's path) is left out, so the same files checked out at
// different paths plan the same sweep.
func Plan(specs []spec.Spec) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, s := range specs {
		s.Source = ""
		if err := enc.Encode(s); err != nil {
			return "", fmt.Errorf("plan of %s: %w", s.Name, err)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// FileIdentity records a scenario file by its path and the hash of its
// content.
func FileIdentity(path string, data []byte) results.ScenarioFile {
	sum := sha256.Sum256(data)
	return results.ScenarioFile{Path: path, SHA256: hex.EncodeToString(sum[:])}
}

// WarnEmpty writes the warning of a shard s that picked no configuration
// of a sweep of total: it is written all the same, empty, so that merge
// finds every shard.
func WarnEmpty(w io.Writer, s Spec, total int) {
	fmt.Fprintf(w, "provebench: shard %s has no configurations (the sweep has %d); writing an empty shard\n", s, total)
}

// PrintMergeNotes follows merge's summary of doc: that it is incomplete,
// when a shard is missing or did not finish.
func PrintMergeNotes(w io.Writer, doc *results.Run) {
	if !doc.Complete {
		fmt.Fprintln(w, "note: the merged results are incomplete (a shard is missing or did not finish)")
	}
}
