package demo

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// demoQueue is the queue part of the tour: a delayed message arriving on
// time, visibility timeouts, acks and the stats split.
func demoQueue(d *demo) error {
	d.say("queue: a delayed queue in RSMQ's layout; create one with a 30s visibility timeout")
	if err := d.run("queue", "create", "jobs", "--vt", "30s"); err != nil {
		return err
	}
	d.say("push a message due now, and one due in 2 seconds (by the Redis server's clock)")
	if err := d.run("queue", "push", "jobs", "resize photo 42"); err != nil {
		return err
	}
	if err := d.run("queue", "push", "jobs", "--delay", "2s", "send the reminder"); err != nil {
		return err
	}
	d.say("stats splits the messages into ready, delayed and in flight")
	if err := d.run("queue", "stats", "jobs"); err != nil {
		return err
	}
	d.say("poll receives what is due; it stays hidden for the visibility timeout until acked")
	first, err := d.pollIDs("queue", "poll", "jobs", "-n", "10")
	if err != nil {
		return err
	}
	d.say("poll --wait sleeps until the delayed message is due (woken at its due time, not by a polling tick)")
	start := time.Now()
	second, err := d.pollIDs("queue", "poll", "jobs", "--wait", "10s")
	if err != nil {
		return err
	}
	d.say("it arrived %s after we started waiting, on time: it was due 2s after its push", time.Since(start).Round(time.Millisecond))
	d.say("ack both, so they do not come back after 30s")
	if err := d.run(append([]string{"queue", "ack", "jobs"}, append(first, second...)...)...); err != nil {
		return err
	}
	return d.run("queue", "stats", "jobs", "-o", "json")
}

// pollIDs runs a poll like run does and returns the ids it printed. The
// poll's output is printed after it ends, so that under --jq or --template
// it goes through the filter like every other step's.
func (d *demo) pollIDs(args ...string) ([]string, error) {
	var buf bytes.Buffer
	if err := d.runIn(nil, &buf, args...); err != nil {
		return nil, err
	}
	if d.opts.JSON {
		if err := d.opts.IO.WriteJSON(json.RawMessage(bytes.TrimSpace(buf.Bytes()))); err != nil {
			return nil, err
		}
	} else if _, err := d.opts.IO.Out.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	var ids []string
	if d.opts.JSON {
		var ms []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(buf.Bytes(), &ms); err != nil {
			return nil, err
		}
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		return ids, nil
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if id, _, ok := strings.Cut(line, "\t"); ok && len(id) == 32 {
			ids = append(ids, id)
		} else if f := strings.Fields(line); len(f) > 0 && len(f[0]) == 32 {
			ids = append(ids, f[0]) // aligned table on a terminal
		}
	}
	return ids, nil
}
