package metrics

import (
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/partest"
)

// The parallel tests here wait for Prometheus and promtool, other
// processes, so more run at once than GOMAXPROCS.
func TestMain(m *testing.M) {
	partest.Raise(8)
	os.Exit(m.Run())
}
