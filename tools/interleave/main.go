//go:build unix

// Command interleave times one-shot commands against each other on a shared
// machine: it runs them in turn (A B C A B C …, the order rotating each
// round so none is always first after a pause), N rounds, and prints each
// command's median wall time and CPU time (user+sys, from rusage) with the
// spread (25th–75th percentile) and its ratio to the first command's
// median. Interleaving spreads the machine's load over every command alike,
// which timing one command's runs after the other's does not.
//
//	go run ./tools/interleave -n 40 'redis-cli -p 6379 PING' './chatq ping'
//
// Each command is split on spaces (no quoting), leading NAME=value words
// set in its environment; its output is discarded and a command that exits
// non-zero stops the run.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	rounds := flag.Int("n", 30, "rounds: runs of each command")
	warmup := flag.Int("warmup", 3, "untimed rounds first")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: interleave [-n rounds] [-warmup rounds] 'command args' 'command args'...")
		flag.PrintDefaults()
	}
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	wall := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	for r := range *warmup + *rounds {
		for k := range cmds {
			i := (k + r) % len(cmds)
			w, c, err := run(cmds[i])
			if err != nil {
				fmt.Fprintf(os.Stderr, "interleave: %s: %v\n", cmds[i], err)
				os.Exit(1)
			}
			if r >= *warmup {
				wall[i] = append(wall[i], w)
				cpu[i] = append(cpu[i], c)
			}
		}
	}
	fmt.Printf("%d rounds, interleaved; wall and CPU (user+sys) in ms: median [25th–75th percentile]\n", *rounds)
	ref := median(wall[0])
	refCPU := median(cpu[0])
	for i, c := range cmds {
		fmt.Printf("wall %6.2f [%5.2f–%5.2f] ×%.2f  cpu %5.2f [%5.2f–%5.2f] ×%.2f  %s\n",
			median(wall[i]), pct(wall[i], 0.25), pct(wall[i], 0.75), median(wall[i])/ref,
			median(cpu[i]), pct(cpu[i], 0.25), pct(cpu[i], 0.75), median(cpu[i])/refCPU, c)
	}
	// The ratio of medians above mixes rounds run at different loads; the
	// ratio of each round's run to the first command's run in the same
	// round pairs runs made seconds apart, so its median and spread say
	// how far apart the two commands are whatever the load did meanwhile.
	fmt.Println("per-round ratio to the first command, wall: median [25th–75th percentile]")
	for i, c := range cmds[1:] {
		r := make([]float64, len(wall[0]))
		for k := range r {
			r[k] = wall[i+1][k] / wall[0][k]
		}
		fmt.Printf("×%.2f [%.2f–%.2f]  %s\n", median(r), pct(r, 0.25), pct(r, 0.75), c)
	}
}

// run runs cmd once and returns its wall time and CPU time in ms.
func run(cmd string) (wall, cpu float64, err error) {
	f := strings.Fields(cmd)
	var env []string
	for len(f) > 1 && strings.Contains(f[0], "=") {
		env, f = append(env, f[0]), f[1:]
	}
	c := exec.Command(f[0], f[1:]...)
	c.Env = append(os.Environ(), env...)
	start := time.Now()
	if err := c.Run(); err != nil {
		return 0, 0, err
	}
	wall = float64(time.Since(start).Microseconds()) / 1000
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	cpu = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	return wall, cpu, nil
}

func median(v []float64) float64 { return pct(v, 0.5) }

func pct(v []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[int(q*float64(len(s)-1)+0.5)]
}
