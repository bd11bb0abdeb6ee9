package lock

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockHolders lists the pids holding a lock on the file fi, as Linux's
// /proc/locks shows them ("1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE ...";
// lines with "->" are waiters, not holders). ok is false where there is no
// /proc/locks. Only the inode is compared: on an overlay file system the
// device shown is the lower file system's, not the one stat reports.
func lockHolders(fi os.FileInfo) (pids []int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, false
	}
	ino := st.Ino
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil, false
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 || id[2] != strconv.FormatUint(ino, 10) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, true
}
