package results

import (
	"fmt"
	"io"
	"strings"
)

// The commands' one way of saying which files they wrote: every command
// that writes files ends its output with one of these, so that a script
// reads the paths the same way whichever command wrote them.

// PrintWritten writes "wrote:" and then each file on its own indented
// line (run, merge, simulate, report, history show).
func PrintWritten(w io.Writer, files []string) {
	fmt.Fprintln(w, "wrote:")
	for _, f := range files {
		fmt.Fprintln(w, "  "+f)
	}
}

// PrintWrittenLine writes, after a blank line, "wrote " and the files
// separated by commas (simulate's --search and --cross-validate, whose
// tables end in a blank-line-separated paragraph).
func PrintWrittenLine(w io.Writer, files []string) {
	fmt.Fprintf(w, "\nwrote %s\n", strings.Join(files, ", "))
}
