package docs

import (
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// Comments state contracts; figures go in docs and results (issue 40,
// item 5). A comment that quotes what a run measured ("took 40 s on the
// H200", "measured 22.7 MiB in one run of five", "1.7 MB at ffd749f")
// goes stale as the code moves, and nothing re-measures it: the figure
// belongs in docs/*.md or a results folder's README, with where it comes
// from, and the comment says why the code is as it is.

// measurementSkipped are folders whose comments are not checked: none
// now. An entry is for a folder another change is cleaning at the time,
// and goes once its comments are clean.
var measurementSkipped []string

var (
	// figureRE is a figure with a unit of time, size, share or ratio:
	// "40 s", "0.77-1.9 s", "22.7 MiB", "9%", "1.3 times", "17x".
	figureRE = regexp.MustCompile(`\d(?:[\d.]*\d)?\s?(?:%|(?:ns|µs|us|ms|s|min|minutes?|seconds?|hours?|B|bytes|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB|x|×|times)\b)`)
	// measuredRE is what makes a figure an observation rather than a
	// contract: a verb of a run ("took", "measured on", "peaked"; "the
	// measured repetitions" is vocabulary, not a run's figure), a named
	// host ("H200", "16-core", "VM", "here"), a count of runs ("in one
	// run", "once in 31"), or a commit.
	measuredRE = regexp.MustCompile(`\b(?:[Mm]easured (?:on|at|in|the|a|an|by|while|about|some|\d)|took|peaked|grew|costs? (?:\w+ ){0,2}(?:some|about)|in one run|once in|runs? of \d+|of \d+ runs|in the tests|on the committed \w+ runs|H[12]00|A100|RTX|\d+-core|two-core|VM|one here|on this (?:host|machine))\b`)
	// hostRunRE names the machine a figure came from even where the figure
	// itself has moved to the docs: "measured on the H200".
	hostRunRE = regexp.MustCompile(`\b[Mm]easured on (?:an?|the|one) (?:H[12]00|A100|RTX)`)
	// commitRE is an abbreviated commit hash: hex with a digit and a letter.
	commitRE = regexp.MustCompile(`\b[0-9a-f]{7,12}\b`)
	// quotedRE is quoted text: an example of output or input ("node-1
	// (..., NVIDIA H200 ×2)", `2m0s`) shows a format, not a measurement.
	quotedRE = regexp.MustCompile("\"[^\"]*\"|`[^`]*`")
	// sentenceRE ends a sentence or a clause that stands alone.
	sentenceRE = regexp.MustCompile(`[.;!?]\s+`)
)

// measurementAllowed are sentences that match the heuristic but state a
// contract, each with why: "file: the sentence's start".
var measurementAllowed = map[string]string{}

// isCommit reports whether s, matched by commitRE, reads as a commit (a
// digit and a letter) rather than a number or a word.
func isCommit(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdef")
}

// embedsMeasurement returns the first sentence of text that quotes a
// measured figure: a figure beside a sign that it was observed (measuredRE)
// or beside a commit; "" when none does.
func embedsMeasurement(text string) string {
	if all := measurements(text); len(all) > 0 {
		return all[0]
	}
	return ""
}

// measurements returns every sentence of text that quotes a measured
// figure, in order.
func measurements(text string) []string {
	text = quotedRE.ReplaceAllString(strings.Join(strings.Fields(text), " "), `""`)
	var out []string
	for _, s := range sentenceRE.Split(text, -1) {
		if quotesMeasurement(s) {
			out = append(out, s)
		}
	}
	return out
}

// quotesMeasurement reports whether one sentence quotes a measured figure.
func quotesMeasurement(s string) bool {
	if hostRunRE.MatchString(s) {
		return true
	}
	if !figureRE.MatchString(s) {
		return false
	}
	if measuredRE.MatchString(s) {
		return true
	}
	for _, c := range commitRE.FindAllString(s, -1) {
		if isCommit(c) {
			return true
		}
	}
	return false
}

// unallowed returns the sentences of a comment of file r that quote a
// measured figure and are not in allowed, and the keys of allowed they
// matched: an allowed sentence excuses itself, not the comment.
func unallowed(r, text string, allowed map[string]string) (bad, keys []string) {
	for _, s := range measurements(text) {
		if key := allowedKey(r, s, allowed); key != "" {
			keys = append(keys, key)
			continue
		}
		bad = append(bad, s)
	}
	return bad, keys
}

// TestAnAllowedSentenceDoesNotHideTheNext: a comment whose first flagged
// sentence is allowed is still checked past it.
func TestAnAllowedSentenceDoesNotHideTheNext(t *testing.T) {
	allowed := map[string]string{"x/y.go: The cap is 64 MiB, measured by": "a contract"}
	text := "The cap is 64 MiB, measured by the kernel. It took 40 s on the H200 in one run."
	bad, keys := unallowed("x/y.go", text, allowed)
	if len(keys) != 1 || len(bad) != 1 || !strings.HasPrefix(bad[0], "It took 40 s") {
		t.Errorf("flagged %q, allowed %q: want the second sentence flagged, the first allowed", bad, keys)
	}
}

// TestEmbedsMeasurement pins the heuristic on the comments it was written
// for (issue 40) and on contracts that must pass.
func TestEmbedsMeasurement(t *testing.T) {
	for _, c := range []string{
		"Cost, measured on an H200 (driver 580, 16-core VM): 20 to 50 µs per device.",
		"On the H200 host a round cost about 1.3 times as much.",
		"a 200 MB line without a newline grew the runner by 436 MB",
		"until its exec the child's resident set is the root's (a `true` measured the supervisor's 22.7 MiB in one run of five)",
		"the best level costs some 20 ms per MB of JSON",
		"Medians: one repetition slowed by the host (a VM's stolen time reached 38% in one here) moves them least.",
		"128 MiB was 75 times the largest document at ffd749f.",
		"Pinning each dataset stalls the device (measured on the H200: docs/gpu.md).",
		"On the H200 host, six partitions at once slowed each other about 1% at 2^21-2^22 and 9% at 2^24.",
		"Measured on the CPU backend at 2^10..2^20: 60-150 MiB; the estimate takes the top.",
		"a 2^27-constraint configuration costs the simulator some 10 ms",
	} {
		if embedsMeasurement(c) == "" {
			t.Errorf("not flagged: %q", c)
		}
	}
	for _, c := range []string{
		"The default threshold is 5% for timing and 10% for memory.",
		"maxLine bounds what is kept of one output line: 64 KiB.",
		"neither read nor kept whole, only counted: a line without a newline must not grow the runner by its size, or more.",
		`The host as the report names it: "node-1 (AMD EPYC 9654, 192 CPUs, NVIDIA H200 ×2)".`,
		"Rounded to three figures: 1.50 GiB, 512 MiB, 12.0 KiB, 0 B.",
		"the measured repetitions of a configuration, at the kernel's 10 ms resolution.",
	} {
		if s := embedsMeasurement(c); s != "" {
			t.Errorf("flagged a contract: %q", s)
		}
	}
}

// TestCommentsStateContracts: no comment of a non-test Go file embeds a
// measured figure (a figure with its unit beside "measured", "took", a
// named host or a commit); move it to docs/ with its provenance and say
// in the comment what the code promises. A sentence that matches but
// states a contract goes in measurementAllowed, with why.
func TestCommentsStateContracts(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	checked := 0
	for _, path := range sources(t) {
		r := rel(path)
		if skippedForMeasurements(r) {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, cg := range f.Comments {
			bad, keys := unallowed(r, cg.Text(), measurementAllowed)
			for _, key := range keys {
				seen[key] = true
			}
			for _, s := range bad {
				t.Errorf("%s: a comment embeds a measured figure (move it to docs/ with its source; say the contract here): %q", fset.Position(cg.Pos()), s)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("%d Go files checked from ..: not the repository", checked)
	}
	for key := range measurementAllowed {
		if !seen[key] {
			t.Errorf("measurementAllowed: %q matches no comment any more: remove it", key)
		}
	}
}

// skippedForMeasurements reports whether the file at r (relative, with
// slashes) lies in a folder of measurementSkipped.
func skippedForMeasurements(r string) bool {
	for _, dir := range measurementSkipped {
		if strings.HasPrefix(r, dir+"/") {
			return true
		}
	}
	return false
}

// allowedKey is the key of allowed (measurementAllowed) that the flagged
// sentence s of file r matches, or "".
func allowedKey(r, s string, allowed map[string]string) string {
	for key := range allowed {
		file, start, _ := strings.Cut(key, ": ")
		if file == r && strings.HasPrefix(s, start) {
			return key
		}
	}
	return ""
}
