package redistest

import (
	"os"
	"testing"
)

// RealServerPass reports whether this run is the real-server pass
// (CHATQ_TEST_REDIS_URL set, or CHATQ_REQUIRE_REDIS=1), as .ci/run's
// -race pass is; the README's `go test ./...` is not.
func RealServerPass() bool {
	return os.Getenv("CHATQ_TEST_REDIS_URL") != "" || os.Getenv("CHATQ_REQUIRE_REDIS") == "1"
}

// SlowOnEmbedded skips t outside the real-server pass, saying why: a test
// that takes seconds of CPU or waiting on the embedded server, and that
// the real-server pass runs anyway (on both backends, under -race), so
// that the README's `go test ./...` stays within its 90 s
// (docs/testing.md lists these tests).
func SlowOnEmbedded(t testing.TB, why string) {
	t.Helper()
	if !RealServerPass() {
		t.Skip("slow on the embedded server, runs in the real-server pass (CHATQ_TEST_REDIS_URL or CHATQ_REQUIRE_REDIS=1): " + why)
	}
}
