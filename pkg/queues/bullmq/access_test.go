package bullmq_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/bullmq"
)

// TestAccessCoversScripts reads the commands each script sends (its own
// and those of the lib.lua helpers it calls) and checks that Access
// lists every one for its operation, so `chatq acl` grants what the
// scripts need.
func TestAccessCoversScripts(t *testing.T) {
	call := regexp.MustCompile(`rcall\("([A-Z]+)"`)
	commands := func(src string) []string {
		var out []string
		for _, m := range call.FindAllStringSubmatch(src, -1) {
			out = append(out, strings.ToLower(m[1]))
		}
		return out
	}
	lib, err := os.ReadFile("lib.lua")
	if err != nil {
		t.Fatal(err)
	}
	// Each helper of lib.lua and the commands it sends.
	helpers := map[string][]string{}
	for _, part := range regexp.MustCompile(`(?m)^local function `).Split(string(lib), -1)[1:] {
		name, _, _ := strings.Cut(part, "(")
		helpers[name] = commands(part)
	}
	access := map[string]queues.Access{}
	for _, a := range bullmq.New(queues.Env{}).Access() {
		access[a.Op] = a
	}
	for op, file := range map[string]string{"retry": "retry.lua", "remove": "remove.lua", "redrive": "redrive.lua",
		"pause": "pause.lua", "recover": "recover.lua"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		need := commands(string(src))
		for name, cmds := range helpers {
			if strings.Contains(string(src), name+"(") {
				need = append(need, cmds...)
			}
		}
		a, ok := access[op]
		if !ok || !a.Write || !slices.Contains(a.Commands, "evalsha") {
			t.Errorf("%s: Access %+v, want a write that runs scripts", op, a)
			continue
		}
		for _, c := range need {
			if !slices.Contains(a.Commands, c) {
				t.Errorf("%s: %s sends %s, which Access does not list", op, file, c)
			}
		}
	}
}
