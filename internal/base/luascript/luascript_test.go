package luascript

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestHashOnFirstUse(t *testing.T) {
	s := New("return ", "1")
	if s.s != nil {
		t.Fatal("source hashed before use")
	}
	if got, want := s.Hash(), redis.NewScript("return 1").Hash(); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
	if got, want := New("return 2").Hash(), redis.NewScript("return 2").Hash(); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}

// TestNewJoinsPartsInOrder: the text sent is the parts, preludes first,
// byte for byte (no separator added).
func TestNewJoinsPartsInOrder(t *testing.T) {
	if got, want := New(Permitted, "local a = 1\n", "return a\n").Source(), Permitted+"local a = 1\nreturn a\n"; got != want {
		t.Errorf("source %q, want %q", got, want)
	}
}

// TestNewCostsOneAllocation keeps a package-level script cheap at start-up:
// making one allocates the Script and nothing else (no closure, no slice,
// no hashing, no concatenation of its parts).
// sink keeps the scripts made on the heap, as a package-level var's are.
var sink *Script

func TestNewCostsOneAllocation(t *testing.T) {
	src := "return " + "1"
	if n := testing.AllocsPerRun(100, func() { sink = New(src) }); n > 1 {
		t.Errorf("New: %v allocations, want at most 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink = New(Permitted, "local x = 1\n", src) }); n > 1 {
		t.Errorf("New of three parts: %v allocations, want at most 1", n)
	}
}

// TestNoScriptHashedAtStart fails when a package of chatq's makes a
// go-redis Script in a package-level var: its SHA1 would be computed in the
// package's init, on every run of the binary, whatever the command (two
// merges brought six back, 4-5% of a `queue push`'s instructions).
func TestNoScriptHashedAtStart(t *testing.T) {
	root := filepath.Join("..", "..", "..") // the repository
	fset := token.NewFileSet()
	sawDelayq := false // the walk is from the repository's root, wherever this package moves
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		sawDelayq = sawDelayq || filepath.ToSlash(path) == "../../../pkg/delayq/delayq.go"
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				ast.Inspect(g, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewScript" {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "redis" {
							t.Errorf("%s: a package-level redis.NewScript: use luascript.New, which hashes on first use", fset.Position(sel.Pos()))
						}
					}
					return true
				})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawDelayq {
		t.Fatalf("the walk from %s did not reach pkg/delayq/delayq.go", root)
	}
}

// TestScriptsDeclareTheirKeys keeps the queue and chat scripts to the keys
// their caller declares (KEYS, or a variable holding one): none builds a
// key name with "..", which Dragonfly (by default), ElastiCache Serverless
// and some cluster proxies refuse. The sharded list builds its shard keys
// ({KEY}:<n>, in the slot of its declared keys): docs/compatibility.md says
// what that needs there.
func TestScriptsDeclareTheirKeys(t *testing.T) {
	call := regexp.MustCompile(`redis\.p?call\(\s*("[A-Za-z]+"|'[A-Za-z]+')\s*,\s*([^,)]*)`)
	for _, dir := range []string{"delayq", "chat"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "..", "pkg", dir, "*.lua"))
		if err != nil || len(files) == 0 {
			t.Fatalf("pkg/%s/*.lua: %v", dir, err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(src), "\n") {
				for _, m := range call.FindAllStringSubmatch(line, -1) {
					cmd, key := strings.ToUpper(strings.Trim(m[1], `"'`)), strings.TrimSpace(m[2])
					if cmd == "PUBLISH" || cmd == "TIME" {
						continue // a channel; no key
					}
					if strings.Contains(key, "..") || strings.HasPrefix(key, `"`) || strings.HasPrefix(key, "'") {
						t.Errorf("%s:%d: %s on a key the script builds: %s", f, i+1, cmd, key)
					}
				}
			}
		}
	}
}
