// Package procstat reads a process's CPU time and resident set from
// Linux's /proc, for the benchmarks that start servers and report what
// they cost.
//
// Its functions hold no state but a cached clock tick and are safe for
// concurrent use. It does not sample over time or aggregate children: a
// caller reads twice and subtracts.
package procstat

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Usage is a process's resource use so far.
type Usage struct {
	CPU time.Duration // user + system CPU time
	RSS int64         // resident set, bytes
}

// ClockTick is the kernel's USER_HZ, the unit of /proc/PID/stat times.
var ClockTick = sync.OnceValue(func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100 // every Linux architecture Go runs on
})

// Read reads utime+stime from /proc/PID/stat and VmRSS from
// /proc/PID/status.
func Read(pid int) (Usage, error) {
	var u Usage
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name (field 2) may hold spaces; fields after it are
	// counted from the closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: no closing parenthesis", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields after the name, want 13", pid, len(f))
	}
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	u.CPU = time.Duration((ut + st) * int64(time.Second) / ClockTick())
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			u.RSS = kb << 10
		}
	}
	return u, sc.Err()
}

// Waited returns how long the process's threads have waited on a run queue
// so far: ready to run with no CPU free for them, summed over its threads
// (the second field of /proc/PID/task/TID/schedstat). A thread that has
// exited no longer counts.
func Waited(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread has exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return 0, fmt.Errorf("%s/%s/schedstat: %q, want three fields", dir, t.Name(), b)
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}
