// Package cmdtest helps test a command group beside its files: it runs a
// command's flags into its options through the constructor's runF, without
// the rest of the tree, and checks what the run returns. Fake streams come
// from iostreams.Test.
package cmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/cobra"
)

// Factory returns a factory with piped test streams (iostreams.Test),
// cfg as the loaded configuration (the global flags, parsed) and env as
// the environment.
func Factory(cfg *conn.Config, env map[string]string) *cmdutil.Factory {
	io, _, _ := iostreams.Test(false, "")
	f := &cmdutil.Factory{IO: io, Getenv: func(k string) string { return env[k] }}
	f.Load(cfg, nil)
	return f
}

// Root returns a root command as chatq's for Parse: it maps flag errors
// to usage errors, and has one global flag, --url (demo reads whether it
// is given); the other global flags stand in the factory's configuration.
// A command group's tests add a group to it with the group's persistent
// flags (e.g. queue's --namespace) and pass the group to Parse.
func Root() *cobra.Command {
	root := &cobra.Command{Use: "chatq", SilenceErrors: true, SilenceUsage: true}
	root.PersistentFlags().String("url", conn.DefaultURL, "")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	return root
}

// Parse adds the command newCmd builds for f to parent (a Root, or a
// group under one), runs args below parent (the command's name first) and
// returns the options the run would get; the run is not called.
func Parse[T any](t testing.TB, parent *cobra.Command, f *cmdutil.Factory, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	t.Helper()
	var got *T
	parent.AddCommand(newCmd(f, func(_ context.Context, o *T) error { got = o; return nil }))
	var path []string
	for c := parent; c.HasParent(); c = c.Parent() {
		path = append([]string{c.Name()}, path...)
	}
	root := parent.Root()
	root.SetArgs(append(path, args...))
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		return nil, err
	}
	if got == nil {
		t.Fatalf("%q: the run function was not called", args)
	}
	return got, nil
}

// FlagCase is a row of a flags → options table: the arguments, and the
// options the run gets or (WantErr not empty) the usage error they make.
type FlagCase[O any] struct {
	Args    []string
	Want    O
	WantErr string
}

// CheckFlags runs each case through parse; clear zeroes what is not a
// value (streams, constructors) before the options are compared.
func CheckFlags[O any](t testing.TB, parse func(args ...string) (*O, error), clear func(*O), tests []FlagCase[O]) {
	t.Helper()
	for _, tt := range tests {
		got, err := parse(tt.Args...)
		if tt.WantErr != "" {
			WantUsage(t, tt.Args, err, tt.WantErr)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.Args, err)
			continue
		}
		clear(got)
		if !reflect.DeepEqual(*got, tt.Want) {
			t.Errorf("%q: got %+v, want %+v", tt.Args, *got, tt.Want)
		}
	}
}

// WantUsage fails t unless err, what args made, is a usage error (IsUsage)
// saying want.
func WantUsage(t testing.TB, args []string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%q: no error, want %q", args, want)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%q: error %q, want %q", args, err, want)
	case !IsUsage(err):
		t.Errorf("%q: %v exits %d, want %d", args, err, cmdutil.ExitCode(err, false), cmdutil.ExitUsage)
	}
}

// cobraUsage begins the plain errors cobra makes itself that chatq's Main
// maps to exit 2 (cmd's isCobraUsage; cmd's TestCobraUsage checks the two
// agree).
var cobraUsage = []string{"unknown command", "required flag", "if any flags in the group", "at least one of the flags", "none of the others can be"}

// IsUsage reports whether err exits 2: a usage error, or one of cobra's
// own (a missing required flag, a flag group's rule), which are not typed
// and which Main maps to exit 2.
func IsUsage(err error) bool {
	if err == nil {
		return false
	}
	if cmdutil.ExitCode(err, false) == cmdutil.ExitUsage {
		return true
	}
	for _, p := range cobraUsage {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// Hint returns the hint err carries (the "chatq: hint: …" line Main
// prints), or "".
func Hint(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// DecodeJSON parses data, the JSON a run printed, into v.
func DecodeJSON(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("not JSON: %v: %q", err, data)
	}
}
