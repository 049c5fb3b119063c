package luascript

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestHashOnFirstUse(t *testing.T) {
	built := 0
	s := Build(func() string { built++; return "return " + "1" })
	if built != 0 {
		t.Fatal("source built before use")
	}
	if got, want := s.Hash(), redis.NewScript("return 1").Hash(); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
	s.Hash()
	if built != 1 {
		t.Errorf("source built %d times, want 1", built)
	}
	if got, want := New("return 2").Hash(), redis.NewScript("return 2").Hash(); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}

// TestNoScriptHashedAtStart fails when a package of chatq's makes a
// go-redis Script outside a function: its SHA1 would be computed in the
// package's init, on every run of the binary, whatever the command (two
// merges brought six back, 8% of a `queue push`'s instructions).
func TestNoScriptHashedAtStart(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, "= redis.NewScript(") && !strings.HasPrefix(line, "\t\t") && !strings.Contains(path, "luascript") {
				t.Errorf("%s:%d: %s: use luascript.New, which hashes on first use", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
