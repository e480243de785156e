package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/provebench/provebench/results"
)

// module is the import path of this repository's root.
const module = "github.com/provebench/provebench/"

// imports maps each package folder of the repository (relative, with
// slashes) to the imports of its non-test files, whatever their build tags.
func imports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range sources(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.ToSlash(rel)
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out[pkg][p] = true
		}
	}
	// Rules checked over no package would pass: the walk must have found
	// the module's own.
	for _, pkg := range []string{"cmd/provebench", "pipeline", "results", "internal/stats"} {
		if out[pkg] == nil {
			t.Fatalf("the walk from .. found no package %s (%d packages)", pkg, len(out))
		}
	}
	return out
}

// under reports whether pkg is dir or a package below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestNoTestingOutsideTests: only test files import testing, so no binary
// links testing's flags and helpers (architecture.md, "Rules").
func TestNoTestingOutsideTests(t *testing.T) {
	for pkg, ims := range imports(t) {
		if ims["testing"] {
			t.Errorf("%s: a non-test file imports testing", pkg)
		}
	}
}

// TestLayers checks the direction of the arrows in architecture.md:
// scenarios -> spec -> the configuration's leaves (pipeline/config,
// sim/model, gpu/shape, gpu/catalog) and run -> spec, the loader linking
// no runner, the exec driver (run/exec) linking no backend and the
// sampling packages beneath both drivers, run, predict, compare and
// history never importing each other (compare imports no part of run),
// results read by all and reading only internal/, reports reading results
// only, internal/ holding leaves.
func TestLayers(t *testing.T) {
	// forbidden lists, for packages under a folder, the folders of this
	// module they must not import.
	forbidden := []struct {
		pkg  string
		not  []string
		only []string // when set: the only folders of this module allowed
	}{
		{pkg: "gpu", not: []string{"spec", "pipeline", "sim", "run", "results", "predict", "compare", "history", "scenarios", "reports", "cmd"}},
		{pkg: "pipeline", not: []string{"spec", "sim", "run", "results", "predict", "compare", "history", "scenarios", "reports", "cmd"}},
		{pkg: "sim", not: []string{"spec", "run", "results", "predict", "compare", "history", "scenarios", "reports", "cmd"}},
		// the configuration's leaves link no prover and no engine
		{pkg: "gpu/catalog", only: []string{"gpu/catalog"}},
		{pkg: "gpu/shape", only: []string{"gpu/shape"}},
		{pkg: "pipeline/config", only: []string{"pipeline/config", "gpu/shape", "internal"}},
		{pkg: "sim/model", only: []string{"sim/model", "internal"}},
		{pkg: "spec", only: []string{"spec", "pipeline/config", "sim/model", "gpu/shape", "internal"}},
		// the document is read by everyone and reads nobody's code
		{pkg: "results", only: []string{"results", "internal"}},
		// the runner measures; it neither predicts nor judges
		{pkg: "run", not: []string{"predict", "compare", "history", "scenarios", "reports", "cmd"}},
		// the exec driver runs another program's prover: it links none of ours
		{pkg: "run/exec", not: []string{"run/shard", "gpu/backends", "gpu/cpu", "gpu/cuda"}},
		// the sampling loop, the probes and the event readers serve both
		// drivers and know neither
		{pkg: "run/supervise", not: []string{"run/exec", "run/shard", "run/events"}},
		{pkg: "run/sample", not: []string{"run/exec", "run/shard", "run/events", "run/supervise"}},
		{pkg: "run/events", not: []string{"run/exec", "run/shard", "run/sample", "run/supervise"}},
		{pkg: "predict", not: []string{"run", "compare", "history", "scenarios", "reports", "cmd"}},
		// the judge reads documents: it measures nothing and links no prover
		// (backend facts from gpu/catalog; ab's host load is handed in)
		{pkg: "compare", only: []string{"compare", "results", "gpu/catalog", "internal"}},
		{pkg: "history", not: []string{"run", "predict", "compare", "scenarios", "reports", "cmd"}},
		// the loader reads run/events' rule syntax, nothing else of the runner
		{pkg: "scenarios", only: []string{"scenarios", "spec", "pipeline/config", "sim/model", "gpu/shape", "gpu/catalog", "run/events", "internal"}},
		{pkg: "reports", only: []string{"results", "internal", "reports", "gpu/catalog"}},
		// internal/ holds leaves: helpers that import nothing of this module
		{pkg: "internal", only: []string{"internal"}},
	}
	for pkg, ims := range imports(t) {
		for _, rule := range forbidden {
			if !under(pkg, rule.pkg) {
				continue
			}
			for im := range ims {
				dep, ok := strings.CutPrefix(im, module)
				if !ok {
					continue
				}
				for _, not := range rule.not {
					if under(dep, not) {
						t.Errorf("%s imports %s: %s must not depend on %s", pkg, dep, rule.pkg, not)
					}
				}
				if rule.only == nil {
					continue
				}
				allowed := false
				for _, o := range rule.only {
					allowed = allowed || under(dep, o)
				}
				if !allowed {
					t.Errorf("%s imports %s: %s reads only %s", pkg, dep, rule.pkg, strings.Join(rule.only, ", "))
				}
			}
		}
	}
}

// leaves are the packages that must link no prover: what a configuration
// is, the scenario loader, the judges and the reports
// (architecture.md, "Rules").
var leaves = []string{"./spec", "./scenarios", "./compare/...", "./reports/..."}

// TestLeavesLinkNoProver: go list -deps of the leaves lists no gnark-crypto
// package and no backend (gpu/cpu, gpu/cuda), with every build tag a
// binary may carry. TestLayers checks what a package imports; this checks
// everything it links, so an import through a package that looks harmless
// (pipeline for its Config, gpu/backends for a name) is caught too.
func TestLeavesLinkNoProver(t *testing.T) {
	for _, tags := range []string{"", "cuda"} {
		args := append([]string{"list", "-deps", "-tags", tags}, leaves...)
		cmd := exec.Command("go", args...)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"spec") || !slices.Contains(deps, module+"compare/ab") {
			t.Fatalf("go list -deps %s (tags %q) lists neither spec nor compare/ab: not the module's packages", strings.Join(leaves, " "), tags)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/consensys/gnark-crypto") || d == module+"gpu/cpu" || d == module+"gpu/cuda" ||
				strings.HasPrefix(d, "github.com/ingonyama-zk/") {
				t.Errorf("tags %q: the leaves (%s) link %s: a prover", tags, strings.Join(leaves, " "), d)
			}
		}
	}
}

// TestNoAncestorImports: a package never imports the package of a folder
// above it (architecture.md, "Rules"): what a parent and its children
// share lives beside them (spec/, sim/, gpu/prover).
func TestNoAncestorImports(t *testing.T) {
	for pkg, ims := range imports(t) {
		for im := range ims {
			dep, ok := strings.CutPrefix(im, module)
			if ok && strings.HasPrefix(pkg, dep+"/") {
				t.Errorf("%s imports %s, the package of a folder above it", pkg, dep)
			}
			if ok && under(pkg, "scenarios") && dep == "run" {
				t.Errorf("%s imports the runner (run): the loader must not link it", pkg)
			}
		}
	}
}

// TestOneMedian: order statistics are written once, in internal/stats
// (architecture.md, "Rules"); a function of that name elsewhere is a copy,
// and so is an element picked by a rank computed from a length.
func TestOneMedian(t *testing.T) {
	copies := map[string]bool{"median": true, "mediansorted": true, "percentile": true, "nearestrank": true, "quantile": true}
	fset := token.NewFileSet()
	parsed := 0
	for _, path := range sources(t) {
		if filepath.ToSlash(filepath.Dir(path)) == "../internal/stats" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed++
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && copies[strings.ToLower(fn.Name.Name)] {
				t.Errorf("%s: func %s: use internal/stats", fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ix, ok := n.(*ast.IndexExpr); ok && isRankIndex(ix.Index) {
				t.Errorf("%s: an element picked by its rank in len() (a median or percentile written inline): use internal/stats", fset.Position(ix.Pos()))
			}
			return true
		})
	}
	if parsed < 100 {
		t.Fatalf("%d Go files looked at from ..: not the module", parsed)
	}
}

// isRankIndex reports whether an index computes a rank from a length: a
// len() scaled by a fraction, a division or a rounding (v[len(v)/2],
// v[int(math.Ceil(0.9*float64(len(v))))-1]), which is an order statistic
// written inline.
func isRankIndex(index ast.Expr) bool {
	hasLen, scaled := false, false
	ast.Inspect(index, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "len" {
				hasLen = true
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "math" && (sel.Sel.Name == "Ceil" || sel.Sel.Name == "Floor" || sel.Sel.Name == "Round") {
					scaled = true
				}
			}
		case *ast.BasicLit:
			scaled = scaled || n.Kind == token.FLOAT
		case *ast.BinaryExpr:
			scaled = scaled || n.Op == token.QUO
		}
		return true
	})
	return hasLen && scaled
}

// TestOneMetricTable: a metric is defined once, in the metric table
// (results/metrics.go), and every reader takes it from there
// (architecture.md, "A probe"). A string literal equal to a metric's name
// anywhere else in non-test code is a second definition in the making: a
// reader should name the metric by its constant (results.SecondsPerProof)
// and read its unit, direction and figure from the table, and a flag that
// takes a metric's name looks it up there (results.MetricNamed), which
// needs no literal either; nor does a second spelling of a name ("peak_rss"
// for peak_rss_bytes), which would be a second list of metrics. Struct tags
// are the document's JSON names, not literals, and are not counted.
func TestOneMetricTable(t *testing.T) {
	names := map[string]bool{}
	for _, m := range results.Metrics() {
		names[m.Name] = true
	}
	if len(names) == 0 {
		t.Fatal("the metric table is empty")
	}
	inTable := map[string]bool{} // names seen in the table's own files
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() && path != ".." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module (peers/gnark): not a reader of the table
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		table := filepath.ToSlash(filepath.Dir(path)) == "../results" && strings.HasPrefix(filepath.Base(path), "metrics")
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if n.Tag != nil {
					tags[n.Tag] = true
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING || tags[n] {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				if other := spelledOtherwise(s, names); other != "" && !table && !knownSpelling[rel(path)+" "+s] {
					t.Errorf("%s: %q is metric %s spelled another way: a second list of metrics; name it by its constant in results", fset.Position(n.Pos()), s, other)
				}
				if !names[s] {
					return true
				}
				if table {
					inTable[s] = true
				} else {
					t.Errorf("%s: %q is a metric's name: use its constant in results and read the metric from the table", fset.Position(n.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must see the table itself, or it would see nothing anywhere.
	for name := range names {
		if !inTable[name] {
			t.Errorf("metric %s: its name not found in results/metrics*.go: the walk missed the table", name)
		}
	}
}

// knownSpelling are second spellings kept on purpose, each with why: the
// test catches any other.
var knownSpelling = map[string]bool{
	// cross-validation's peak RSS: the committed cross-validations
	// (docs/results/h200-validation) were written with it, and
	// predict's TestH200CrossValidation recomputes them byte for byte.
	"predict/crossval.go peak_rss": true,
}

// rel is path (from the walk at ..) relative to the repository, with
// slashes.
func rel(path string) string {
	r, err := filepath.Rel("..", path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// spelledOtherwise is the metric of the table that s names another way
// (its name cut before its unit, "peak_rss" for peak_rss_bytes: a reader's
// own list of metrics), or "". A single word ("peak") is too common to
// count.
func spelledOtherwise(s string, names map[string]bool) string {
	if !strings.Contains(s, "_") || names[s] {
		return ""
	}
	for name := range names {
		if strings.HasPrefix(name, s+"_") {
			return name
		}
	}
	return ""
}

// sources lists the repository's tracked-or-not Go files outside tests,
// testdata, hidden folders (ICICLE's build, the carried backend) and out/,
// peers/gnark's module included: what a reader of this repository reads.
func sources(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("%d Go files found from ..: not the repository", len(files))
	}
	return files
}

// maxFuncLines is the longest function a reader is asked to hold, from its
// func line to its closing brace (issue 31). Its twin, cyclomatic
// complexity at most 20, is gocyclo's to check (make funcs).
const maxFuncLines = 80

// TestFunctionsFitInMind: no function or method outside tests is longer
// than maxFuncLines; a longer one is split into named steps.
func TestFunctionsFitInMind(t *testing.T) {
	fset := token.NewFileSet()
	funcs := 0
	for _, path := range sources(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			funcs++
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: func %s is %d lines, more than %d: split it into named steps", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
			}
		}
	}
	if funcs < 1000 {
		t.Fatalf("%d functions looked at: not the repository", funcs)
	}
}

// TestNoFolderHoldsTheHouse: no top-level folder holds more than a quarter
// of the non-test Go lines (issue 31): past that, one name stands for
// several jobs, as bench/ did at 36%.
func TestNoFolderHoldsTheHouse(t *testing.T) {
	lines := map[string]int{}
	total := 0
	for _, path := range sources(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			t.Fatal(err)
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		n := strings.Count(string(b), "\n")
		lines[top] += n
		total += n
	}
	if total == 0 || len(lines) < 5 {
		t.Fatalf("%d lines in %d folders: not the repository", total, len(lines))
	}
	for top, n := range lines {
		if share := float64(n) / float64(total); share > 0.25 {
			t.Errorf("%s/ holds %d of %d non-test Go lines (%.0f%%), more than 25%%: give its jobs folders of their own", top, n, total, 100*share)
		}
	}
}

// TestNoSharedNameStems: no package folder's name begins another's (issue
// 31): sim/ beside bench/simulate read as two simulations, and run/ beside
// a runner/ or report/ beside reports/ would again.
func TestNoSharedNameStems(t *testing.T) {
	names := map[string]string{} // folder name -> a package folder of that name
	for pkg := range imports(t) {
		names[filepath.Base(pkg)] = pkg
	}
	for a, pa := range names {
		for b, pb := range names {
			if a != b && len(a) >= 3 && strings.HasPrefix(b, a) {
				t.Errorf("%s and %s: the name %q begins %q; name each folder for its own job", pa, pb, a, b)
			}
		}
	}
}
