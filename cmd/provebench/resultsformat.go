package main

import (
	"github.com/spf13/pflag"

	"github.com/provebench/provebench/results"
)

// resultsFormatFlag is --results-format, shared by the commands that write
// a results document (run, merge, simulate, ab).
type resultsFormatFlag struct{ value string }

func (f *resultsFormatFlag) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.value, "results-format", string(results.FormatGzip),
		"how to store the results document: json.gz (compact JSON, gzip: results.json.gz) or json (indented: results.json); readers take either")
}

// format parses the flag; a bad value is bad input (exit 2).
func (f *resultsFormatFlag) format() (results.Format, error) {
	rf, err := results.ParseFormat(f.value)
	if err != nil {
		return "", usagef("--results-format: %v", err)
	}
	return rf, nil
}
