package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each man page is titled by its own command, not CHATQ(1).
func TestManPagesTitledByCommand(t *testing.T) {
	out := t.TempDir()
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	for page, title := range map[string]string{
		"chatq.1":            `.TH "CHATQ" "1"`,
		"chatq-queue-push.1": `.TH "CHATQ-QUEUE-PUSH" "1"`,
		"chatq-chat.1":       `.TH "CHATQ-CHAT" "1"`,
	} {
		b, err := os.ReadFile(filepath.Join(out, "man", page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), title) {
			first, _, _ := strings.Cut(string(b), "\n")
			t.Errorf("%s: first line %q, want %s", page, first, title)
		}
	}
	for _, f := range []string{"chatq.bash", "_chatq", "chatq.fish", "chatq.ps1"} {
		if _, err := os.Stat(filepath.Join(out, "completions", f)); err != nil {
			t.Error(err)
		}
	}
}
