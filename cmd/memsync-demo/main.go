// Command memsync-demo runs memsync's main job end to end on a throwaway
// repository: a primary worktree and three linked worktrees, one parallel
// writer loop in each (real memsync processes), one shared memory.
//
//	go run ./cmd/memsync-demo          # from a clone of memsync
//	go run ./cmd/memsync-demo -keep    # keep the repository to look around
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	keep := flag.Bool("keep", false, "keep the throwaway repository")
	adds := flag.Int("adds", 25, "entries each writer adds")
	flag.Parse()
	if err := demo(*keep, *adds); err != nil {
		fmt.Fprintln(os.Stderr, "memsync-demo: error:", err)
		os.Exit(1)
	}
}

func demo(keep bool, adds int) error {
	tmp, err := os.MkdirTemp("", "memsync-demo-")
	if err != nil {
		return err
	}
	if !keep {
		defer func() {
			// A background hook may still be finishing in there.
			for i := 0; i < 40 && os.RemoveAll(tmp) != nil; i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	bin := filepath.Join(tmp, "bin", "memsync")
	step("build memsync")
	if err := run("", "go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, "./cmd/memsync"); err != nil {
		return fmt.Errorf("run me from the root of a memsync clone: %w", err)
	}
	repo := filepath.Join(tmp, "project")
	ms := func(dir string, args ...string) error { return run(dir, bin, args...) }

	step("a repository with one commit, and its memory")
	if err := run(tmp, "git", "init", "-q", repo); err != nil {
		return err
	}
	if err := run(repo, "git", "-c", "user.name=demo", "-c", "user.email=demo@memsync.invalid", "commit", "-q", "--allow-empty", "-m", "init"); err != nil {
		return err
	}
	if err := ms(repo, "init"); err != nil {
		return err
	}
	if err := ms(repo, "hooks", "install"); err != nil {
		return err
	}

	step("three linked worktrees, one per agent loop: memsync worktree add links each to the primary's memory")
	dirs := []string{repo}
	for i := 1; i <= 3; i++ {
		wt := filepath.Join(tmp, ".worktrees", fmt.Sprintf("loop-%d", i))
		if err := ms(repo, "worktree", "add", wt, "-b", fmt.Sprintf("loop-%d", i)); err != nil {
			return err
		}
		dirs = append(dirs, wt)
	}
	if err := run(dirs[1], "ls", "-l", ".agent/memories.md"); err != nil {
		return err
	}

	step(fmt.Sprintf("4 writers in parallel, %d 'memsync add' processes each", adds))
	var wg sync.WaitGroup
	errs := make(chan error, len(dirs))
	for w, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < adds; j++ {
				content := fmt.Sprintf("loop %d learned: retry the flaky step %d with backoff", w, j)
				cmd := exec.Command(bin, "add", content, "-t", "pattern", "--tags", fmt.Sprintf("loop-%d", w))
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%s: %w\n%s", dir, err, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}

	step("one shared memory: every entry, from every worktree")
	out, err := exec.Command(bin, "-C", repo, "list").Output()
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	fmt.Printf("%d entries (want %d); the last three:\n%s\n", len(lines), adds*len(dirs), strings.Join(lines[max(0, len(lines)-3):], "\n"))
	if len(lines) != adds*len(dirs) { // the demo stays below the default max count (1000)
		return fmt.Errorf("lost entries: %d of %d", len(lines), adds*len(dirs))
	}
	if err := ms(dirs[3], "search", "flaky backoff", "--tags", "loop-2", "--limit", "3"); err != nil {
		return err
	}

	step("each loop records a last learning and commits: the post-commit hook snapshots the memory onto refs/memsync/snapshots, in the background")
	for w, d := range dirs {
		if err := exec.Command(bin, "-C", d, "add", fmt.Sprintf("loop %d finished: the flaky step needs backoff", w), "-t", "fix").Run(); err != nil {
			return err
		}
		if err := run(d, "git", "-c", "user.name=demo", "-c", "user.email=demo@memsync.invalid", "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("loop %d done", w)); err != nil {
			return err
		}
	}
	if err := checkSnapshots(repo, len(dirs)); err != nil {
		return err
	}
	if err := ms(repo, "log", "-n", "3"); err != nil {
		return err
	}

	step("every worktree shares the memory")
	if err := ms(repo, "worktree", "list"); err != nil {
		return err
	}
	if err := ms(repo, "worktree", "doctor"); err != nil { // exits non-zero while a worktree does not share it
		return err
	}

	step("git status is clean in every worktree")
	for _, d := range dirs {
		st, err := exec.Command("git", "-C", d, "status", "--porcelain").Output()
		if err != nil {
			return err
		}
		if len(st) > 0 {
			return fmt.Errorf("git status in %s is not clean:\n%s", d, st)
		}
		fmt.Printf("%-40s clean\n", strings.TrimPrefix(d, tmp+"/"))
	}
	if keep {
		fmt.Println("\nkept:", repo)
		fmt.Printf("look at what it made (the memory, each loop's entries, the snapshots):\n  %s -C %s ui\n", bin, repo)
	} else {
		fmt.Println("\nto look at what it made in a page: go run ./cmd/memsync-demo -keep, then the memsync ui command it prints")
	}
	return nil
}

// checkSnapshots waits for the post-commit hooks, which snapshot in the
// background, and fails unless the newest snapshot comes to hold every
// loop's last learning within 30 s, in at most one snapshot per commit (a
// hook that finds the memory as the last snapshot has it makes none).
func checkSnapshots(repo string, loops int) error {
	var missing string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		mem, err := snapshotFile(repo, "refs/memsync/snapshots:memories.md")
		if err != nil {
			missing = "a snapshot: " + err.Error()
			continue
		}
		missing = ""
		for w := range loops {
			if want := fmt.Sprintf("loop %d finished: the flaky step needs backoff", w); !strings.Contains(string(mem), want) {
				missing = fmt.Sprintf("%q in the newest snapshot", want)
			}
		}
		if missing == "" {
			break
		}
	}
	if missing != "" {
		return fmt.Errorf("after %d commits and 30 s, no %s: the post-commit hook did not snapshot", loops, missing)
	}
	out, err := exec.Command("git", "-C", repo, "rev-list", "--count", "refs/memsync/snapshots").Output()
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || n < 1 || n > loops {
		return fmt.Errorf("%s snapshots after %d commits", strings.TrimSpace(string(out)), loops)
	}
	return nil
}

// snapshotFile rebuilds a memory file a snapshot holds ("REF:memories.md")
// with plain git, as docs/reliability.md shows: its chunks, in the tree's order.
func snapshotFile(repo, object string) ([]byte, error) {
	list, err := exec.Command("git", "-C", repo, "cat-file", "-p", object).Output()
	if err != nil {
		return nil, err
	}
	var file []byte
	for _, l := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(l) // MODE TYPE HASH NAME
		if len(f) != 4 || f[1] != "blob" {
			return nil, fmt.Errorf("%s holds %q", object, l)
		}
		chunk, err := exec.Command("git", "-C", repo, "cat-file", "blob", f[2]).Output()
		if err != nil {
			return nil, err
		}
		file = append(file, chunk...)
	}
	return file, nil
}

func step(s string) { fmt.Printf("\n== %s\n", s) }

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
	return cmd.Run()
}
