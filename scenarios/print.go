package scenarios

import (
	"fmt"
	"io"

	"github.com/provebench/provebench/internal/units"
	"github.com/provebench/provebench/spec"
)

// PrintValid writes what validate prints of files with no problem: each
// configuration they define, with where it was written, and the count.
func PrintValid(w io.Writer, specs []spec.Spec) {
	for _, s := range specs {
		fmt.Fprintf(w, "%-56s %s\n", s.Name, s.Source)
	}
	fmt.Fprintf(w, "%s, no problems\n", units.Plural(len(specs), "configuration"))
}
