package main

import (
	"os"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts run chatq and this program as commands of the test binary.
func TestMain(m *testing.M) {
	cmds := chatqtest.Commands()
	cmds["worker"] = func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
	testscript.Main(m, cmds)
}

// Each script gets an embedded server of its own, or, with
// CHATQ_TEST_REDIS_URL, a real server under a prefix of its own.
func TestScripts(t *testing.T) {
	testscript.Run(t, chatqtest.Params("testdata/script"))
}
