package cmd

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/cobra"
)

// fullTree builds every command whatever the arguments, as chatq did before
// it built only the one that runs.
func fullTree(f *cmdutil.Factory, _ []string) *cobra.Command { return newRootCmd(f) }

// runWith runs args with the tree built by tree, on no server, and returns
// the exit code and the output.
func runWith(t *testing.T, tree func(*cmdutil.Factory, []string) *cobra.Command, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	env := func(k string) string {
		switch k {
		case "CHATQ_CONFIG":
			return os.DevNull
		case "CHATQ_COMPLETION_TIMEOUT":
			return "1ms"
		}
		return ""
	}
	code := runTree(context.Background(), args, io, env, tree)
	return code, out.String(), errOut.String()
}

// Building only the command that runs prints exactly what the full tree
// prints: every command's help, the root's help and usage errors, and the
// suggestions for a mistyped command, at the root and in a group.
func TestOneBranchSameOutput(t *testing.T) {
	lines := [][]string{
		{},
		{"--help"},
		{"-h"},
		{"help"},
		{"help", "queue"},
		{"help", "queue", "push"},
		{"pnig"},
		{"qeueu", "push", "jobs", "x"},
		{"-o", "json", "pnig"},
		{"queue"},
		{"queue", "pussh", "jobs", "x"},
		{"queue", "push"},
		{"list", "rpush", "bad key", "x"},
		{"chat", "send", "1", "hi"},
		{"--bogus", "ping"},
		{"ping", "--bogus"},
		{"ping", "extra"},
		{"--url", "redis://127.0.0.1:1", "queue", "push", "--help"},
		{"-o", "json", "ping", "--help"},
		{"-ojson", "version", "--help"},
		{"--url", "ping", "--help"},
		{"-u", "queue", "ping", "--help"},
		{"--", "ping"},
		{"version", "--bogus"},
		{"completion", "bash"},
		{"completion", "fish"},
		{cobra.ShellCompRequestCmd, ""},
		{cobra.ShellCompRequestCmd, "qu"},
		{cobra.ShellCompRequestCmd, "queue", ""},
		{cobra.ShellCompNoDescRequestCmd, "queue", "p"},
		{cobra.ShellCompRequestCmd, "-o", ""},
		{cobra.ShellCompRequestCmd, "--url", "redis://127.0.0.1:1", "queue", "push", "--d"},
	}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(slices.Clone(path), sub.Name())
			lines = append(lines, append(slices.Clone(p), "--help"))
			walk(sub, p)
		}
	}
	walk(newRootCmd(&cmdutil.Factory{IO: &iostreams.IOStreams{}, Getenv: os.Getenv}), nil)
	for _, args := range lines {
		wantCode, wantOut, wantErr := runWith(t, fullTree, args...)
		code, out, errOut := runWith(t, newRootCmdFor, args...)
		if code != wantCode || out != wantOut || errOut != wantErr {
			t.Errorf("chatq %q: one branch gives exit %d\n%s\n%s\nthe full tree exit %d\n%s\n%s",
				args, code, out, errOut, wantCode, wantOut, wantErr)
		}
	}
}

// The tree for a command line holds only the command that runs, found after
// any global flags; anything else gets every command.
func TestOneBranchBuilt(t *testing.T) {
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{}, Getenv: os.Getenv}
	all := len(subcommands())
	for _, tt := range []struct {
		args []string
		want []string // nil: every command
	}{
		{[]string{"ping"}, []string{"ping"}},
		{[]string{"-o", "json", "ping"}, []string{"ping"}},
		{[]string{"--url", "redis://x:1", "queue", "push", "jobs", "x"}, []string{"queue"}},
		{[]string{"--url=redis://x:1", "-e", "--cluster", "chat", "send", "1", "--from", "a", "hi"}, []string{"chat"}},
		{[]string{"--prefix", "list", "list", "rpush", "k", "x"}, []string{"list"}},
		{[]string{"-u", "ping", "version"}, []string{"version"}},
		{[]string{"list", "--help"}, []string{"list"}},
		{nil, nil},
		{[]string{"-o", "json"}, nil},
		{[]string{"help", "ping"}, nil},
		{[]string{"completion", "bash"}, nil},
		{[]string{cobra.ShellCompRequestCmd, "ping"}, nil},
		{[]string{"pnig"}, nil},
	} {
		var got []string
		for _, c := range newRootCmdFor(f, tt.args).Commands() {
			got = append(got, c.Name())
		}
		if tt.want == nil && len(got) != all || tt.want != nil && !slices.Equal(got, tt.want) {
			t.Errorf("%q: built %v, want %v (nil: all %d)", tt.args, got, tt.want, all)
		}
	}
	for _, c := range subcommands() {
		if got := c.new(f).Name(); got != c.name {
			t.Errorf("subcommand %q builds a command named %q", c.name, got)
		}
	}
}

// BenchmarkRootCmd is the cost of building the command tree for a command
// line: the whole tree against only the branch that runs.
func BenchmarkRootCmd(b *testing.B) {
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{}, Getenv: os.Getenv}
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			newRootCmd(f)
		}
	})
	for _, args := range [][]string{{"ping"}, {"queue", "push", "jobs", "x"}, {"chat", "send", "1", "--from", "a", "hi"}, {"list", "rpush", "k", "x"}} {
		b.Run(strings.Join(args[:min(2, len(args))], "_"), func(b *testing.B) {
			args = append([]string{"--url", "redis://127.0.0.1:6379"}, args...)
			b.ReportAllocs()
			for b.Loop() {
				newRootCmdFor(f, args)
			}
		})
	}
}
