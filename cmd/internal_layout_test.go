package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exported returns the exported identifiers of the package in dir, without
// its tests: types, functions, methods of exported types, vars and consts.
func exported(t *testing.T, dir string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						out = append(out, d.Name.Name)
						continue
					}
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
						out = append(out, id.Name+"."+d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								out = append(out, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									out = append(out, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// No internal package exports more than 50 identifiers: what commands
// share (cmdutil), the connection (conn) and the terminal (iostreams) stay
// apart, and cmdutil does not grow back into all three.
func TestInternalPackageSize(t *testing.T) {
	const limit = 50
	dirs, err := filepath.Glob("../internal/*/*")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		names := exported(t, dir)
		seen[filepath.Base(dir)] = len(names)
		if len(names) > limit {
			t.Errorf("%s exports %d identifiers, more than %d: %s", strings.TrimPrefix(dir, "../"), len(names), limit, strings.Join(names, " "))
		}
	}
	for _, p := range []string{"cmdutil", "conn", "iostreams"} {
		if seen[p] == 0 {
			t.Errorf("internal/cli/%s: no exported identifiers found", p)
		}
	}
}

// The shared packages depend one way: cmdutil on conn, iostreams and
// clierr, conn on iostreams and clierr; none of them on cmd. clierr, the
// error kinds both conn and cmdutil use, is a leaf: it imports nothing of
// chatq.
func TestInternalImports(t *testing.T) {
	forbidden := map[string][]string{
		"cmdutil":   {"cmd"},
		"conn":      {"cmd", "internal/cli/cmdutil"},
		"iostreams": {"cmd", "internal/cli/cmdutil", "internal/cli/conn"},
		"clierr":    {"cmd", "internal", "pkg"},
	}
	for pkg, bad := range forbidden {
		for p := range imports(t, "../internal/cli/"+pkg) {
			for _, b := range bad {
				if p == module+b || strings.HasPrefix(p, module+b+"/") {
					t.Errorf("internal/cli/%s imports %s", pkg, p)
				}
			}
		}
	}
}

// The folders are the layers, bottom up: internal/base (what the packages
// stand on), pkg (the packages), internal/cli (what the commands stand
// on), cmd (the commands). A package imports only from its own layer and
// those below; internal/testkit is for tests (and the embedded servers of
// chatqtest), which no program code imports.
func TestLayers(t *testing.T) {
	layers := []string{"internal/base", "pkg", "internal/cli", "cmd"}
	layerOf := func(p string) int {
		rel := strings.TrimPrefix(p, module)
		for i := len(layers) - 1; i >= 0; i-- {
			if rel == layers[i] || strings.HasPrefix(rel, layers[i]+"/") {
				return i
			}
		}
		return -1
	}
	for i, l := range layers {
		err := filepath.WalkDir("../"+l, func(dir string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() || d.Name() == "testdata" {
				if d != nil && d.IsDir() && d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return err
			}
			for p := range imports(t, dir) {
				if !strings.HasPrefix(p, module) {
					continue
				}
				if strings.HasPrefix(p, module+"internal/testkit") {
					t.Errorf("%s imports %s, which is for tests", strings.TrimPrefix(dir, "../"), p)
				}
				if j := layerOf(p); j > i {
					t.Errorf("%s (layer %s) imports %s, a layer above it", strings.TrimPrefix(dir, "../"), l, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
