package stream

import (
	"slices"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/pkg/queues"
)

// scriptCommands are what running a script sends: EVALSHA, EVAL when the
// server lacks it, SCRIPT LOAD where it is loaded ahead.
const scriptCommands = "evalsha eval script|load"

// access lists, per operation, the commands it sends, its scripts' own
// calls included (access_test.go checks them against the scripts).
var access = []struct {
	op       string
	write    bool
	commands string
}{
	{"Discover", false, "scan xinfo|groups"},
	{"Counts", false, scriptCommands + " type xinfo|groups xrange xrevrange xlen time"},
	{"Scan", false, scriptCommands + " type xinfo|groups xrange xpending time"},
	{"Get", false, scriptCommands + " type xinfo|groups xrange xpending time"},
	{"Recover", true, scriptCommands + " type xinfo|groups xautoclaim xclaim xpending xrange"},
	{"Remove", true, scriptCommands + " type xinfo|groups xpending xrange xack xdel"},
	{"DeadLetter", true, scriptCommands + " type xinfo|groups xpending xrange xadd xack time"},
	{"Redrive", true, scriptCommands + " type xinfo|groups xrange xadd xdel"},
}

// Access lists what each operation asks of the server: its commands
// (subcommands as ACLs name them, "xinfo|groups") and the keys, every key
// under the prefix (a stream's key is any name the application chose).
func (k *Kind) Access() []queues.Access {
	keys := []string{keyspace.Pattern(k.env.Prefix)}
	out := make([]queues.Access, 0, len(access))
	for _, a := range access {
		cmds := strings.Fields(a.commands)
		slices.Sort(cmds)
		out = append(out, queues.Access{Op: a.op, Write: a.write, Commands: slices.Compact(cmds), Keys: slices.Clone(keys)})
	}
	return out
}
