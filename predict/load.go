package predict

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/provebench/provebench/results"
)

// LoadOptions say which documents may calibrate one model together.
type LoadOptions struct {
	// AllowMixedCommits takes documents built from different commits
	// together: they measured different provers, so only on request.
	AllowMixedCommits bool
	// Role names what the documents are for in errors about reading them
	// (such as "--check"); empty means "calibration".
	Role string
}

// role is the name errors about o's documents start with.
func (o LoadOptions) role() string {
	if o.Role == "" {
		return "calibration"
	}
	return o.Role
}

// Measurements are the measured configurations of calibration documents,
// checked to describe one prover, host, backend and clock: what Fit
// fits a model to, whole or in part (cross-validation).
type Measurements struct {
	Files  []string
	Points []Point
	// Host, Cores, Backend and Devices are the calibration host's, as the
	// documents describe it; Environment is the first document's.
	Host        string
	Cores       int
	Backend     string
	Devices     int
	Environment results.Environment
	// Measure is how every repetition's clock started (results.MeasureWarm,
	// results.MeasureCold, or "" in documents written before the
	// distinction): one calibration measures one way.
	Measure string
	// Notes say what was left out or could not be checked, for the user
	// (stderr): exec configurations, commits not recorded.
	Notes []string
	// Sequential are the documents that ran several configurations one
	// after another (not run --interleave): a drift of the host's speed
	// fell on some configurations and not others.
	Sequential []string
}

// SynthesisCompute is the synthesis mode of a workload that does not name
// one: every partition's witness computed. Other modes (workload.synthesis,
// such as "cached": datasets filled from a cached witness) have their own
// synthesis costs, never fitted from another mode's runs.
const SynthesisCompute = "compute"

// synthesisMode is a workload's synthesis mode as written
// (workload.synthesis), SynthesisCompute where none is.
func synthesisMode(written string) string {
	if written == "" {
		return SynthesisCompute
	}
	return written
}

// Commit is the git commit a results document's binary was built from:
// the environment's git_commit, else the revision tool_version records
// ("v0.0.0-... <commit>[+dirty]"); "" when neither says. A "+dirty" build
// is told apart from its clean commit.
func Commit(doc *results.Run) string {
	if doc.Environment.GitCommit != "" {
		return doc.Environment.GitCommit
	}
	if f := strings.Fields(doc.ToolVersion); len(f) == 2 {
		return f[1]
	}
	return ""
}

// noCommit starts the name of a prover whose documents record no commit.
const noCommit = "no commit recorded"

// proverOf names the binary that measured a document, to tell provers
// apart: its commit, else (no commit recorded) the binary's SHA-256, else
// its tool_version. Documents of different provers do not calibrate
// together unless asked to, and never pool a configuration.
func proverOf(doc *results.Run) string {
	switch {
	case Commit(doc) != "":
		return Commit(doc)
	case doc.ToolSHA256 != "":
		return noCommit + ", binary sha256 " + doc.ToolSHA256
	case doc.ToolVersion != "":
		return noCommit + ", tool_version " + doc.ToolVersion
	}
	return noCommit
}

// Load reads calibration documents, each given as itself or its output
// folder (results.InDir), and keeps them under the names given. It refuses (errors naming each
// document) a document given twice (the same file, or the same run: its
// repetitions would count twice), simulated documents, documents of
// different hosts, backends or clocks (warm and cold), and documents of
// different provers (commits, or where none is recorded binaries) unless
// o.AllowMixedCommits; it leaves out, with a note, exec configurations
// (an external prover is not what the model describes) and configurations
// without a measured repetition. It stops, with ctx's error, when ctx is
// done while it reads.
func Load(ctx context.Context, files []string, o LoadOptions) (*Measurements, error) {
	ms := &Measurements{Files: files}
	commits := map[string][]string{} // prover -> files
	var seen []seenDocument
	var pending []measured
	for _, f := range files {
		path, err := results.InDir(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.role(), err) // it names f
		}
		doc, err := results.ReadContext(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.role(), f, err)
		}
		if doc.Simulated != nil {
			return nil, fmt.Errorf("%s %s: a simulated document (provebench simulate's predictions), not measurements: calibrate on real runs", o.role(), f)
		}
		if err := notSeen(&seen, f, doc); err != nil {
			return nil, err
		}
		c := proverOf(doc)
		commits[c] = append(commits[c], f)
		if err := ms.add(f, doc, &pending); err != nil {
			return nil, err
		}
	}
	if err := ms.checkCommits(commits, o); err != nil {
		return nil, err
	}
	if err := ms.pool(pending); err != nil {
		return nil, err
	}
	if len(ms.Points) == 0 {
		return nil, errors.New(o.role() + ": no measured repetition of the built-in pipeline in " + strings.Join(files, ", "))
	}
	return ms, ms.checkMeasure()
}

// measured is one configuration's repetitions, gathered from every
// document that ran it (in the order read), before they become a Point.
type measured struct {
	key      string
	files    []string
	doc      *results.Run // the first document's: its commit names the point's
	scenario results.Scenario
}

// configurationKey tells one configuration from another across documents:
// its name and its resolved spec (its view: one spelling whatever the
// order of fields or of durations), less what only says how often or from
// where it ran (repeats, the scenario file's path and line), measured by
// one commit's binary (another commit's is another prover, never pooled,
// even where --allow-mixed-commits takes both).
func configurationKey(doc *results.Run, sc *results.Scenario, view results.SpecView) string {
	return proverOf(doc) + "\x00" + sc.Name + "\x00" + view.Key("repeats", "source")
}

// seenDocument is a document Load has read: its file and its run.
type seenDocument struct {
	file string
	info os.FileInfo // nil where the file could not be stat'ed again
	run  string      // host and start, "" where the start is not recorded
}

// notSeen refuses a document that is one already read: the same file
// under another name, or another file of the same run (a copy, the same
// run written again in another format). Its repetitions would be pooled
// with themselves, counting twice.
func notSeen(seen *[]seenDocument, f string, doc *results.Run) error {
	d := seenDocument{file: f}
	if st, err := os.Stat(f); err == nil {
		d.info = st
	}
	if !doc.StartedAt.IsZero() {
		d.run = doc.Environment.Hostname + " at " + doc.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	for _, s := range *seen {
		switch {
		case d.info != nil && s.info != nil && os.SameFile(d.info, s.info):
			return fmt.Errorf("calibration %s: the same file as %s, given twice: its repetitions would count twice", f, s.file)
		case d.run != "" && d.run == s.run:
			return fmt.Errorf("calibration %s: the same run as %s (%s), given twice: its repetitions would count twice", f, s.file, d.run)
		}
	}
	*seen = append(*seen, d)
	return nil
}

// pool makes one Point of each configuration, its repetitions pooled over
// the documents that ran it: a configuration measured again in a later
// run (say interleaved with the shapes it is predicted from) is one
// configuration with more repetitions, not two that disagree, and its
// medians span both runs' host conditions.
func (ms *Measurements) pool(pending []measured) error {
	for i := range pending {
		m := &pending[i]
		p, ok, err := point(m.files[0], m.doc, &m.scenario)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		p.Files = m.files
		if len(m.files) > 1 {
			ms.Notes = append(ms.Notes, fmt.Sprintf("calibration: %s was measured in %d documents (%s): its %d repetitions are pooled",
				m.scenario.Name, len(m.files), strings.Join(m.files, ", "), p.Reps))
		}
		ms.Devices = max(ms.Devices, p.Spec.Devices, 1)
		ms.Points = append(ms.Points, p)
	}
	return nil
}

// add takes one document's usable configurations into pending, pooling a
// configuration that an earlier document ran.
func (ms *Measurements) add(f string, doc *results.Run, pending *[]measured) error {
	host := doc.Environment.Hostname + " (" + doc.Environment.CPUModel + ")"
	if ms.Host == "" {
		ms.Host, ms.Cores, ms.Environment = host, doc.Environment.GOMAXPROCS, doc.Environment
	} else if ms.Host != host {
		return fmt.Errorf("calibration %s: measured on %s, the others on %s: calibrate one host at a time", f, host, ms.Host)
	}
	if len(doc.Scenarios) > 1 && doc.RunOrder != results.RunOrderInterleaved {
		ms.Sequential = append(ms.Sequential, f)
	}
	var execs []string
	for i := range doc.Scenarios {
		sc := &doc.Scenarios[i]
		if sc.Driver != "" {
			execs = append(execs, sc.Name)
			continue
		}
		if !slices.ContainsFunc(sc.Repetitions, func(r results.Repetition) bool { return r.Measured() }) {
			continue
		}
		if ms.Backend == "" {
			ms.Backend = sc.Backend
		} else if ms.Backend != sc.Backend {
			return fmt.Errorf("calibration %s: scenario %s ran on %s, others on %s: calibrate one backend at a time", f, sc.Name, sc.Backend, ms.Backend)
		}
		view, err := sc.DecodeSpec()
		if err != nil {
			return fmt.Errorf("calibration %s: %w", f, err)
		}
		key := configurationKey(doc, sc, view)
		i := slices.IndexFunc(*pending, func(m measured) bool { return m.key == key })
		if i < 0 {
			*pending = append(*pending, measured{key: key, doc: doc, scenario: *sc})
			i = len(*pending) - 1
			(*pending)[i].scenario.Repetitions = slices.Clone(sc.Repetitions)
		} else {
			(*pending)[i].scenario.Repetitions = append((*pending)[i].scenario.Repetitions, sc.Repetitions...)
		}
		if m := &(*pending)[i]; !slices.Contains(m.files, f) {
			m.files = append(m.files, f)
		}
	}
	if len(execs) > 0 {
		ms.Notes = append(ms.Notes, fmt.Sprintf("calibration %s: left out %s run by the exec driver (%s): an external prover is not what the model describes; the built-in pipeline's configurations calibrate",
			f, count(len(execs), "configuration"), abbreviate(execs)))
	}
	return nil
}

// checkCommits refuses documents of different commits unless allowed, and
// notes what could not be checked.
func (ms *Measurements) checkCommits(commits map[string][]string, o LoadOptions) error {
	if len(commits) == 1 {
		for c := range commits {
			if strings.HasPrefix(c, noCommit) {
				ms.Notes = append(ms.Notes, "calibration: no document records the commit its binary was built from (make build records it): they are taken as one prover by their binary ("+c+")")
			}
		}
		return nil
	}
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(commits)) {
		for _, f := range commits[c] {
			lines = append(lines, fmt.Sprintf("%s: %s", f, c))
		}
	}
	if o.AllowMixedCommits {
		ms.Notes = append(ms.Notes, fmt.Sprintf("calibration: documents of %d commits calibrate together (--allow-mixed-commits): %s", len(commits), strings.Join(lines, "; ")))
		return nil
	}
	return fmt.Errorf("calibration: the documents come from %d different commits or binaries, which measured different provers (--allow-mixed-commits takes them together):\n  %s",
		len(commits), strings.Join(lines, "\n  "))
}

// checkMeasure refuses configurations measured on different clocks: a
// cold repetition's wall time includes setup that a warm one's does not.
func (ms *Measurements) checkMeasure() error {
	by := map[string][]string{}
	for _, p := range ms.Points {
		by[p.Measure] = append(by[p.Measure], p.File+": "+p.Scenario)
	}
	if len(by) == 1 {
		ms.Measure = ms.Points[0].Measure
		return nil
	}
	var lines []string
	for _, m := range slices.Sorted(maps.Keys(by)) {
		lines = append(lines, fmt.Sprintf("%s: %s", measureName(m), abbreviate(by[m])))
	}
	return fmt.Errorf("calibration: configurations measured on different clocks, whose wall times differ by the setup (calibrate on one):\n  %s", strings.Join(lines, "\n  "))
}

// measureName says how a repetition's clock started.
func measureName(m string) string {
	switch m {
	case "":
		return "measure not recorded (documents before warm starts)"
	case results.MeasureWarm:
		return "warm (clock from the prover ready)"
	case results.MeasureCold:
		return "cold (setup inside the clock)"
	}
	return m
}

// abbreviate lists names, the first few of many.
func abbreviate(names []string) string {
	const shown = 4
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
