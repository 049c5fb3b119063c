package conn

import (
	"errors"
	"fmt"
	"testing"
)

// The refusals as each server words them, measured (docs/compatibility.md).
func TestPermissionDenied(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		// Redis 6.2 and 7.0
		{"NOPERM this user has no permissions to run the 'hincrby' command or its subcommand", true},
		{"NOPERM this user has no permissions to access one of the keys used as arguments", true},
		{"ERR Error running script (call to f_e03d): @user_script:1: @user_script: 1: The user executing the script can't run this command or subcommand", true},
		{"ERR Error running script (call to f_db94): @user_script:1: @user_script: 1: The user executing the script can't access at least one of the keys mentioned in the command arguments", true},
		{"ERR Error running script (call to f_ce38): @user_script:1: @user_script: 1: The user executing the script can't publish to the channel mentioned in the command", true},
		// Redis 7.2, 7.4, 8 and Valkey 7.2, 8
		{"NOPERM User u has no permissions to run the 'hincrby' command", true},
		{"NOPERM No permissions to access a key", true},
		{"ERR ACL failure in script: User u has no permissions to run the 'hincrby' command script: e03d, on @user_script:1.", true},
		{"ERR ACL failure in script: No permissions to access a key script: db94, on @user_script:1.", true},
		{"ERR ACL failure in script: No permissions to access a channel script: ce38, on @user_script:1.", true},
		// chatq's own scripts (Redis 7 and Valkey check before writing)
		{"NOPERM this user may not push to rsmq:q (ZADD, HSET, HINCRBY): nothing written", true},
		// wrapped by a caller
		{"push to list k: ERR ACL failure in script: User u has no permissions to run the 'rpush' command script: 6854, on @user_script:134.", true},
		// not refusals
		{"WRONGTYPE Operation against a key holding the wrong kind of value", false},
		{"ERR unknown command 'acl'", false},
		{"READONLY You can't write against a read only replica.", false},
	} {
		err := fmt.Errorf("wrapped: %w", errors.New(tc.msg))
		if got := PermissionDenied(err); got != tc.want {
			t.Errorf("PermissionDenied(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
	if PermissionDenied(nil) {
		t.Error("PermissionDenied(nil)")
	}
}
