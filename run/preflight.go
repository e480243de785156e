package run

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/sys/unix"

	"github.com/provebench/provebench/gpu/groth16"
	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/pipeline/config"
)

// runtimeBytes is what a repetition's process holds besides the key and
// the datasets: the Go runtime, the prover's tables and buffers. A bound
// above what the CPU backend's runs held (docs/reference.md, "The
// pre-flight check", has the figures).
const runtimeBytes = 160 << 20

// Estimate is a configuration's expected size before it runs.
type Estimate struct {
	// PeakRSS is the runtime, the proving key and the live datasets the
	// strategy allows at most.
	PeakRSS int64
	// KeyBytes is the proving key, in memory and on disk.
	KeyBytes int64
	// Datasets is how many partitions' datasets may be live at once, and
	// Bound what limits them; Dataset is one partition's.
	Datasets int64
	Bound    string
	Dataset  int64
}

// EstimateSpec bounds a configuration's peak RSS from its strategy: the
// tightest of its gates' bounds on live datasets, and never more than the
// partitions of the proofs in flight. The bounds count what is on the GPU
// side (partitions in Start and finalizing) as two per GPU worker, which a
// device serving its queue in order keeps to.
func EstimateSpec(s *Spec) Estimate {
	w, c := s.Workload, s.Pipeline.Resolved()
	p := w.Circuit()
	abc, wires := p.DatasetBytes()
	one := abc + wires
	devices := int64(max(s.Devices, 1))
	gpuSide := 2 * int64(c.GPUWorkers) * devices
	e := Estimate{KeyBytes: groth16.KeyBytes(p), Dataset: one, Datasets: int64(w.Concurrency) * int64(w.Partitions), Bound: "the partitions of the proofs in flight"}
	if n, why, ok := config.Registered().Bound(c, one, gpuSide); ok && n < e.Datasets {
		e.Datasets, e.Bound = n, why
	}
	e.PeakRSS = runtimeBytes + e.KeyBytes + e.Datasets*one
	return e
}

// Predictor predicts a configuration's peak RSS, such as the simulator on a
// calibration of this host; a description says where the figure comes
// from. An error that wraps ErrNoPrediction leaves the strategy's bound
// standing, with the error as the reason; any other refuses the
// configuration.
type Predictor func(s *Spec) (peakRSS int64, from string, err error)

// ErrNoPrediction says a Predictor has nothing to say about a
// configuration: no calibration of its backend, say.
var ErrNoPrediction = errors.New("no prediction")

// NoPredictionReason is the reason an error wrapping ErrNoPrediction
// gives, without the sentinel's words.
func NoPredictionReason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrNoPrediction.Error()+": ")
}

// Check is what the pre-flight check holds one configuration to.
type Check struct {
	Name, Source string
	PeakRSS      int64
	// Basis says where PeakRSS comes from, alike for the configurations
	// that share it ("the strategy's bound", or the predictor's
	// description); What is the whole sentence, with this configuration's
	// figures; Detail is What's figures alone (what the estimate adds up,
	// or where the prediction comes from), for a table's row.
	Basis, What, Detail string
}

// Refusal is a configuration the pre-flight check refused: its check and
// the limit its peak passes.
type Refusal struct {
	Check
	Limit string
}

// RefusedError is the pre-flight check's refusal: a row per configuration
// (its estimated peak, the limit it passes, where it is written and what
// the estimate adds up), the bases the rows share said once below, and
// the key cache's shortfall. A sentence per configuration ran to 330
// characters (issue 41); a table reads at a glance.
type RefusedError struct {
	Refused []Refusal
	Keys    string // the proving keys' shortfall, or empty
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("refused before anything was written (--force runs anyway)\n")
	if len(e.Refused) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "configuration\tpeak RSS\tpasses\tfile\testimate")
		var bases []string
		for _, r := range e.Refused {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, units.FormatBytes(r.PeakRSS), r.Limit, r.Source, r.Detail)
			if !slices.Contains(bases, r.Basis) {
				bases = append(bases, r.Basis)
			}
		}
		tw.Flush()
		fmt.Fprintf(&b, "estimated from: %s", strings.Join(bases, "; "))
	}
	if e.Keys != "" {
		if len(e.Refused) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Keys)
	}
	return b.String()
}

// Preflight refuses configurations that cannot fit before anything is
// written: an estimated peak RSS over the scenario's memory_limit or the
// host's memory, or a proving key that is not cached and would not fit in
// the free space of the cache's file system. hostMemory 0 skips that check.
// It returns the figure each configuration was held to.
//
// The peak is the bound of EstimateSpec, or predict's prediction where it
// makes one, but never less than the floor of the key and one dataset,
// which no configuration can run below: a model calibrated at
// sizes far from the configuration's can miss what grows with it, and the
// floor still refuses a PoRep-sized key on a small host. A prediction may
// be below the bound; that is what it is for.
func Preflight(specs []Spec, hostMemory int64, cacheDir string, predict Predictor) ([]Check, error) {
	var errs []error
	var checks []Check
	refused := &RefusedError{}
	keys := map[string]bool{}
	var keyNeed int64
	for i := range specs {
		s := &specs[i]
		if s.IsExec() {
			// The built-in pipeline's model says nothing of an external
			// prover, and no calibration of one exists: no estimate,
			// rather than a wrong one that refuses it.
			checks = append(checks, Check{Name: s.Name, Source: s.Source, Basis: NoEstimateBasis,
				What: fmt.Sprintf("%s (%s): not estimated (%s)", s.Name, s.Source, NoEstimateBasis)})
			continue
		}
		e := EstimateSpec(s)
		c, err := check(s, e, predict)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", s.Name, s.Source, err))
			continue
		}
		checks = append(checks, c)
		if s.MemoryLimit > 0 && c.PeakRSS > s.MemoryLimit {
			refused.Refused = append(refused.Refused, Refusal{c, "memory_limit " + units.FormatBytes(s.MemoryLimit)})
		} else if hostMemory > 0 && c.PeakRSS > hostMemory {
			refused.Refused = append(refused.Refused, Refusal{c, "host's memory " + units.FormatBytes(hostMemory)})
		}
		path := groth16.Cache{Dir: cacheDir}.Path(s.Workload.Circuit(), s.Key.Resolve(s.Workload.Constraints))
		if _, err := os.Stat(path); err != nil && !keys[path] {
			keys[path] = true
			keyNeed += e.KeyBytes
		}
	}
	if free, ok := freeBytes(cacheDir); ok && keyNeed > free {
		refused.Keys = fmt.Sprintf("the proving keys to generate need %s in %s, which has %s free", units.FormatBytes(keyNeed), cacheDir, units.FormatBytes(free))
	}
	if len(refused.Refused) > 0 || refused.Keys != "" || len(errs) > 0 {
		errs = append(errs, refused)
	}
	return checks, errors.Join(errs...)
}

// NoEstimateBasis is the Basis of a Check that holds an exec
// configuration to nothing: its PeakRSS is 0, unknown.
const NoEstimateBasis = "an external prover: no estimate"

// BoundBasis is the Basis of a Check held to its strategy's bound.
const BoundBasis = "the strategy's bound"

// check finds the peak RSS a configuration is held to: the prediction when
// there is one (not below the floor), else the bound.
func check(s *Spec, e Estimate, predict Predictor) (Check, error) {
	one := e.Dataset
	c := Check{Name: s.Name, Source: s.Source, PeakRSS: e.PeakRSS, Basis: BoundBasis}
	c.Detail = fmt.Sprintf("key %s + %d datasets of %s, bounded by %s", units.FormatBytes(e.KeyBytes), e.Datasets, units.FormatBytes(one), e.Bound)
	bound := func(why string) string {
		return fmt.Sprintf("%s (%s): estimated peak RSS %s (%s%s)", s.Name, s.Source, units.FormatBytes(e.PeakRSS), c.Detail, why)
	}
	c.What = bound("")
	if predict == nil {
		return c, nil
	}
	peak, from, err := predict(s)
	if errors.Is(err, ErrNoPrediction) {
		why := NoPredictionReason(err)
		c.Basis, c.What = fmt.Sprintf("%s (%s)", BoundBasis, why), bound("; "+why)
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if floor := e.KeyBytes + one; peak < floor {
		c.PeakRSS, c.Basis = floor, "the floor of the key and one dataset"
		c.Detail = fmt.Sprintf("key %s + one dataset of %s; %s predicted only %s", units.FormatBytes(e.KeyBytes), units.FormatBytes(one), from, units.FormatBytes(peak))
		c.What = fmt.Sprintf("%s (%s): estimated peak RSS %s (%s)", s.Name, s.Source, units.FormatBytes(floor), c.Detail)
		return c, nil
	}
	c.PeakRSS, c.Basis, c.Detail = peak, from, "predicted"
	c.What = fmt.Sprintf("%s (%s): predicted peak RSS %s (%s)", s.Name, s.Source, units.FormatBytes(peak), from)
	return c, nil
}

// freeBytes is the space available to this user on the file system that
// holds dir (or its nearest existing parent).
func freeBytes(dir string) (int64, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st unix.Statfs_t
		if err := unix.Statfs(d, &st); err == nil {
			free := uint64(st.Bavail) * uint64(st.Bsize)
			return int64(min(free, math.MaxInt64)), true
		}
		if d == filepath.Dir(d) {
			return 0, false
		}
	}
}
