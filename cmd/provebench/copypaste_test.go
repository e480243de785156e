package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/provebench/provebench/predict"
	"github.com/provebench/provebench/scenarios"
)

// Issue 41: a command a help text shows must work when copied. run writes
// results.json.gz (results.json only with --results-format json), so an
// example naming a run's results.json exits 2; every reader takes the
// output folder, which is what the examples name instead.
func TestExamplesNameFilesRunWrites(t *testing.T) {
	plain := regexp.MustCompile(`results\.json(\s|$|,)`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if plain.MatchString(c.Example) {
			t.Errorf("%s's examples name a results.json, which run does not write (results.json.gz; or the folder):\n%s", c.CommandPath(), c.Example)
		}
		for _, line := range strings.Split(c.Long, "\n") {
			if strings.Contains(line, "provebench ") && plain.MatchString(line) {
				t.Errorf("%s's help shows a command naming a results.json, which run does not write: %q", c.CommandPath(), line)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}

// The header --best-scenario writes: the --check it suggests reads the
// folder the suggested run writes.
func TestBestScenarioHeaderChecksWhatTheRunWrites(t *testing.T) {
	dir := t.TempDir()
	scen := writeFile(t, dir, "search.yaml", tinySearch)
	specs, err := scenarios.Load(scen)
	if err != nil {
		t.Fatal(err)
	}
	found, err := predict.Search(context.Background(), specs, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	report := predict.NewSearchReport(found, 30<<20, []string{scen}, []string{"out/cal"})
	best := filepath.Join(dir, "best.yaml")
	if err := writeBestScenario(best, report, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(best)
	if err != nil {
		t.Fatal(err)
	}
	runOut := regexp.MustCompile(`provebench run \S+ -o (\S+)`).FindStringSubmatch(string(data))
	check := regexp.MustCompile(`--check (\S+)`).FindStringSubmatch(string(data))
	if runOut == nil || check == nil {
		t.Fatalf("the header suggests no run -o or no --check:\n%s", data)
	}
	if check[1] != runOut[1] {
		t.Errorf("the header's --check %s is not the folder its run writes, %s:\n%s", check[1], runOut[1], data)
	}
}

// Issue 41, item 4: report --export alone writes the dashboard's JSON and
// draws nothing (it used to redraw every plot to write one file); without
// -o or --export there is nothing to write, exit 2.
func TestReportExportAloneDrawsNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVEBENCH_CACHE", filepath.Join(dir, "keys"))
	scen := writeFile(t, dir, "s.yaml", tinyScenario)
	run := filepath.Join(dir, "run")
	if code := runCLI(t, "run", scen, "--filter", "^hold$", "--repeat", "1", "--no-report", "-o", run); code != exitOK {
		t.Fatalf("run exited %d", code)
	}
	bmf := filepath.Join(dir, "bmf.json")
	if code := runCLI(t, "report", run, "--export", "bencher="+bmf); code != exitOK {
		t.Fatalf("report --export alone exited %d", code)
	}
	if st, err := os.Stat(bmf); err != nil || st.Size() == 0 {
		t.Errorf("the export was not written: %v", err)
	}
	drawn, _ := filepath.Glob(filepath.Join(run, "*.png"))
	reports, _ := filepath.Glob(filepath.Join(run, "report.*"))
	if len(drawn)+len(reports) > 0 {
		t.Errorf("report --export alone drew %v %v", drawn, reports)
	}
	if code := runCLI(t, "report", run); code != exitUsage {
		t.Errorf("report without -o or --export exited %d, want %d", code, exitUsage)
	}
}
