package cmd

// demoQueue is the queue part of the tour.
func demoQueue(d *demo) error { return nil }
