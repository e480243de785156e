package main

import (
	"fmt"
	"os"

	"github.com/provebench/provebench/bench"
	"github.com/provebench/provebench/bench/results"
	"github.com/provebench/provebench/bench/shard"
)

// selectShard keeps the configurations of the shard --shard names and
// returns them with the shard's record for the results.
func selectShard(specs []bench.Spec, f runFlags) ([]bench.Spec, *results.Shard, error) {
	s, err := shard.Resolve(f.shard, f.shards, os.LookupEnv)
	if err != nil {
		return nil, nil, usagef("--shard: %v", err)
	}
	picked, rec, err := shard.Select(specs, s)
	if err != nil {
		return nil, nil, err
	}
	if len(picked) == 0 {
		fmt.Fprintf(os.Stderr, "provebench: shard %s has no configurations (the sweep has %d); writing an empty shard\n", s, len(specs))
	}
	return picked, rec, nil
}
