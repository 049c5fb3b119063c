package delayq_test

import (
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/partest"
)

// The parallel tests here wait for visibility timeouts, leases and
// consumer processes more than they compute, so more run at once than
// GOMAXPROCS.
func TestMain(m *testing.M) {
	partest.Raise(8)
	os.Exit(m.Run())
}
