package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/provebench/provebench/bench"
)

// Embedded holds the scenario files shipped with provebench.
//
//go:embed *.yaml
var Embedded embed.FS

// embeddedDir is where the embedded files live in the repository; their
// specs' Source and errors name them by it.
const embeddedDir = "scenarios"

// Load reads scenario files and returns every configuration they define,
// in file order. Names must be unique across all the files. On any problem
// it returns nil and an Errors listing every problem found in every file.
func Load(paths ...string) ([]bench.Spec, error) {
	if len(paths) == 0 {
		return nil, errors.New("scenarios: no files to load")
	}
	var l loader
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			l.files = append(l.files, p)
			l.errs.add(&Error{File: p, Msg: fmt.Sprintf("cannot read: %v", err)})
			continue
		}
		l.add(p, data)
	}
	return l.result()
}

// LoadBytes reads one scenario document; name is the file name its errors
// and specs' Source report.
func LoadBytes(name string, data []byte) ([]bench.Spec, error) {
	var l loader
	l.add(name, data)
	return l.result()
}

// LoadEmbedded loads one of the embedded scenario files by name, with or
// without its .yaml extension: "quickstart" or "quickstart.yaml".
func LoadEmbedded(name string) ([]bench.Spec, error) {
	file := strings.TrimSuffix(name, ".yaml") + ".yaml"
	data, err := Embedded.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("scenarios: no embedded scenario file %q (have %s)", name, strings.Join(EmbeddedNames(), ", "))
	}
	return LoadBytes(path.Join(embeddedDir, file), data)
}

// EmbeddedNames lists the embedded scenario files, without extension, in
// name order.
func EmbeddedNames() []string {
	entries, err := Embedded.ReadDir(".")
	if err != nil {
		panic(fmt.Sprintf("scenarios: reading the embedded files: %v", err)) // embed.FS cannot fail here
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// loader accumulates the specs and problems of one load of one or more
// files.
type loader struct {
	errs  errorList
	files []string
	specs []bench.Spec
	names map[string]string // scenario name -> where it was defined
}

func (l *loader) add(file string, data []byte) {
	l.files = append(l.files, file)
	p := &parser{file: file, errs: &l.errs}
	doc := p.parse(data)
	if doc == nil {
		return
	}
	if l.names == nil {
		l.names = make(map[string]string)
	}
	for _, pt := range expand(doc) {
		s := p.spec(pt)
		if pt.name == "" || strings.HasPrefix(pt.name, "/") {
			continue // unnamed: already reported
		}
		if first, dup := l.names[s.Name]; dup {
			p.errorf(pt.nameNode, pt.path+".name", "duplicate scenario name %s (first at %s)", s.Name, first)
			continue
		}
		l.names[s.Name] = s.Source
		l.specs = append(l.specs, s)
	}
}

func (l *loader) result() ([]bench.Spec, error) {
	if len(l.errs.errs) > 0 {
		return nil, l.errs.sorted(l.files)
	}
	return l.specs, nil
}
