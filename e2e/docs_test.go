package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestingDocExamples keeps docs/testing.md true: its txtar example is a
// script that examples/worker's CI test runs, and each paragraph of its Go
// examples is code that a test here or in examples/worker runs.
func TestTestingDocExamples(t *testing.T) {
	doc, err := os.ReadFile("docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob("examples/worker/testdata/script/*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	txtars := fencedBlocks(string(doc), "txtar")
	if len(txtars) == 0 {
		t.Fatal("docs/testing.md has no txtar example")
	}
	for _, block := range txtars {
		found := false
		for _, s := range scripts {
			b, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			found = found || string(b) == block
		}
		if !found {
			t.Errorf("docs/testing.md: this txtar example is none of %s:\n%s", strings.Join(scripts, ", "), block)
		}
	}

	var code []string
	for _, f := range []string{"e2e/main_test.go", "chatqtest/chatqtest_test.go", "examples/worker/worker_test.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code = append(code, trimLines(string(b)))
	}
	gos := fencedBlocks(string(doc), "go")
	if len(gos) < 3 {
		t.Fatalf("docs/testing.md has %d Go examples, want at least 3", len(gos))
	}
	for _, block := range gos {
		for _, para := range strings.Split(block, "\n\n") {
			want := trimLines(para)
			found := false
			for _, c := range code {
				found = found || strings.Contains(c, want)
			}
			if !found {
				t.Errorf("docs/testing.md: this Go example is in no test that runs:\n%s", para)
			}
		}
	}
}

// trimLines is s with each line trimmed, so that indentation does not count.
func trimLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return "\n" + strings.Join(lines, "\n") + "\n"
}
