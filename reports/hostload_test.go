package reports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// TestReportFlagsLoadSkew: a configuration measured while neighbours took
// half the host is flagged in the warnings, the summary's Pareto column
// and the throughput plot, with the figures; the others are not.
func TestReportFlagsLoadSkew(t *testing.T) {
	run := fixtureRun(t, false, fixtureShapes)
	for i := range run.Scenarios {
		share := 0.05
		if i == 5 {
			share = 0.55
		}
		for k := range run.Scenarios[i].Repetitions {
			v := share
			run.Scenarios[i].Repetitions[k].HostLoad = &results.HostLoad{OthersCPUFraction: &v}
		}
	}
	dir := filepath.Join(t.TempDir(), "report")
	if _, err := Generate(run, dir, Options{Title: "skew"}); err != nil {
		t.Fatal(err)
	}
	md := string(readFile(t, filepath.Join(dir, MarkdownFile)))
	name := run.Scenarios[5].Name
	if !strings.Contains(md, "host's load differed") || !strings.Contains(md, name+": neighbours took 55% (55–55%) of the host, the other configurations' 5%") {
		t.Errorf("report.md does not warn of %s's load:\n%s", name, md)
	}
	if !strings.Contains(md, "host load differed: 55% against 5%") || strings.Count(md, "host load differed:") != 1 {
		t.Errorf("summary does not flag exactly %s", name)
	}
	if svg := svgText(t, readFile(t, filepath.Join(dir, "throughput-memory.svg"))); !strings.Contains(svg, "(load!)") {
		t.Error("the throughput plot does not mark the configuration")
	}
}

// TestTerminalTableFlagsLoadSkew: run's summary table names the
// configuration measured under another load, with its figures.
func TestTerminalTableFlagsLoadSkew(t *testing.T) {
	run := fixtureRun(t, false, fixtureShapes)
	for i := range run.Scenarios {
		share := 0.05
		if i == 2 {
			share = 0.60
		}
		for k := range run.Scenarios[i].Repetitions {
			v := share
			run.Scenarios[i].Repetitions[k].HostLoad = &results.HostLoad{OthersCPUFraction: &v}
		}
	}
	var b strings.Builder
	PrintRunSummary(&b, run, nil)
	want := "  " + run.Scenarios[2].Name + ": neighbours took 60% (60–60%) of the host"
	if !strings.Contains(b.String(), "host load differed between configurations") || !strings.Contains(b.String(), want) ||
		!strings.Contains(b.String(), "one configuration after another") {
		t.Errorf("table does not flag %q:\n%s", run.Scenarios[2].Name, b.String())
	}
}
