package e2e

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCompatScript checks scripts/compat.sh without any server: its help,
// its usage errors, a dry run on a directory of stand-in binaries, and the
// matrix it prints from a run's go test -json output (testdata/compat/run,
// taken from a real run and cut down). The matrix itself is measured with
// real servers: docs/compatibility.md.
func TestCompatScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		out, err := exec.Command("bash", append([]string{"scripts/compat.sh"}, args...)...).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run("--help"); code != 0 || !strings.Contains(out, "compat.sh: the compatibility matrix") {
		t.Errorf("--help: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{{}, {"--bogus", "x"}, {"testdata/compat"}} {
		if out, code := run(args...); code != 2 || !strings.Contains(out, "compat: error: ") {
			t.Errorf("%v: exit %d, want 2 with an error:\n%s", args, code, out)
		}
	}
	out, code := run("--dry-run", "testdata/compat/fake-valkey")
	if code != 0 || !strings.Contains(out, "compat: valkey 8.0.1 from testdata/compat/fake-valkey: valkey-server, valkey-cli, valkey-sentinel") {
		t.Errorf("--dry-run: exit %d:\n%s", code, out)
	}
	want, err := os.ReadFile("testdata/compat/report.md")
	if err != nil {
		t.Fatal(err)
	}
	// A failed cell and a setup that did not start: exit 1.
	if out, code := run("--report", "testdata/compat/run"); code != 1 || out != string(want) {
		t.Errorf("--report: exit %d, want 1 and testdata/compat/report.md; got:\n%s", code, out)
	}
}
