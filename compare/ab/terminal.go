package ab

import (
	"fmt"
	"io"
	"time"
)

// ab's own lines on the command's output, around compare's verdict (the
// brief and the report, compare.Report's writers): what is compared, how
// long it took, and repetitions that failed. cmd/provebench wires them
// and prints nothing of its own; the lines written while measuring are
// Runner.Log's (log.go).

// describe is a side as the first line names it: its binary and scenario
// files.
func (s Side) describe() string {
	return fmt.Sprintf("%s %v", s.Exe, s.Files)
}

// PrintStart writes the first line: how many configurations, each side,
// and the folder the results go to.
func (r *Runner) PrintStart(w io.Writer, configs int) {
	fmt.Fprintf(w, "ab: %d configurations, base %s, new %s; results in %s\n", configs, r.Base.describe(), r.New.describe(), r.OutDir)
}

// PrintMeasured writes how long the measuring took, and the blank line
// before the verdict.
func PrintMeasured(w io.Writer, took time.Duration) {
	fmt.Fprintf(w, "measured in %s\n\n", took.Round(time.Second))
}

// ModesNote is the report's cost line saying how the base and the new side
// ran their repetitions (a process a repetition, or warm workers), with
// why when a side could not be kept warm; the modes are empty before
// RunUntil.
func (r *Runner) ModesNote() string {
	return fmt.Sprintf("base ran in %s, new in %s", r.modes[0], r.modes[1])
}

// PrintFailed heads a verdict that would have passed had no repetition
// failed: the comparison is no pass, and says so before the pairs that
// ran.
func PrintFailed(w io.Writer, failed int, dir string) {
	fmt.Fprintf(w, "FAILED: %d repetitions failed or crashed (see %s); the pairs that ran:\n\n", failed, dir)
}

// PrintFailedNote follows a verdict that did not pass anyway: how many
// repetitions failed besides.
func PrintFailedNote(w io.Writer, failed int, dir string) {
	fmt.Fprintf(w, "(%d repetitions failed or crashed: see %s)\n", failed, dir)
}
