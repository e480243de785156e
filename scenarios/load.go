package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/provebench/provebench/internal/openfile"
	"github.com/provebench/provebench/spec"
)

// Embedded holds the scenario files shipped with provebench.
//
//go:embed *.yaml
var Embedded embed.FS

// embeddedDir is where the embedded files live in the repository; their
// specs' Source and errors name them by it.
const embeddedDir = "scenarios"

// Load reads scenario files and returns every configuration they define,
// in file order. Names are scoped by file: they must be unique within a
// file, and a name that several files define is qualified by its file as
// FILE:NAME (ci:release, quickstart:release), so the files run together
// and their results stay apart. On any problem it returns nil and an Errors
// listing every problem found in every file.
func Load(paths ...string) ([]spec.Spec, error) {
	if len(paths) == 0 {
		return nil, errors.New("scenarios: no files to load")
	}
	var l loader
	given := make(map[string]bool)
	for _, p := range paths {
		if given[filepath.Clean(p)] {
			l.errs.add(&Error{File: p, Msg: "given twice: every configuration would run twice under one name"})
			continue
		}
		given[filepath.Clean(p)] = true
		data, err := openfile.ReadFile(p)
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
func LoadBytes(name string, data []byte) ([]spec.Spec, error) {
	var l loader
	l.add(name, data)
	return l.result()
}

// LoadEmbedded loads one of the embedded scenario files by name, with or
// without its .yaml extension: "quickstart" or "quickstart.yaml".
func LoadEmbedded(name string) ([]spec.Spec, error) {
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
	errs    errorList
	configs configCount
	files   []string
	specs   []spec.Spec
}

func (l *loader) add(file string, data []byte) {
	l.files = append(l.files, file)
	p := &parser{file: file, errs: &l.errs, configs: &l.configs}
	doc := p.parse(data)
	if doc == nil || l.configs.over {
		return // past the configuration cap, nothing is expanded
	}
	names := make(map[string]string) // scenario name -> where in this file
	for _, pt := range expand(doc) {
		s := p.spec(pt)
		p.idle.note(pt, &s)
		if pt.name == "" || strings.HasPrefix(pt.name, "/") {
			continue // unnamed: already reported
		}
		if first, dup := names[s.Name]; dup {
			p.errorf(pt.nameNode, pt.path+".name", "duplicate scenario name %s (first at %s)", s.Name, first)
			continue
		}
		names[s.Name] = s.Source
		s.File = fileScope(file)
		l.specs = append(l.specs, s)
	}
	p.idle.report(p)
}

func (l *loader) result() ([]spec.Spec, error) {
	if len(l.errs.errs) > 0 {
		return nil, l.errs.sorted(l.files)
	}
	qualifyShared(l.specs)
	return l.specs, nil
}

// fileScope is the name a file's scenarios are scoped by: its base name
// without the extension (scenarios/ci.yaml: ci).
func fileScope(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// qualifyShared prefixes the names that more than one file defines with
// their file's scope (FILE:NAME; ':' cannot appear in a written name, so a
// qualified name never meets a written one). Names defined once stay as
// written, so a run of one file names its results as before. Two files of
// the same base name in different folders are told apart by their paths.
func qualifyShared(specs []spec.Spec) {
	files := make(map[string]map[string]bool)  // name -> the files defining it
	scopes := make(map[string]map[string]bool) // scope -> the files it names
	for _, s := range specs {
		file := sourceFile(s.Source)
		if files[s.Name] == nil {
			files[s.Name] = make(map[string]bool)
		}
		files[s.Name][file] = true
		if scopes[s.File] == nil {
			scopes[s.File] = make(map[string]bool)
		}
		scopes[s.File][file] = true
	}
	for i := range specs {
		s := &specs[i]
		if len(files[s.Name]) < 2 {
			continue
		}
		if len(scopes[s.File]) > 1 {
			s.File = sourceFile(s.Source)
		}
		s.Name = s.File + ":" + s.Name
	}
}

// sourceFile is the file part of a spec's Source (file:line).
func sourceFile(source string) string {
	if i := strings.LastIndexByte(source, ':'); i >= 0 {
		return source[:i]
	}
	return source
}
