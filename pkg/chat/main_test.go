package chat_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/chatq-dev/chatq/pkg/chat"
)

// TestMain runs the tests with every user's chats read as many are:
// CHATQ_TEST_SMALL_PAGES=1 prefilters from 1 chat on, reads seen:{USER}
// 2 entries a call and marks 2 chats per marks.lua call, so the paths
// for users in many chats meet the small cases of every test. Expected
// to fail then: the tests that count round trips, TestLostReplies (it
// drops fetch.lua's reply, which that path does not send; see
// TestManyChatsLostReplies) and TestBrokenChatHidesNothing/ids:{1} (the
// prefilter cannot tell a counter of the wrong type from a missing one:
// docs/chat.md).
func TestMain(m *testing.M) {
	if small, _ := strconv.ParseBool(os.Getenv("CHATQ_TEST_SMALL_PAGES")); small {
		chat.SetPrefilterMin(1)
		chat.SetPages(2, 2)
	}
	os.Exit(m.Run())
}
