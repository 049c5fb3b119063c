package chat

// SetPrefilterMin sets the number of chats from which Pending prefilters,
// for measuring; it returns the previous value.
func SetPrefilterMin(n int) int {
	old := prefilterMin
	prefilterMin = n
	return old
}
