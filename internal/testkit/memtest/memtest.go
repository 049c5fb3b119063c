// Package memtest measures, in tests, whether a long-running loop keeps
// memory per iteration: the live heap after a full collection at N/10
// iterations and at N, and the process's resident set size for the docs.
// It measures memory, never time.
package memtest

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Sample is the memory in use at one point of a loop.
type Sample struct {
	Heap uint64 // live heap after a full collection
	RSS  uint64 // resident set size (Linux), 0 elsewhere
	Peak uint64 // the process's peak resident set size so far (Linux), 0 elsewhere
}

// Take collects garbage and samples the heap and the RSS.
func Take() Sample {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, peak := rss()
	return Sample{Heap: m.HeapAlloc, RSS: rss, Peak: peak}
}

// rss returns VmRSS and VmHWM (the peak) from /proc/self/status.
func rss() (rss, peak uint64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	kb := func(v string) uint64 {
		n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n * 1024
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kb(v)
		} else if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peak = kb(v)
		}
	}
	return rss, peak
}

// Flat logs the samples taken after n/10 and n iterations of what, and
// fails t when the heap grew by more than 10% plus 256 KiB between them: a
// leak of 40 bytes an iteration fails it at n = 1e4 (4 at 1e5), while a
// collection's noise (tens of KiB) does not.
func Flat(t testing.TB, what string, n int, early, late Sample) {
	t.Helper()
	growth := float64(int64(late.Heap)-int64(early.Heap)) / float64(n-n/10)
	t.Logf("%s: heap %.2f MiB after %d, %.2f MiB after %d (%+.1f B an iteration); RSS %.1f MiB, %.1f MiB; peak RSS of the test process %.1f MiB",
		what, mib(early.Heap), n/10, mib(late.Heap), n, growth, mib(early.RSS), mib(late.RSS), mib(late.Peak))
	if limit := early.Heap + early.Heap/10 + 256<<10; late.Heap > limit {
		t.Errorf("%s: the heap grew from %.2f MiB after %d to %.2f MiB after %d (limit %.2f MiB): memory kept per iteration",
			what, mib(early.Heap), n/10, mib(late.Heap), n, mib(limit))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
