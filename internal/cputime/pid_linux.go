package cputime

import (
	"os"
	"strconv"
	"strings"
	"time"
)

func pidCPU(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStat(string(raw))
}

// parseStat reads utime and stime from a /proc/<pid>/stat line. The command
// name, in parentheses, may hold spaces: fields count from the last ')'.
// utime and stime are fields 14 and 15.
func parseStat(s string) (time.Duration, bool) {
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// Linux reports these in USER_HZ, 100 per second on every platform Go
	// supports.
	return time.Duration(utime+stime) * (time.Second / 100), true
}
