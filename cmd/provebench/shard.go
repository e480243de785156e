package main

import (
	"os"

	"github.com/provebench/provebench/results"
	"github.com/provebench/provebench/run"
	"github.com/provebench/provebench/run/shard"
)

// selectShard keeps the configurations of the shard --shard names and
// returns them with the shard's record for the results.
func selectShard(specs []run.Spec, f runFlags) ([]run.Spec, *results.Shard, error) {
	s, err := shard.Resolve(f.shard, f.shards, os.LookupEnv)
	if err != nil {
		return nil, nil, usagef("--shard: %v", err)
	}
	picked, rec, err := shard.Select(specs, s)
	if err != nil {
		return nil, nil, err
	}
	if len(picked) == 0 {
		shard.WarnEmpty(os.Stderr, s, len(specs))
	}
	return picked, rec, nil
}
