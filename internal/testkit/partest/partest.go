// Package partest lets a package whose tests mostly wait (for a timeout,
// a visibility timeout, a lease, another process) run more of its
// parallel tests at once than go test's default, GOMAXPROCS: on a 2-core
// machine two waiting tests at a time leave the cores idle (docs/testing.md).
package partest

import (
	"flag"
	"runtime"
	"strconv"
)

// Raise sets -test.parallel to n, or GOMAXPROCS if that is more, unless
// the command line set it. Call it in TestMain before m.Run; it parses
// the command line, as m.Run would.
func Raise(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			set = true
		}
	})
	if set {
		return
	}
	if p := runtime.GOMAXPROCS(0); p > n {
		n = p
	}
	if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
		panic("partest: " + err.Error()) // testing.Init registers the flag before TestMain runs
	}
}
