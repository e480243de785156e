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
	if err := writeBestScenario(best, report); err != nil {
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
