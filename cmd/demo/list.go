package demo

// demoList is the list part of the tour: tiny shards make the layout visible.
func demoList(d *demo) error {
	steps := []struct {
		say  string
		in   string
		args []string
	}{
		{say: "the sharded list: one logical list kept in bounded Redis LISTs; push five items with tiny shards (--shard-size 3: at most 2 items a shard)",
			args: []string{"list", "rpush", "demo:jobs", "a", "b", "c", "d", "e", "--shard-size", "3"}},
		{say: "push two lines from stdin onto the head; new shards open toward negative numbers (the list remembers its shard size)",
			in: "y\nz\n", args: []string{"list", "lpush", "demo:jobs", "-"}},
		{say: "see how it is stored: the endpoints and each shard's length",
			args: []string{"list", "shards", "demo:jobs"}},
		{say: "the order is what a plain LIST would hold",
			args: []string{"list", "lrange", "demo:jobs", "0", "-1"}},
		{say: "pop from both ends, as LPOP and RPOP with a count",
			args: []string{"list", "lpop", "demo:jobs", "-n", "2"}},
		{args: []string{"list", "rpop", "demo:jobs"}},
		{say: "a blocking pop waits up to --wait for an item; there is one, so it returns at once",
			args: []string{"list", "blpop", "demo:jobs", "--wait", "1s"}},
		{say: "what is left", args: []string{"list", "llen", "demo:jobs"}},
	}
	for _, s := range steps {
		if s.say != "" {
			d.say("%s", s.say)
		}
		var err error
		if s.in != "" {
			err = d.runIn(&s.in, nil, s.args...)
		} else {
			err = d.run(s.args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
