package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// axisValues loads a one-axis matrix and returns its points' labels for
// the axis, in order.
func axisValues(t *testing.T, base, field, axis string) []string {
	t.Helper()
	doc := header + "matrix:\n  - name: m\n"
	if base != "" {
		doc += "    base: " + base + "\n"
	}
	doc += "    axes:\n      " + field + ": " + axis + "\n"
	var got []string
	for _, s := range load(t, doc) {
		got = append(got, s.Labels[field])
		if want := "m/" + field[strings.LastIndexByte(field, '.')+1:] + "=" + s.Labels[field]; s.Name != want {
			t.Errorf("name %q, want %q", s.Name, want)
		}
	}
	return got
}

func TestRangeAxes(t *testing.T) {
	const budget = "{pipeline: {strategy: budget}}"
	tests := []struct {
		name, base, field, axis string
		want                    []string
	}{
		{"ints", "", "pipeline.partition_workers", "{from: 4, to: 18, step: 2}", []string{"4", "6", "8", "10", "12", "14", "16", "18"}},
		{"step past the end", "", "pipeline.channel_capacity", "{from: 1, to: 10, step: 4}", []string{"1", "5", "9"}},
		{"one value", "", "pipeline.channel_capacity", "{from: 3, to: 3, step: 1}", []string{"3"}},
		{"geometric ints", "", "pipeline.channel_capacity", "{from: 1, to: 16, times: 2}", []string{"1", "2", "4", "8", "16"}},
		{"sizes", budget, "pipeline.budget", "{from: 96GiB, to: 320GiB, step: 32GiB}",
			[]string{"96GiB", "128GiB", "160GiB", "192GiB", "224GiB", "256GiB", "288GiB", "320GiB"}},
		{"sizes in smaller units", budget, "pipeline.budget", "{from: 1GiB, to: 2GiB, step: 512MiB}", []string{"1GiB", "1536MiB", "2GiB"}},
		{"decimal sizes", budget, "pipeline.budget", "{from: 1GB, to: 3GB, step: 1GB}", []string{"1GB", "2GB", "3GB"}},
		{"geometric sizes", budget, "pipeline.budget", "{from: 256MiB, to: 1GiB, times: 2}", []string{"256MiB", "512MiB", "1GiB"}},
		{"constraints", "{key: random}", "workload.constraints", "{from: 2^20, to: 2^24, times: 4}", []string{"2^20", "2^22", "2^24"}},
		{"numbers", "", "pipeline.pacer.target_depth", "{from: 0.5, to: 2, step: 0.5}", []string{"0.5", "1", "1.5", "2"}},
		{"tenths end on their bound", "", "pipeline.pacer.target_depth", "{from: 0.1, to: 0.5, step: 0.1}", []string{"0.1", "0.2", "0.3", "0.4", "0.5"}},
		{"geometric numbers", "", "pipeline.pacer.target_depth", "{from: 1, to: 10, times: 1.5}", []string{"1", "1.5", "2.25", "3.375", "5.0625", "7.59375"}},
		{"user variables, as integers", "", "vars.pw", "{from: 8, to: 12, step: 2}", []string{"8", "10", "12"}},
		{"durations", "", "pipeline.pacer.interval", "{from: 500ms, to: 2s, step: 500ms}", []string{"500ms", "1s", "1.5s", "2s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := axisValues(t, tt.base, tt.field, tt.axis); !slices.Equal(got, tt.want) {
				t.Errorf("values %v, want %v", got, tt.want)
			}
		})
	}
}

// A range axis sets the same spec as the list of its values.
func TestRangeEqualsList(t *testing.T) {
	doc := header + `defaults: {pipeline: {strategy: budget}, workload: {constraints: 2^16}}
matrix:
  - name: m
    axes:
      pipeline.synthesis_workers: %s
      pipeline.budget: %s
`
	ranged := load(t, fmt.Sprintf(doc, "{from: 2, to: 6, step: 2}", "{from: 64MiB, to: 256MiB, times: 2}"))
	listed := load(t, fmt.Sprintf(doc, "[2, 4, 6]", "[64MiB, 128MiB, 256MiB]"))
	if len(ranged) != 9 || len(ranged) != len(listed) {
		t.Fatalf("%d points from ranges, %d from lists", len(ranged), len(listed))
	}
	for i := range ranged {
		r, l := ranged[i], listed[i]
		if r.Name != l.Name || r.Pipeline != l.Pipeline || r.Labels["pipeline.budget"] != l.Labels["pipeline.budget"] {
			t.Errorf("point %d: range gives %s %+v, list %s %+v", i, r.Name, r.Pipeline, l.Name, l.Pipeline)
		}
	}
	if ranged[8].Pipeline.Budget != 256<<20 || ranged[8].Pipeline.SynthesisWorkers != 6 {
		t.Errorf("last point %+v", ranged[8].Pipeline)
	}
}

func TestRangeErrors(t *testing.T) {
	axis := func(field, r string) string {
		return header + "matrix:\n  - name: m\n    axes:\n      " + field + ": " + r + "\n"
	}
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"from above to", axis("pipeline.partition_workers", "{from: 18, to: 4, step: 2}"),
			[]string{"5:50: matrix[0].axes[pipeline.partition_workers].to: 4 is below from (18)"}},
		{"zero step", axis("pipeline.partition_workers", "{from: 4, to: 18, step: 0}"),
			[]string{"5:59: matrix[0].axes[pipeline.partition_workers].step: 0: a step must be greater than 0"}},
		{"negative step", axis("pipeline.pacer.target_depth", "{from: 1, to: 2, step: -0.5}"),
			[]string{"5:59: matrix[0].axes[pipeline.pacer.target_depth].step: -0.5: a step must be greater than 0"}},
		{"too many values", axis("workload.partitions", "{from: 1, to: 5000, step: 1}"),
			[]string{"5:28: matrix[0].axes[workload.partitions]: 5000 values: more than 1000 in one axis"}},
		{"too many geometric values", axis("pipeline.pacer.target_depth", "{from: 1, to: 1e300, times: 1.01}"),
			[]string{"5:36: matrix[0].axes[pipeline.pacer.target_depth]: more than 1000 values in one axis"}},
		{"from out of bounds", axis("pipeline.channel_capacity", "{from: 0, to: 4, step: 1}"),
			[]string{"5:41: matrix[0].axes[pipeline.channel_capacity].from: 0 is below the minimum 1"}},
		{"bad size", axis("pipeline.budget", "{from: 1G, to: 4GiB, step: 1GiB}"),
			[]string{`5:31: matrix[0].axes[pipeline.budget].from: size "1G"`}},
		{"step and times", axis("pipeline.channel_capacity", "{from: 1, to: 4, step: 1, times: 2}"),
			[]string{"5:67: matrix[0].axes[pipeline.channel_capacity].times: a range takes step (arithmetic) or times (geometric), not both"}},
		{"neither step nor times", axis("pipeline.channel_capacity", "{from: 1, to: 4}"),
			[]string{"5:34: matrix[0].axes[pipeline.channel_capacity].step: missing"}},
		{"missing from", axis("pipeline.channel_capacity", "{to: 4, step: 1}"),
			[]string{"5:34: matrix[0].axes[pipeline.channel_capacity].from: missing"}},
		{"unknown key", axis("pipeline.channel_capacity", "{from: 1, to: 4, stpe: 1}"),
			[]string{"5:34: matrix[0].axes[pipeline.channel_capacity].step: missing",
				"5:51: matrix[0].axes[pipeline.channel_capacity].stpe: unknown field (did you mean step?)"}},
		{"whole factor", axis("pipeline.channel_capacity", "{from: 1, to: 16, times: 1.5}"),
			[]string{"5:59: matrix[0].axes[pipeline.channel_capacity].times: 1.5: this field's values are whole"}},
		{"factor of one", axis("pipeline.channel_capacity", "{from: 1, to: 16, times: 1}"),
			[]string{"5:59: matrix[0].axes[pipeline.channel_capacity].times: 1: the factor must be greater than 1"}},
		{"geometric from zero", axis("pipeline.synthesis_workers", "{from: 0, to: 16, times: 2}"),
			[]string{"5:42: matrix[0].axes[pipeline.synthesis_workers].from: 0: a geometric range (times) starts above 0"}},
		{"constraints by step", axis("workload.constraints", "{from: 2^10, to: 2^12, step: 1024}"),
			[]string{"5:58: matrix[0].axes[workload.constraints].step: constraints are powers of two: sweep them with times: 2"}},
		{"constraints off the powers of two", axis("workload.constraints", "{from: 2^10, to: 2^14, times: 3}"),
			[]string{"5:29: matrix[0].axes[workload.constraints]: the range's value 3072: constraints 3072 is not a power of two"}},
		{"a variable ranges over integers", axis("vars.pw", "{from: 1.5, to: 4, step: 1}"),
			[]string{`5:23: matrix[0].axes[vars.pw].from: "1.5": want an integer`}},
		{"not a numeric field", axis("pipeline.strategy", "{from: 1, to: 2, step: 1}"),
			[]string{"5:26: matrix[0].axes[pipeline.strategy]: pipeline.strategy is one of"}},
		{"a value the pipeline refuses points at the range", header + "defaults: {workload: {constraints: 2^14}, pipeline: {strategy: budget}}\nmatrix:\n  - name: m\n    axes:\n      pipeline.budget: {from: 1MiB, to: 3MiB, step: 1MiB}\n",
			[]string{"6:24: matrix[0].axes[pipeline.budget]: 1MiB is less than one partition's dataset at 2^14 constraints (2097120B (~2MiB): 1536KiB a/b/c + 524256B (~512KiB) wires); admission could never start one (in scenario m/budget=1MiB)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := loadErrors(t, tt.doc)
			var got []string
			for _, e := range es {
				got = append(got, e.Error())
			}
			if len(es) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(es), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				pos, rest, _ := strings.Cut(w, ": ")
				var line, col int
				fmt.Sscanf(pos, "%d:%d", &line, &col)
				if e := es[i]; e.File != "test.yaml" || e.Line != line || e.Column != col {
					t.Errorf("error %d at %s:%d:%d, want test.yaml:%s\n%s", i, e.File, e.Line, e.Column, pos, got[i])
				}
				if !strings.Contains(got[i], rest) {
					t.Errorf("error %d:\n  %s\nwant it to contain\n  %s", i, got[i], rest)
				}
			}
		})
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	for _, n := range []int64{0, 1, 1000, 1024, 1536 << 20, 96 << 30, 2e9, 3 << 40, 1<<50 + 1, 5e15} {
		text := FormatSize(n)
		back, err := ParseSize(text)
		if err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q, which parses to %d, %v", n, text, back, err)
		}
	}
	if got := FormatSize(96 << 30); got != "96GiB" {
		t.Errorf("FormatSize(96GiB) = %q", got)
	}
}

// The schema and the loader agree on ranges.
func TestSchemaRanges(t *testing.T) {
	v := schemaOf(t)
	tests := []struct {
		field, axis string
		ok          bool
	}{
		{"pipeline.partition_workers", "{from: 4, to: 18, step: 2}", true},
		{"pipeline.channel_capacity", "{from: 1, to: 16, times: 2}", true},
		{"pipeline.budget", "{from: 96GiB, to: 320GiB, step: 32GiB}", true},
		{"pipeline.pacer.target_depth", "{from: 0.5, to: 4, times: 1.5}", true},
		{"pipeline.pacer.interval", "{from: 100ms, to: 1s, step: 100ms}", true},
		{"workload.constraints", "{from: 2^10, to: 2^14, times: 2}", true},
		{"pipeline.partition_workers", "{from: 4, to: 18}", false},
		{"pipeline.partition_workers", "{from: 4, step: 2}", false},
		{"pipeline.partition_workers", "{from: 4, to: 18, step: 2, by: 1}", false},
		{"pipeline.channel_capacity", "{from: 0, to: 4, step: 1}", false},
		{"pipeline.channel_capacity", "{from: 1, to: 16, times: 1.5}", false},
		{"workload.constraints", "{from: 2^10, to: 2^14, step: 1024}", false},
		{"pipeline.strategy", "{from: 1, to: 2, step: 1}", false},
		{"vars.pw", "{from: 8, to: 12, step: 2}", true},
		{"vars.pw", "{from: 8, to: 12}", false},
	}
	for _, tt := range tests {
		doc := header + "defaults: {pipeline: {strategy: budget, budget: 1GiB}}\nmatrix:\n  - name: m\n    axes:\n      " + tt.field + ": " + tt.axis + "\n"
		if tt.field == "pipeline.budget" {
			doc = strings.Replace(doc, ", budget: 1GiB", "", 1)
		}
		schemaErrs := v.validate(doc)
		_, err := LoadBytes("test.yaml", []byte(doc))
		if (len(schemaErrs) == 0) != tt.ok || (err == nil) != tt.ok {
			t.Errorf("%s: %s: schema %v, loader %v; want ok=%v", tt.field, tt.axis, schemaErrs, err, tt.ok)
		}
	}
}
