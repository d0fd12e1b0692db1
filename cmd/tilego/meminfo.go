package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// fallbackHostBytes is the host memory assumed where the system does not
// say (no /proc/meminfo): enough for every default shape, short of most
// machines' memory, so a huge shape is still refused.
const fallbackHostBytes = 8 << 30

// hostAvailable is the memory a run can allocate without swapping, and
// where that figure comes from: MemAvailable of /proc/meminfo, lowered to
// the cgroup's limit less its usage where a container sets one.
func hostAvailable() (uint64, string) {
	data, err := os.ReadFile("/proc/meminfo")
	have, ok := memAvailable(data)
	if err != nil || !ok {
		return fallbackHostBytes, "assumed: the system does not say"
	}
	from := "MemAvailable"
	limit, err1 := os.ReadFile("/sys/fs/cgroup/memory.max")
	used, err2 := os.ReadFile("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil {
		if left, ok := cgroupLeft(limit, used); ok && left < have {
			have, from = left, "the cgroup's memory.max less memory.current"
		}
	}
	return have, from
}

// memAvailable reads MemAvailable from /proc/meminfo's text, in bytes.
func memAvailable(meminfo []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != "MemAvailable" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		return kb << 10, err == nil && kb < 1<<50
	}
	return 0, false
}

// cgroupLeft is a cgroup v2 limit (memory.max's text, "max" for none)
// less its usage (memory.current's).
func cgroupLeft(max, current []byte) (uint64, bool) {
	limit, err1 := strconv.ParseUint(strings.TrimSpace(string(max)), 10, 64)
	used, err2 := strconv.ParseUint(strings.TrimSpace(string(current)), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false // "max": no limit
	}
	if used >= limit {
		return 0, true
	}
	return limit - used, true
}
