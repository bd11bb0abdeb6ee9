package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memsync/memsync/internal/fsutil"
)

// The advice every front door gives for a file this user may not write (a
// file, or a folder where a file is to be made), a full disk, and an append
// that could not be cut back.
func TestFixPermissionDiskFullTorn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memories.md")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		err  error
		want []string
	}{
		{fmt.Errorf("lock %s.lock: %w", file, &fs.PathError{Op: "open", Path: file, Err: syscall.EACCES}),
			[]string{"chmod g+w " + file, "git config core.sharedRepository group"}},
		{&fs.PathError{Op: "open", Path: filepath.Join(dir, "new"), Err: syscall.EPERM},
			[]string{"chmod g+ws " + dir, "git config core.sharedRepository group"}},
		{&fsutil.AppendError{Path: file, Size: 10, Err: syscall.ENOSPC},
			[]string{"free some space", "nothing was written"}},
		{&fsutil.AppendError{Path: file, Size: 10, Err: syscall.ENOSPC, Undo: syscall.EROFS},
			[]string{"memsync doctor --fix", "truncate -s 10 " + file}},
	} {
		fix := Fix(c.err)
		for _, w := range c.want {
			if !strings.Contains(fix, w) {
				t.Errorf("Fix(%v) = %q, does not say %q", c.err, fix, w)
			}
		}
	}
}
