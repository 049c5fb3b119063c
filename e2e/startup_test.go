package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// initAllocBudget is how many heap allocations chatq's own packages may
// make in their inits, together, in every run of the binary whatever the
// command. They made about 2,600 before issue 37 (three packages compiled
// the same bounded-repeat regexp at init, ~700 allocations each) and about
// 110 after; docs/performance.md ("Start-up") has the instructions that
// cost. Work a package needs only for some command belongs on first use:
// a sync.Once, luascript.New, a loop rather than a regexp.
const initAllocBudget = 200

// TestStartupInitAllocs runs `chatq version` with GODEBUG=inittrace=1 and
// sums the allocations of the inits of chatq's own packages (the test
// harness's, linked only into this test binary, left out). It counts
// allocations, not time: a count means the same on a loaded machine.
func TestStartupInitAllocs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, chatqPath(t), "version")
	c.Env = append(chatqEnv(t), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("chatq version: %v\n%s", err, stderr.String())
	}
	const own = "github.com/chatq-dev/chatq"
	perPkg := map[string]int{}
	total, seen := 0, 0
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		// init github.com/x/y @1.2 ms, 0.01 ms clock, 480 bytes, 17 allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		seen++
		pkg := f[1]
		if pkg != own && !strings.HasPrefix(pkg, own+"/") ||
			strings.HasPrefix(pkg, own+"/e2e") || strings.HasPrefix(pkg, own+"/chatqtest") ||
			strings.HasPrefix(pkg, own+"/internal/testkit") {
			continue
		}
		n, err := strconv.Atoi(f[9])
		if err != nil {
			t.Fatalf("allocs of %q: %v", sc.Text(), err)
		}
		perPkg[pkg] += n
		total += n
	}
	if seen < 50 || len(perPkg) < 5 {
		t.Fatalf("inittrace named %d inits, %d of chatq's packages: not the output this test reads\n%s", seen, len(perPkg), stderr.String())
	}
	if total > initAllocBudget {
		pkgs := make([]string, 0, len(perPkg))
		for p := range perPkg {
			pkgs = append(pkgs, p)
		}
		sort.Slice(pkgs, func(i, j int) bool { return perPkg[pkgs[i]] > perPkg[pkgs[j]] })
		var b strings.Builder
		for _, p := range pkgs {
			b.WriteString("\n  " + strconv.Itoa(perPkg[p]) + " " + p)
		}
		t.Errorf("chatq's own packages make %d allocations at init, over the budget of %d:%s", total, initAllocBudget, b.String())
	}
	t.Logf("chatq's own packages: %d allocations at init (budget %d)", total, initAllocBudget)
}
