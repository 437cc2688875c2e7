// Command codemetrics prints the code-shape figures of issue 28 for the Go
// files of a module: the number of functions, their median length in lines,
// the share whose cyclomatic complexity exceeds 15, the functions above 30,
// and the structs with the most fields.
//
//	go run ./scripts/codemetrics [-tests] [-top N] [dir]
//
// Cyclomatic complexity is counted as gocyclo counts it: 1, plus one for
// each if, for, range, case and select case (default excepted), and each
// && and ||. Function length is from the func line to the closing brace.
// Test files are left out unless -tests is given. Below dir, bench/ (a
// separate module) and testdata/ are always left out; measure the bench
// module by naming it: go run ./scripts/codemetrics bench/memberlist.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type fn struct {
	name       string
	pos        string
	lines, cyc int
}

type st struct {
	name   string
	pos    string
	fields int
}

func main() {
	tests := flag.Bool("tests", false, "include _test.go files")
	top := flag.Int("top", 8, "how many of the most complex functions and largest structs to list")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	fns, sts, err := scan(root, *tests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemetrics:", err)
		os.Exit(1)
	}
	report(fns, sts, *top)
}

func scan(root string, tests bool) ([]fn, []st, error) {
	var fns []fn
	var sts []st
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "bench" || n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				fns = append(fns, fn{name: funcName(f, d), pos: fset.Position(d.Pos()).String(),
					lines: fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1, cyc: complexity(d)})
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if s, ok := ts.Type.(*ast.StructType); ok {
						n := 0
						for _, fl := range s.Fields.List {
							n += max(1, len(fl.Names))
						}
						sts = append(sts, st{name: f.Name.Name + "." + ts.Name.Name, pos: fset.Position(ts.Pos()).String(), fields: n})
					}
				}
			}
		}
		return nil
	})
	return fns, sts, err
}

func funcName(f *ast.File, d *ast.FuncDecl) string {
	name := f.Name.Name + "."
	if d.Recv != nil && len(d.Recv.List) > 0 {
		t := d.Recv.List[0].Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		if ix, ok := t.(*ast.IndexExpr); ok {
			t = ix.X
		}
		if id, ok := t.(*ast.Ident); ok {
			name += "(" + id.Name + ")."
		}
	}
	return name + d.Name.Name
}

// complexity is gocyclo's cyclomatic complexity of one function.
func complexity(d *ast.FuncDecl) int {
	c := 1
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

func report(fns []fn, sts []st, top int) {
	if len(fns) == 0 {
		fmt.Println("no functions")
		return
	}
	lens := make([]int, len(fns))
	over15, over30 := 0, 0
	for i, f := range fns {
		lens[i] = f.lines
		if f.cyc > 15 {
			over15++
		}
		if f.cyc > 30 {
			over30++
		}
	}
	slices.Sort(lens)
	fmt.Printf("functions: %d\n", len(fns))
	fmt.Printf("median function length (lines): %d\n", lens[len(lens)/2])
	fmt.Printf("functions with cyclomatic complexity > 15: %.1f %%\n", 100*float64(over15)/float64(len(fns)))
	fmt.Printf("functions with complexity > 30: %d\n", over30)
	slices.SortFunc(fns, func(a, b fn) int { return b.cyc - a.cyc })
	for _, f := range fns[:min(top, len(fns))] {
		fmt.Printf("  %3d  %s  %s\n", f.cyc, f.name, f.pos)
	}
	slices.SortFunc(sts, func(a, b st) int { return b.fields - a.fields })
	fmt.Printf("largest structs (fields):\n")
	for _, s := range sts[:min(top, len(sts))] {
		fmt.Printf("  %3d  %s  %s\n", s.fields, s.name, s.pos)
	}
}
