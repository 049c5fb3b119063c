package stream

import (
	_ "embed"

	"github.com/chatq-dev/chatq/internal/base/luascript"
)

// The scripts, each with group.lua's helpers in front; those that write
// also with luascript.Permitted's check, made before their first write.
var (
	//go:embed group.lua
	groupLua string
	//go:embed counts.lua
	countsLua string
	//go:embed get.lua
	getLua string
	//go:embed pending.lua
	pendingLua string
	//go:embed claim.lua
	claimLua string
	//go:embed remove.lua
	removeLua string
	//go:embed deadletter.lua
	deadLetterLua string
	//go:embed redrive.lua
	redriveLua string

	countsScript     = reader(countsLua)
	getScript        = reader(getLua)
	pendingScript    = reader(pendingLua)
	claimScript      = writer(claimLua)
	removeScript     = writer(removeLua)
	deadLetterScript = writer(deadLetterLua)
	redriveScript    = writer(redriveLua)
)

// reader is a script that only reads: group.lua's helpers, then body.
func reader(body string) *luascript.Script {
	return luascript.New(groupLua, body)
}

// writer is a script that writes: the permission check (allowed), group.lua's
// helpers, then body.
func writer(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, groupLua, body)
}
