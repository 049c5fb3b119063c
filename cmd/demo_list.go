package cmd

// demoList is the list part of the tour.
func demoList(d *demo) error { return nil }
