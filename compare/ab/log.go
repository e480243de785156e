package ab

import "fmt"

// What ab says while it measures goes to Runner.Log in two kinds of line:
// lines that stay (a configuration measured one side at a time, a verdict
// not yet resolved) and progress (a side's warm process started, each
// pair's figures). On a terminal (Runner.Terminal) progress is one line
// redrawn in place, and a configuration's last pair stays, so that four
// configurations leave a few lines above the verdict rather than one a
// pair; in a log (CI) every line stays.

// logf writes a line that stays, after clearing a progress line redrawn
// in place.
func (r *Runner) logf(format string, args ...any) {
	if r.Log == nil {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	if r.redrawn {
		fmt.Fprint(r.Log, "\r\x1b[K")
		r.redrawn = false
	}
	fmt.Fprintf(r.Log, format+"\n", args...)
}

// progressf writes a progress line: on a terminal redrawn in place,
// elsewhere a line of its own.
func (r *Runner) progressf(format string, args ...any) {
	if r.Log == nil {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	if !r.Terminal {
		fmt.Fprintf(r.Log, format+"\n", args...)
		return
	}
	fmt.Fprintf(r.Log, "\r\x1b[K"+format, args...)
	r.redrawn = true
}

// keepProgress lets the progress line redrawn last stay: a
// configuration's last pair, or the run's.
func (r *Runner) keepProgress() {
	if r.Log == nil {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	if r.redrawn {
		fmt.Fprintln(r.Log)
		r.redrawn = false
	}
}
