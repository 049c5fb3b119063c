package cmd

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
)

func TestVersionFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		json bool
		err  bool // a usage error
	}{
		{[]string{"version"}, false, false},
		{[]string{"version", "-o", "json"}, true, false},
		{[]string{"-o", "json", "version"}, true, false},
		{[]string{"version", "extra"}, false, true},
	} {
		o, err := parse(t, newCmdVersion, nil, tc.args...)
		switch {
		case tc.err:
			if !isUsage(err) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case o.JSON != tc.json:
			t.Errorf("%q: JSON %v, want %v", tc.args, o.JSON, tc.json)
		}
	}
}

func TestVersionRun(t *testing.T) {
	want := "chatq " + Version() + " (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, m := range modes {
		io, out, errOut := iostreams.Test(m.tty, "")
		if err := versionRun(&versionOptions{Output: cmdutil.Output{IO: io}}); err != nil {
			t.Fatal(err)
		}
		if out.String() != want || errOut.Len() != 0 {
			t.Errorf("%s: stdout %q, stderr %q; want %q", m.name, out, errOut, want)
		}

		io, out, _ = iostreams.Test(m.tty, "")
		if err := versionRun(&versionOptions{Output: cmdutil.Output{IO: io, JSON: true}}); err != nil {
			t.Fatal(err)
		}
		var v versionResult
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version != Version() || v.Go != runtime.Version() || v.OS != runtime.GOOS || v.Arch != runtime.GOARCH {
			t.Errorf("%s: JSON %q: %+v, %v", m.name, out, v, err)
		}
	}
}
