package cmd

// demoChat is the chat part of the tour.
func demoChat(d *demo) error { return nil }
