package cmd

import (
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/partest"
)

// The parallel tests here mostly wait for a lost reply's --timeout, an
// outage or a stopped command, so more run at once than GOMAXPROCS.
func TestMain(m *testing.M) {
	partest.Raise(8)
	os.Exit(m.Run())
}
