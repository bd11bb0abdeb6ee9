package hooks

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/memsync/memsync/history"
	"github.com/memsync/memsync/memfile"
	"github.com/memsync/memsync/worktree"
)

// Bounds of a hook run.
const (
	DefaultTimeout     = 10 * time.Second // the whole handler
	DefaultLockTimeout = 3 * time.Second  // waiting for the memory lock
)

// Options of a hook run.
type Options struct {
	Dir         string        // where to discover the repository ("" = the working directory, as git runs hooks)
	Stderr      io.Writer     // for the one warning line
	Timeout     time.Duration // DefaultTimeout when 0
	LockTimeout time.Duration // DefaultLockTimeout when 0
}

// Run is the handler of git hook name, called with git's arguments. It
// never fails: trouble (no repository, a damaged memory file, a lock
// timeout, running out of time) is one warning line on Stderr, and the git
// command stands. It never writes the index or HEAD.
//
//   - post-commit, post-merge, post-rewrite: snapshot the memory (no commit
//     when it is unchanged, so a rebase of many commits snapshots once).
//   - post-checkout with an all-zero old HEAD (git worktree add): link the new
//     worktree's .agent/memories.md to the shared memory. Branch switches do
//     nothing.
//
// Other names do nothing.
func Run(name string, args []string, o Options) {
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if name == "post-checkout" && (len(args) < 1 || strings.Trim(args[0], "0") != "") {
		return // a branch switch or a file checkout: nothing to do, and fast
	}
	done := make(chan string, 1)
	go func() { done <- handle(name, o) }()
	select {
	case msg := <-done:
		if msg != "" {
			fmt.Fprintf(o.Stderr, "memsync: warning: %s hook: %s\n", name, msg)
		}
	case <-time.After(o.Timeout):
		// Every write memsync makes is atomic (temp file and rename), so
		// leaving one unfinished is safe; a ref update under way is let
		// finish (briefly: the hook stays bounded), so that it leaves no
		// lock file behind.
		history.Settle(time.Second)
		fmt.Fprintf(o.Stderr, "memsync: warning: %s hook: gave up after %s; the memory is unchanged by it\n", name, o.Timeout)
	}
}

// handle does the hook's work and returns the warning to print, if any.
func handle(name string, o Options) string {
	r, err := worktree.Discover(o.Dir)
	if err != nil {
		return err.Error()
	}
	switch name {
	case "post-commit", "post-merge", "post-rewrite":
		return snapshot(r, name, o)
	case "post-checkout":
		if _, err := os.Stat(r.Home); err != nil || !r.IsSecondary() {
			return "" // the primary, or a repository without memory
		}
		if _, err := worktree.Link(r, &memfile.Store{Home: r.Home, LockTimeout: o.LockTimeout}, r.WorkTree); err != nil {
			return "link the new worktree's memory: " + err.Error() + " (run 'memsync worktree doctor')"
		}
	}
	return ""
}

func snapshot(r *worktree.Repo, hook string, o Options) string {
	store := &memfile.Store{Home: r.Home, LockTimeout: o.LockTimeout}
	h := history.Open(r, store)
	res, err := h.Take("", h.CurrentProvenance(hook))
	if err != nil {
		return "snapshot skipped: " + err.Error()
	}
	if n := len(res.Problems); n > 0 {
		return fmt.Sprintf("%s has %d problem(s) (first: %s); snapshotted as it is; 'memsync list' shows them",
			store.Path(), n, res.Problems[0])
	}
	return ""
}
