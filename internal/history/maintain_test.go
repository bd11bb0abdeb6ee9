package history

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/internal/store"
	"github.com/memsync/memsync/internal/testgit"
	"github.com/memsync/memsync/memfile"
)

// packCount is how many packs the repository at dir holds.
func packCount(t *testing.T, dir string) int {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return len(packs)
}

// expectWhole checks that every snapshot in texts (hash → the active file
// it holds) is reachable from the ref and holds its file, and that git
// fsck finds nothing wrong.
func expectWhole(t *testing.T, dir string, texts map[string]string) {
	t.Helper()
	testgit.Git(t, dir, "fsck", "--strict", "--no-dangling", "--no-progress")
	reach := map[string]bool{}
	for _, c := range strings.Fields(testgit.Git(t, dir, "rev-list", Ref)) {
		reach[c] = true
	}
	for c, text := range texts {
		if !reach[c] {
			t.Fatalf("snapshot %s is no longer on %s", c, Ref)
		}
		if got := testgit.Show(t, dir, c+":memories.md"); got != text {
			t.Fatalf("snapshot %s holds %q, want %q", c, got, text)
		}
	}
}

// TestMaintainPacks: snapshots taken one after another leave at most
// PackLimit+1 packs, and the commit-graph holds every
// snapshot; nothing is lost (git fsck clean, every snapshot whole).
func TestMaintainPacks(t *testing.T) {
	h, dir := testRepo(t)
	texts := map[string]string{}
	var b strings.Builder
	b.WriteString(memfile.Header + "\n")
	for i := range 40 {
		fmt.Fprintf(&b, "\n## Pattern: lesson %d\n- ID: id%04d\n- Content: %s\n", i, i, strings.Repeat("words ", 50))
		write(t, h.Store.Path(), b.String())
		texts[take(t, h, "").Snapshot.Commit] = b.String()
		if n := packCount(t, dir); n > PackLimit+1 {
			t.Fatalf("snapshot %d: %d packs", i+1, n)
		}
	}
	// The commit-graph holds the snapshots up to the last repack: with it
	// alone (no commit objects read), git finds the generation numbers.
	chain := filepath.Join(dir, ".git", "objects", "info", "commit-graphs", "commit-graph-chain")
	if _, err := os.Stat(chain); err != nil {
		t.Fatalf("no commit-graph: %v", err)
	}
	testgit.Git(t, dir, "commit-graph", "verify")
	out := testgit.Git(t, dir, "-c", "core.commitGraph=true", "log", "--format=%H", Ref)
	if n := len(strings.Fields(out)); n != 40 {
		t.Fatalf("%d snapshots on the ref", n)
	}
	expectWhole(t, dir, texts)
}

// TestMaintainPackGone: a pack git gc removed between Maintain's listing
// and its git pack-objects (pack-objects then fails: "packfile ... cannot
// be accessed") is no error: gc packs what it took. It failed Maintain, as
// TestMaintainRacesGC showed now and then.
func TestMaintainPackGone(t *testing.T) {
	h, dir := testRepo(t)
	h.Detach = func(string) error { return nil } // the snapshots leave their packs
	var b strings.Builder
	b.WriteString(memfile.Header + "\n")
	for i := range PackLimit + 3 {
		fmt.Fprintf(&b, "\n## Pattern: lesson %d\n- ID: id%04d\n- Content: %s\n", i, i, strings.Repeat("words ", 50))
		write(t, h.Store.Path(), b.String())
		take(t, h, "")
	}
	packs, err := listPacks(filepath.Join(dir, ".git", "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	roll, _ := rollup(packs)
	if len(roll) < 2 || !h.Due() {
		t.Fatalf("%d packs, %d to roll up: nothing for Maintain to do", len(packs), len(roll))
	}
	// As git gc's repack removes a pack it packed again, after Maintain
	// listed them.
	for _, ext := range []string{".idx", ".pack"} {
		if err := os.Remove(roll[0].base + ext); err != nil {
			t.Fatal(err)
		}
	}
	if made, err := h.packTogether(context.Background(), filepath.Join(dir, ".git", "objects", "pack"), roll); made != "" || err != nil {
		t.Fatalf("packing with a pack gone: %q, %v", made, err)
	}
}

// TestMaintainRacesGC: snapshots and their repacks from two goroutines,
// while git gc --prune=now runs again and again in another process, lose
// no snapshot: git fsck is clean and every snapshot holds its file.
func TestMaintainRacesGC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git gc in a loop")
	}
	h, dir := testRepo(t)
	write(t, h.Store.Path(), memfile.Header+"\n")
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	gcDone := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			cmd := exec.CommandContext(ctx, "git", "gc", "--prune=now", "--quiet")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil && ctx.Err() == nil {
				gcDone <- fmt.Errorf("git gc: %w\n%s", err, out)
				return
			}
		}
		gcDone <- nil
	}()
	var mu sync.Mutex
	texts := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hw := Open(h.Repo, store.Open(h.Repo.Home))
			for i := range 30 {
				if err := hw.Store.WithLock(func() error {
					f, err := os.OpenFile(hw.Store.Path(), os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(f, "\n## Pattern: w%d lesson %d\n- ID: w%did%04d\n- Content: %s\n", w, i, w, i, strings.Repeat("x ", 40))
					if cerr := f.Close(); err == nil {
						err = cerr
					}
					return err
				}); err != nil {
					errs <- err
					return
				}
				res, err := hw.Take(context.Background(), "", hw.CurrentProvenance(""))
				if err != nil {
					errs <- err
					return
				}
				if res.Created {
					// What was snapshotted: the snapshot's own file (the
					// other writer may have changed the live one since).
					text, err := testgit.ShowErr(dir, nil, res.Snapshot.Commit+":memories.md")
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					texts[res.Snapshot.Commit] = text
					mu.Unlock()
				}
				if _, err := hw.Maintain(context.Background(), 10*time.Millisecond); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	stop()
	if err := <-gcDone; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	take(t, h, "")
	expectWhole(t, dir, texts)
}

// TestRollup: the roll-up git 2.39's --geometric=2 chooses (its
// documented example, 1 2 2 4 32 → 9 32), and none for a progression.
func TestRollup(t *testing.T) {
	packsOf := func(counts ...uint32) []pack {
		var out []pack
		for _, c := range counts {
			out = append(out, pack{objects: c, bytes: int64(c)})
		}
		return out
	}
	for _, c := range []struct {
		packs []pack
		want  int64
	}{
		{packsOf(2, 1, 2, 4, 32), 9},
		{packsOf(1, 2, 4, 8), 0},
		{packsOf(5, 5, 5, 5, 1000), 20},
		{packsOf(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3000), 10},
		{packsOf(7), 0},
		{nil, 0},
	} {
		if _, got := rollup(c.packs); got != c.want {
			t.Errorf("%v: %d, want %d", c.packs, got, c.want)
		}
	}
}

// TestMaintainSoonDetaches: once snapshots leave packing due, Take hands it
// to Detach (given the common git dir) and returns with the packs as they
// are; with git's maintenance.autoDetach (else gc.autoDetach) false, or a
// Detach that fails, Take packs before it returns, as git's gc --auto does.
func TestMaintainSoonDetaches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		config   [][2]string
		fail     bool
		detached bool
	}{
		{"detached", nil, false, true},
		{"maintenance.autoDetach=false", [][2]string{{"maintenance.autoDetach", "false"}, {"gc.autoDetach", "true"}}, false, false},
		{"gc.autoDetach=false", [][2]string{{"gc.autoDetach", "false"}}, false, false},
		{"maintenance.autoDetach=true over gc", [][2]string{{"gc.autoDetach", "false"}, {"maintenance.autoDetach", "true"}}, false, true},
		{"Detach failed", nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, dir := testRepo(t)
			for _, kv := range tc.config {
				testgit.Git(t, dir, "config", kv[0], kv[1])
			}
			var calls []string
			h.Detach = func(gitDir string) error {
				calls = append(calls, gitDir)
				if tc.fail {
					return fmt.Errorf("no process")
				}
				return nil
			}
			var b strings.Builder
			b.WriteString(memfile.Header + "\n")
			for i := range PackLimit + 3 {
				fmt.Fprintf(&b, "\n## Pattern: lesson %d\n- ID: id%04d\n- Content: %s\n", i, i, strings.Repeat("words ", 50))
				write(t, h.Store.Path(), b.String())
				take(t, h, "")
			}
			if tc.detached {
				if len(calls) == 0 || calls[0] != h.Repo.CommonDir {
					t.Fatalf("Detach calls %q, want the common dir %s", calls, h.Repo.CommonDir)
				}
				if n := packCount(t, dir); n <= PackLimit {
					t.Fatalf("%d packs: Take packed itself though Detach took the work", n)
				}
				if n, err := h.Maintain(context.Background(), time.Second); err != nil || n < 2 {
					t.Fatalf("Maintain rolled %d packs (%v), want the small ones", n, err)
				}
				if h.Due() {
					t.Fatal("still due after Maintain")
				}
				return
			}
			if tc.fail != (len(calls) > 0) {
				t.Fatalf("Detach calls %q", calls)
			}
			if n := packCount(t, dir); n > PackLimit+1 {
				t.Fatalf("%d packs: Take left the packing undone", n)
			}
		})
	}
}
