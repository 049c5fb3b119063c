package demo

// demoChat is the chat part of the tour: the scenario of "Redis in Action"
// §6.5.2.
func demoChat(d *demo) error {
	steps := []struct {
		say  string
		args []string
	}{
		{"chat: joe starts a group chat with jeff and jenny; members may be offline", []string{"chat", "create", "--from", "joe", "--to", "jeff,jenny", "message 1"}},
		{"each message gets the chat's next id, atomically (one Lua script, no lock)", []string{"chat", "send", "1", "--from", "joe", "message 2"}},
		{"", []string{"chat", "send", "1", "--from", "joe", "message 3"}},
		{"jeff's chats and how many messages he has not seen", []string{"chat", "ls", "jeff"}},
		{"jeff fetches what he has not seen; that marks it seen", []string{"chat", "pending", "jeff"}},
		{"jenny gets the same messages", []string{"chat", "pending", "jenny"}},
		{"they stay stored until every member, joe included, has seen them", []string{"chat", "history", "1"}},
		{"", []string{"chat", "pending", "joe"}},
		{"sam joins and sees only what is sent from now on", []string{"chat", "join", "1", "sam"}},
		{"", []string{"chat", "send", "1", "--from", "jenny", "welcome, sam"}},
		{"", []string{"chat", "pending", "sam", "--peek"}},
		{"members, the last message id each has seen and how many they have not", []string{"chat", "members", "1"}},
	}
	for _, s := range steps {
		if s.say != "" {
			d.say("%s", s.say)
		}
		if err := d.run(s.args...); err != nil {
			return err
		}
	}
	return nil
}
