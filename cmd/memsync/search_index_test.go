package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memsync/memsync/memfile"
)

// searchFound runs memsync search QUERY --json --limit 0 in dir and returns
// the entries found, by content.
func searchFound(tb testing.TB, env []string, dir, query string) map[string]string {
	tb.Helper()
	var hits []struct{ ID, Title, Content string }
	out := memsyncIn(tb, env, dir, "search", query, "--json", "--limit", "0")
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		tb.Fatalf("search %q: %v\n%s", query, err, out)
	}
	found := map[string]string{}
	for _, h := range hits {
		found[h.Content] = h.Title
	}
	return found
}

// TestSearchIndexSeesRalph: ralph rewrites the memory file in place on every
// add and delete; each memsync search after it sees exactly what ralph
// left, whether the index can add ralph's entries after the part it covers
// or must be built again.
func TestSearchIndexSeesRalph(t *testing.T) {
	env := testGitEnv(t)
	repo := newRepo(t, env)
	memsyncIn(t, env, repo, "init", "--ralph")
	memsyncIn(t, env, repo, "add", "memsync: the retry helper caps attempts", "-t", "pattern")
	if got := searchFound(t, env, repo, "retry"); len(got) != 1 {
		t.Fatalf("search: %v", got)
	}
	idx := filepath.Join(repo, ".git", "memsync", "state", "search.idx")
	if _, err := os.Stat(idx); err != nil {
		t.Fatalf("no search index after a search: %v", err)
	}
	var ids []string
	for i := range 6 {
		content := fmt.Sprintf("ralph %d: the retry budget is %d", i, 10+i)
		ids = append(ids, strings.TrimSpace(ralphIn(t, env, repo, "add", content, "-t", "fix", "--format", "quiet")))
		got := searchFound(t, env, repo, "budget")
		if len(got) != i+1 || got[content] == "" {
			t.Fatalf("after ralph add %d, search finds %v", i, got)
		}
	}
	ralphIn(t, env, repo, "delete", ids[2])
	got := searchFound(t, env, repo, "budget")
	if len(got) != 5 || got["ralph 2: the retry budget is 12"] != "" {
		t.Fatalf("after ralph delete, search finds %v", got)
	}
	memsyncIn(t, env, repo, "add", "memsync again: the retry budget is per host", "-t", "fix")
	if got := searchFound(t, env, repo, "budget"); len(got) != 6 {
		t.Fatalf("after memsync add, search finds %v", got)
	}
	expectClean(t, env, repo)
}

// TestSearchIndexHandEdit: an edit by hand that keeps the file's size, with
// its modification time set back after it, is seen by the next search,
// near the end of the file (where the stamp's checksum covers it) and in
// its middle (where its change time does).
func TestSearchIndexHandEdit(t *testing.T) {
	env := testGitEnv(t)
	repo, link := repoWithMemory(t, env, 96<<10)
	memsyncIn(t, env, repo, "search", "retry") // moves the file into the git dir, builds the index
	file := filepath.Join(repo, ".git", "memsync", "memories.md")
	if target, err := filepath.EvalSymlinks(link); err != nil || target != file {
		t.Fatalf("%s -> %s, %v", link, target, err)
	}
	f := memfile.Parse(mustRead(t, file))
	for _, k := range []int{len(f.Entries) - 1, len(f.Entries) / 2} {
		memsyncIn(t, env, repo, "search", "anything") // the index matches the file now
		e := f.Entries[k]
		word := strings.Fields(e.Content)[0]
		edit := strings.Repeat("q", len(word)-1) + "z"
		if len(word) < 3 {
			t.Skip("short word")
		}
		data := mustRead(t, file)
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		old := "- Content: " + e.Content
		i := bytes.Index(data, []byte(old))
		if i < 0 {
			t.Fatalf("entry %d not found", k)
		}
		copy(data[i+len("- Content: "):], edit)
		// Edit in place, as an editor that writes the file over does.
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if fi2, _ := os.Stat(file); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
			t.Fatal("size or time changed")
		}
		got := searchFound(t, env, repo, edit)
		if len(got) != 1 {
			t.Fatalf("entry %d of %d edited by hand: search %q finds %v", k, len(f.Entries), edit, got)
		}
		// A stale index would still rank the entry for the word it lost.
		for content, title := range searchFound(t, env, repo, word) {
			if title == e.Title && strings.HasPrefix(content, edit) && !strings.Contains(strings.ToLower(content+" "+title), strings.ToLower(word)) {
				t.Fatalf("entry %d of %d edited by hand: search %q still finds it: %q", k, len(f.Entries), word, content)
			}
		}
		f = memfile.Parse(data)
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// TestSearchWhileAdding: searches run while 4 processes add 25 entries each;
// no search fails, and every entry a search returns is whole (its title and
// content are those one add wrote); at the end a search finds every entry.
func TestSearchWhileAdding(t *testing.T) {
	env := testGitEnv(t)
	repo, _ := repoWithMemory(t, env, 64<<10)
	memsyncIn(t, env, repo, "search", "retry")
	const writers, adds = 4, 25
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	wg.Go(func() {
		errs <- inParallel(env, []string{repo, repo, repo, repo}, adds, "", func(w, i int) [][]string {
			return [][]string{{memsyncBinary(t), "add", fmt.Sprintf("zebralesson %d-%d complete", w, i), "-t", "fix", "--title", fmt.Sprintf("zebra %d-%d", w, i)}}
		})
		close(done)
	})
	searches := 0
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		default:
		}
		for content, title := range searchFound(t, env, repo, "zebralesson") {
			n, ok := strings.CutPrefix(title, "zebra ")
			if !ok || content != "zebralesson "+n+" complete" {
				t.Fatalf("a search returned a torn entry: title %q, content %q", title, content)
			}
		}
		searches++
	}
	wg.Wait()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if got := searchFound(t, env, repo, "zebralesson"); len(got) != writers*adds {
		t.Fatalf("after the adds, search finds %d of %d", len(got), writers*adds)
	}
	if searches < 3 {
		t.Fatalf("only %d searches ran during the adds", searches)
	}
	t.Logf("%d searches during %d adds", searches, writers*adds)
}

// TestSearchIndexFollowsDelete: a delete (a rewrite of the file) brings the
// search index up to date under the writers' lock, so the next search
// reads it, and finds the entry gone.
func TestSearchIndexFollowsDelete(t *testing.T) {
	env := testGitEnv(t)
	repo, file := repoWithMemory(t, env, 64<<10)
	// Written before any index exists, so the one the search builds holds
	// it (an add would find an index built before its append, which keeps
	// the entry in its tail, and a delete of it leaves the index whole).
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n## Fix: the quokka cache needs a warm-up\n- Tags: cache\n- Date: 2026-11-22\n- ID: quokka1warm0\n- Content: the quokka cache needs a warm-up\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var added []struct{ ID string }
	if err := json.Unmarshal([]byte(memsyncIn(t, env, repo, "search", "quokka", "--json")), &added); err != nil || len(added) != 1 {
		t.Fatalf("search: %v %v", added, err)
	}
	idx := filepath.Join(repo, ".git", "memsync", "state", "search.idx")
	before, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	memsyncIn(t, env, repo, "delete", added[0].ID)
	after, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Fatal("the delete left the search index as it was")
	}
	if got := searchFound(t, env, repo, "quokka"); len(got) != 0 {
		t.Fatalf("after the delete, search finds %v", got)
	}
	if again, _ := os.Stat(idx); !os.SameFile(after, again) {
		t.Fatal("the search after the delete built the index again")
	}
	// An entry added since the index was built (in its tail) and deleted:
	// gone from the search too.
	id := strings.TrimSpace(memsyncIn(t, env, repo, "add", "the wombat queue drains at night", "-t", "fix"))
	if got := searchFound(t, env, repo, "wombat"); len(got) != 1 {
		t.Fatalf("after the add, search finds %v", got)
	}
	memsyncIn(t, env, repo, "delete", id)
	if got := searchFound(t, env, repo, "wombat"); len(got) != 0 {
		t.Fatalf("after the second delete, search finds %v", got)
	}
}
