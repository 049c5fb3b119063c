package chat

import "time"

// SetPrefilterMin sets the number of chats from which Pending prefilters,
// for measuring; it returns the previous value.
func SetPrefilterMin(n int) int {
	old := prefilterMin
	prefilterMin = n
	return old
}

// SetPages sets the entries of seen:{USER} read per call and the chats
// marked per marks.lua call, for tests; it returns the previous values.
func SetPages(index, mark int) (int, int) {
	oldIndex, oldMark := indexPage, markBatch
	indexPage, markBatch = index, mark
	return oldIndex, oldMark
}

// MarksSHA is the SHA1 EVALSHA names marks.lua (with mark.lua's functions) by.
func MarksSHA() string { return marksScript.Hash() }

// MarkSHA is the SHA1 EVALSHA names mark.lua (with the permission check) by.
func MarkSHA() string { return markScript.Hash() }

// Channel is the Pub/Sub channel every send announces its chat id on.
func Channel(s *Client) string { return s.channel() }

// SetClock sets the client's clock, which names the minute of the records
// of its calls with a token (time.Now when nil), for tests.
func SetClock(s *Client, now func() time.Time) { s.now = now }
