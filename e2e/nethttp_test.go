package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chatq links no HTTP server: net/http's (with its HTTP/2) costs every
// command's start-up 2.6% of its instructions (issue 24), so chatq metrics
// --listen has its own (internal/exporter/serve.go). No chatq package
// imports net/http, and the binary has none of its server. (net/http
// itself stays in the import graph: viper's afero imports it, for a file
// system over HTTP that chatq does not use, so the linker drops it.)
func TestNoHTTPServer(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/chatq-dev/chatq"}}{{.ImportPath}}: {{join .Imports " "}}{{end}}{{end}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
		for _, imp := range strings.Fields(imports) {
			if imp == "net/http" || strings.HasPrefix(imp, "net/http/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
	if testing.Short() {
		return
	}
	bin := filepath.Join(t.TempDir(), "chatq")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err = exec.Command("go", "tool", "nm", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		switch sym := f[len(f)-1]; {
		case strings.HasPrefix(sym, "net/http.(*Server)."), strings.HasPrefix(sym, "net/http.(*conn)."),
			strings.HasPrefix(sym, "net/http.(*http2Server)."), strings.HasPrefix(sym, "net/http.(*ServeMux)."):
			t.Errorf("the binary links net/http's server: %s", sym)
		}
	}
}
