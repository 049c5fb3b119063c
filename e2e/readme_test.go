package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestREADMEExamples runs every chatq command line in README.md's sh blocks,
// in order, against an embedded server (or the real one), and loads every
// yaml block as a config file, so the examples cannot rot. A line runs when it starts with `chatq` or pipes into chatq;
// `chatq dev` is skipped (the test provides the server). A trailing
// `# exits N` sets the expected exit code; `# not run` skips a line.
func TestREADMEExamples(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := readmeExamples(string(readme))
	if len(lines) < 20 {
		t.Fatalf("found only %d runnable examples in README.md", len(lines))
	}
	var script strings.Builder
	for _, l := range lines {
		script.WriteString("exitcode " + l.exit + " sh -c " + quoteScriptArg(l.cmd) + "\n")
	}
	// Each yaml block is a config file example: chatq must accept it.
	configs := fencedBlocks(string(readme), "yaml")
	if len(configs) == 0 {
		t.Fatal("README.md has no yaml config example")
	}
	for i := range configs {
		script.WriteString(fmt.Sprintf("exitcode 0 chatq --config config%d.yaml config\n", i))
	}
	dir := t.TempDir()
	for i, c := range configs {
		script.WriteString(fmt.Sprintf("-- config%d.yaml --\n%s", i, c))
	}
	if err := os.WriteFile(filepath.Join(dir, "readme.txtar"), []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, chatqtest.Params(dir))
}

type example struct{ cmd, exit string }

// fencedBlocks returns the contents of the md code blocks fenced as lang.
func fencedBlocks(md, lang string) []string {
	var out []string
	var cur *strings.Builder
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return out
}

var exitsRe = regexp.MustCompile(`\s+#\s*exits\s+(\d+)\s*$`)

func readmeExamples(md string) []example {
	var out []example
	inSh := false
	var cont string
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(trimmed, "```"):
			inSh = false
			continue
		}
		if !inSh {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			cont += strings.TrimSuffix(trimmed, `\`) + " "
			continue
		}
		cmd := cont + trimmed
		cont = ""
		if strings.Contains(cmd, "# not run") || strings.HasPrefix(cmd, "chatq dev") {
			continue
		}
		if !strings.HasPrefix(cmd, "chatq ") && !strings.Contains(cmd, "| chatq ") {
			continue
		}
		exit := "0"
		if m := exitsRe.FindStringSubmatch(cmd); m != nil {
			exit = m[1]
			cmd = strings.TrimSpace(cmd[:len(cmd)-len(m[0])])
		}
		out = append(out, example{cmd: cmd, exit: exit})
	}
	return out
}

// quoteScriptArg quotes s as one testscript argument.
func quoteScriptArg(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
