package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wiringMayPrint are the functions of cmd/provebench allowed to write text
// of their own, and why: each is the process's, not a subject's, so no
// package below owns it.
var wiringMayPrint = map[string]string{
	// The top-level error handler: an error's one line on stderr, as the
	// exit status's companion (issue 40 leaves it here).
	"execute": "the top-level error line",
	// The signal handler: what the process does at Ctrl-C, said once.
	"onInterrupt": "the interrupt lines",
}

// TestWiringPrintsNothingOfItsOwn: cmd/provebench wires commands and
// prints nothing of its own (issue 40): every output format lives in the
// package of its subject (history/present, predict, compare/ab, reports,
// results, run, ...), which the wiring calls with a writer. The check
// reads the package's non-test files and fails on any text written from
// here outside wiringMayPrint: a call of fmt's Print*/Fprint*, of
// io.WriteString, or of a Write/WriteString method given a string literal
// or an fmt.Sprint* of its own.
func TestWiringPrintsNothingOfItsOwn(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 10 {
		t.Fatalf("%d Go files in cmd/provebench: not the package's folder", len(paths))
	}
	fset := token.NewFileSet()
	var found []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := printsOfItsOwn(fset, p, src)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, got...)
	}
	for _, f := range found {
		t.Errorf("%s: cmd/provebench writes output text of its own; move it to the package that owns the output and call that with the writer", f)
	}
}

// The check can fail: each of the ways text was written from here before
// issue 40 is found, and the allowed functions are not.
func TestWiringCheckFindsPrinters(t *testing.T) {
	src := `package main

import (
	f "fmt"
	"io"
	"os"
)

func printChanges(w io.Writer, n int) {
	f.Fprintf(w, "%d change points\n", n)
	f.Println("done")
	io.WriteString(w, "wrote:\n")
	w.Write([]byte(f.Sprintf("%d\n", n)))
	os.Stdout.WriteString("x")
	func() { f.Fprintln(os.Stderr, "warning") }()
}

func wire(w io.Writer, b []byte) error {
	_, err := w.Write(b) // a package's bytes, written as they are
	return f.Errorf("bad input: %d", len(b))
}

func execute(err error) { f.Fprintln(os.Stderr, "provebench:", err) }
`
	got, lines := printLines(t, src)
	if want := []int{10, 11, 12, 13, 14, 15}; !slices.Equal(lines, want) {
		t.Errorf("found at lines %v, want %v:\n%s", lines, want, strings.Join(got, "\n"))
	}
}

// The check finds the other ways Go and cobra write text: a command's
// Println/Printf/PrintErrln, log's Printf, the builtin println; a
// subject's Print method handed the writer and its data is not text made
// here.
func TestWiringCheckFindsCobraAndLogPrinters(t *testing.T) {
	src := `package main

import (
	"io"
	"log"

	"github.com/spf13/cobra"
)

func wire(c *cobra.Command, w io.Writer, r report) {
	c.Println("done")
	c.Printf("%d runs\n", 3)
	c.PrintErrln("warning: none")
	log.Printf("wrote %s", "x")
	println("x")
	r.Print(w, c.Name())
}
`
	got, lines := printLines(t, src)
	if want := []int{11, 12, 13, 14, 15}; !slices.Equal(lines, want) {
		t.Errorf("found at lines %v, want %v:\n%s", lines, want, strings.Join(got, "\n"))
	}
}

// printsOfItsOwn parses one file and returns "file:line: call" for each
// call writing text outside the functions of wiringMayPrint.
func printsOfItsOwn(fset *token.FileSet, name string, src []byte) ([]string, error) {
	file, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]string{} // local name -> import path
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		pkgs[local] = path
	}
	var found []string
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && wiringMayPrint[fn.Name.Name] != "" {
			continue
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if ok && writesText(call, pkgs) {
				found = append(found, fset.Position(call.Pos()).String()+": "+callName(call))
			}
			return true
		})
	}
	return found, nil
}

// writesText says whether call writes text: fmt's Print*/Fprint*,
// io.WriteString, log's Print*/Fatal*/Panic*, the builtins print and
// println, or a method given text made here that writes it: Write,
// WriteString, or cobra's Print, Println, Printf and PrintErr* (a
// subject's own Print method, handed the writer and its data, is not
// given text made here).
func writesText(call *ast.CallExpr, pkgs map[string]string) bool {
	if id, ok := call.Fun.(*ast.Ident); ok {
		return id.Name == "print" || id.Name == "println"
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if pkg, ok := sel.X.(*ast.Ident); ok && pkgs[pkg.Name] != "" {
		switch pkgs[pkg.Name] {
		case "fmt":
			return strings.HasPrefix(sel.Sel.Name, "Print") || strings.HasPrefix(sel.Sel.Name, "Fprint")
		case "io":
			return sel.Sel.Name == "WriteString"
		case "log":
			return strings.HasPrefix(sel.Sel.Name, "Print") || strings.HasPrefix(sel.Sel.Name, "Fatal") || strings.HasPrefix(sel.Sel.Name, "Panic")
		}
		return false
	}
	switch sel.Sel.Name {
	case "Write", "WriteString", "Print", "Println", "Printf", "PrintErr", "PrintErrln", "PrintErrf":
	default:
		return false
	}
	madeHere := false
	for _, arg := range call.Args {
		ast.Inspect(arg, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				madeHere = madeHere || n.Kind == token.STRING
			case *ast.SelectorExpr:
				if pkg, ok := n.X.(*ast.Ident); ok && pkgs[pkg.Name] == "fmt" && strings.HasPrefix(n.Sel.Name, "Sprint") {
					madeHere = true
				}
			}
			return !madeHere
		})
	}
	return madeHere
}

// callName is the called function as written, e.g. fmt.Fprintf.
func callName(call *ast.CallExpr) string {
	if id, ok := call.Fun.(*ast.Ident); ok {
		return id.Name
	}
	sel := call.Fun.(*ast.SelectorExpr)
	if x, ok := sel.X.(*ast.Ident); ok {
		return x.Name + "." + sel.Sel.Name
	}
	return "(...)." + sel.Sel.Name
}

// printLines is what printsOfItsOwn finds in src, and the line of each.
func printLines(t *testing.T, src string) (got []string, lines []int) {
	t.Helper()
	got, err := printsOfItsOwn(token.NewFileSet(), "old.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		_, pos, _ := strings.Cut(g, ":")
		n, _ := strconv.Atoi(strings.SplitN(pos, ":", 2)[0])
		lines = append(lines, n)
	}
	return got, lines
}
